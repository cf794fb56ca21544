"""`--score-col` / `--scores`: audit a metric the user computed elsewhere."""
from __future__ import annotations

import argparse
from typing import Callable

from attrib_audit.external.exports import SCORE_FORMATS
from attrib_audit.external.sources import ScoreSource


def add_precomputed_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--score-col", action="append", default=[], metavar="NAME=COL[:lower]",
                   help="audit a numeric column of the data file as scorer NAME (repeatable); ':lower' when lower "
                        "values mean better supported")
    p.add_argument("--scores", action="append", default=[], metavar="FILE[:COLS]",
                   help="join a score file on id (or on the scored text for evaluator exports); each numeric column, "
                        "or the listed COL / NAME=COL[:lower] entries, becomes a scorer (repeatable)")
    p.add_argument("--scores-format", choices=SCORE_FORMATS, default="auto",
                   help="format of --scores files: table (id + columns), ragas, deepeval, trulens (default: detect)")


def sources_from_args(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, ScoreSource]:
    """The precomputed scorers the flags ask for, as plain sources (a `--scores` file is read to list its columns)."""
    from attrib_audit.data.errors import DataError
    from attrib_audit.external.sources import parse_score_col, parse_scores_arg

    sources = [parse_score_col(t) for t in getattr(args, "score_col", [])]
    for text in getattr(args, "scores", []):
        sources += parse_scores_arg(text, args.scores_format, log)[0]
    out: dict[str, ScoreSource] = {}
    for s in sources:
        if s.name in out:
            raise DataError(f"two precomputed scorers are named {s.name!r}: rename one with NAME=COLUMN")
        out[s.name] = s
    return out
