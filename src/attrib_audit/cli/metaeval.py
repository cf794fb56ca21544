"""`attrib-audit convert`: a published meta-evaluation layout (SummEval, FRANK) to a file `audit` reads."""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

from attrib_audit.data.metaeval import ANNOTATORS, ASPECTS, Converted, frank_rows, summeval_rows
from attrib_audit.files.outdir import write_text_atomic


def _flag_name(column: str) -> str:
    """A --score-col NAME for a native metric column ("BertScore P Art" -> bertscore_p_art)."""
    return re.sub(r"[^0-9a-z]+", "_", column.lower()).strip("_") or "metric"


def audit_hint(out: Path, conv: Converted) -> str:
    """The audit command line that reads the converted file (one flag a line): the rating, each metric's column."""
    names: dict[str, str] = {}
    for col in conv.score_columns:
        name, k = _flag_name(col), 2
        while name in names:
            name, k = f"{_flag_name(col)}_{k}", k + 1
        names[name] = col
    scores = [f"--score-col {shlex.quote(f'{n}={c}')}" for n, c in names.items()]
    lines = [f"attrib-audit audit {shlex.quote(str(out))} --rating-col rating --out OUT",
             "--scorers lexical" if conv.texts else "--scorers none" + ("" if scores else " --score-col NAME=COLUMN")]
    return " \\\n  ".join(lines + scores)


def cmd_convert(args: argparse.Namespace) -> int:
    if args.action == "summeval":
        conv = summeval_rows(args.file, aspect=args.aspect, annotators=args.annotators, scores=args.scores)
        what = f"{len(conv.rows)} rows (rating = mean {args.annotators} {args.aspect})"
    else:
        conv = frank_rows(args.human, args.metrics)
        what = f"{len(conv.rows)} rows (rating = Factuality; {len(conv.score_columns)} score columns)"
    out = Path(args.out)
    write_text_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in conv.rows))
    for note in conv.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {out}: {what}")
    print(f"audit it with:\n  {audit_hint(out, conv)}")
    return 0


def add_convert(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert", help="turn a published meta-evaluation layout (SummEval, FRANK) into a JSONL file "
                                       "of graded ratings that audit reads")
    csub = p.add_subparsers(dest="action", required=True)
    s = csub.add_parser("summeval", help="SummEval's model_annotations.aligned.jsonl: one row per (article, system), "
                                         "rating = the mean annotation of one aspect")
    s.add_argument("file", help="model_annotations.aligned.jsonl (or the paired file with the article as `text`)")
    s.add_argument("--aspect", choices=ASPECTS, default="consistency", help="the rated aspect (default consistency)")
    s.add_argument("--annotators", choices=ANNOTATORS, default="expert",
                   help="whose ratings are averaged: the 3 experts (default) or the 5 crowd workers")
    s.add_argument("--scores", default="metric_scores_1", metavar="FIELD",
                   help="the scored file's field whose metrics become score columns (default metric_scores_1: "
                        "against the original reference; metric_scores_11: against all eleven)")
    s.add_argument("--out", required=True, metavar="FILE.jsonl", help="where to write the rows")
    f = csub.add_parser("frank", help="FRANK's human_annotations.json + baseline_factuality_metrics_outputs.json, "
                                      "joined on (hash, model_name): rating = Factuality, one score column per metric")
    f.add_argument("human", help="human_annotations.json")
    f.add_argument("metrics", help="baseline_factuality_metrics_outputs.json")
    f.add_argument("--out", required=True, metavar="FILE.jsonl", help="where to write the rows")
    p.set_defaults(func=cmd_convert)
