"""Helper for test_engine_crash.py: score synthetic pairs through the cache with a slow, logging scorer.

    python slow_score_script.py CACHE LOG OUT START STOP DELAY

Every batch the scorer scores is appended (its claims, one line per pair) to LOG and fsynced before
the scores are returned, so a test can compare what was scored with what the cache committed.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from attrib_audit.engine import ScoreCache, score_pairs  # noqa: E402
from attrib_audit.scorers.lexical import LexicalScorer  # noqa: E402


def pairs(start: int, stop: int) -> tuple[list[str], list[str]]:
    claims = [f"claim {i} about topic {i % 7}" for i in range(start, stop)]
    evidences = [f"evidence for topic {i % 7} and item {i % 11} " * (1 + i % 3) for i in range(start, stop)]
    return claims, evidences


class SlowLexical(LexicalScorer):
    name = "slow-lexical"
    batch_size = 10

    def __init__(self, log: str, delay: float) -> None:
        self.log, self.delay = log, delay

    @property
    def signature(self) -> str:
        return "slow-lexical:test:v1"

    def score(self, claims, evidences):
        time.sleep(self.delay)
        out = super().score(claims, evidences)
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write("".join(c + "\n" for c in claims))
            fh.flush()
            os.fsync(fh.fileno())
        return out


def main() -> None:
    cache, log, out, start, stop, delay = sys.argv[1:7]
    claims, evidences = pairs(int(start), int(stop))
    with ScoreCache(cache) as c:
        batch, st = score_pairs(SlowLexical(log, float(delay)), claims, evidences, cache=c, quiet=True)
    Path(out).write_text(json.dumps({"scores": batch.scores.tolist(), "n_scored": st.n_scored,
                                     "n_cached": st.n_cached}))


if __name__ == "__main__":
    main()
