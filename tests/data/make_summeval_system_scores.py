"""Write tests/data/summeval_system_scores.jsonl: SummEval's labels with four real metric scores, no texts.

    PYTHONPATH=src python tests/data/make_summeval_system_scores.py PATH/TO/summeval_systems.jsonl

Each row keeps system, group, label and label_raw of the source row and adds four scores of its
claim (the system summary) against its evidence (the article), all pure Python:
- lexical: the built-in `lexical` scorer (token-set Jaccard);
- precision1/2/3: the share of the summary's n-gram occurrences (lowercase `\\w+` tokens, as the
  lexical scorer) that occur anywhere in the article: one minus the "novel n-gram" share, a common
  measure of how extractive a summary is.
The articles are CNN/DailyMail news, so the texts stay out of the repo. Prints each scorer's wall time.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from attrib_audit.scorers.lexical import LexicalScorer
from attrib_audit.text.tokenize import tokens

SCORERS = ("lexical", "precision1", "precision2", "precision3")
KEEP = ("system", "group", "label", "label_raw")  # the source id is summeval::<group>::<system>


def ngram_precision(claims: list[str], evidences: list[str], n: int) -> np.ndarray:
    """Share of each claim's n-grams found in its evidence; NaN for a claim shorter than n tokens."""
    seen: dict[str, set] = {}
    out = np.full(len(claims), np.nan)
    for q, (c, e) in enumerate(zip(claims, evidences)):
        if e not in seen:
            t = tokens(e)
            seen[e] = set(zip(*(t[i:] for i in range(n))))
        grams = list(zip(*(tokens(c)[i:] for i in range(n))))
        if grams:
            out[q] = sum(g in seen[e] for g in grams) / len(grams)
    return out


def score(name: str, claims: list[str], evidences: list[str]) -> np.ndarray:
    if name == "lexical":
        return LexicalScorer().score(claims, evidences).scores
    return ngram_precision(claims, evidences, int(name[-1]))


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rows = [json.loads(line) for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines() if line.strip()]
    claims, evidences = [r["claim"] for r in rows], [r["evidence"] for r in rows]
    scores = {}
    for name in SCORERS:
        t0 = time.perf_counter()
        scores[name] = score(name, claims, evidences)
        print(f"{name}: {time.perf_counter() - t0:.3f} s for {len(rows)} pairs, "
              f"{int(np.isnan(scores[name]).sum())} undefined", file=sys.stderr)
    lines = []
    for q, r in enumerate(rows):
        rec = {k: r[k] for k in KEEP} | {"label_raw": round(r["label_raw"], 4)}
        lines.append(json.dumps(rec | {name: round(float(scores[name][q]), 6) for name in SCORERS}) + "\n")
    out = Path(__file__).with_name("summeval_system_scores.jsonl")
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.replace(out)  # whole or not at all
    print(f"wrote {out} ({len(rows)} rows)", file=sys.stderr)


if __name__ == "__main__":
    main()
