"""Commands that read an audit folder: `select` (which metric for a new dataset) and `agree` (Cohen's κ)."""
from __future__ import annotations

import argparse
import json

from attrib_audit.audit.agreement import agreement
from attrib_audit.audit.config import DEFAULT_EPS
from attrib_audit.audit.systems import rankers_from_results
from attrib_audit.cli.options import add_n_boot_arg, add_seed_arg, finite_float
from attrib_audit.errors import UsageError
from attrib_audit.files.records import to_record
from attrib_audit.report.console import format_agreement, format_ranker, format_recommendation


def cmd_select(args: argparse.Namespace) -> int:
    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()] if args.scorers else None
    if args.level == "system":
        return select_ranker(args, scorers)
    from attrib_audit.audit.select import (
        select_from_results,  # here: the statistics import scipy, and `--help` must not
    )

    recs = select_from_results(args.results, construct=args.construct, scorers=scorers, eps=args.eps)
    if args.json:
        print(json.dumps([to_record(r) for r in recs], indent=2))
    elif not recs:
        print("no construct with a usable slice in this audit: declare constructs (--construct) and audit again")
    else:
        print("\n\n".join(format_recommendation(r) for r in recs))
    return 0


def select_ranker(args: argparse.Namespace, scorers: list[str] | None) -> int:
    """`select --level system`: per slice, the metric to rank systems with (read from the saved section)."""
    if args.construct:
        raise UsageError("--construct chooses among constructs at --level item; --level system recommends per slice")
    picks = rankers_from_results(args.results, scorers)
    print(json.dumps(to_record(picks), indent=2) if args.json else "\n\n".join(format_ranker(p) for p in picks))
    return 0


def cmd_agree(args: argparse.Namespace) -> int:
    res = agreement(args.results, args.a, args.b, threshold=args.threshold, n_boot=args.n_boot, seed=args.seed)
    print(format_agreement(res))
    print(f"\nagreement: {args.results}/agreement.json")
    return 0


def add_select(sub) -> None:
    p = sub.add_parser("select", help="recommend a metric for a new dataset of a construct, with the regret caveat")
    p.add_argument("--results", required=True,
                   help="an `attrib-audit audit --out` folder (results.json + bootstrap.npz)")
    p.add_argument("--construct", help="only this construct (default: every construct in the audit)")
    p.add_argument("--scorers", help="restrict the candidates, e.g. to the metrics you can afford to run")
    p.add_argument("--eps", type=float, default=DEFAULT_EPS,
                   help=f"regret (AUROC) you accept on a new dataset; verdict 'transfers' needs the selector's CI "
                        f"upper bound below it (default {DEFAULT_EPS})")
    p.add_argument("--json", action="store_true", help="print the recommendations as JSON")
    p.add_argument("--level", choices=("item", "system"), default="item",
                   help="item (default): which metric separates supported from unsupported pairs on a new dataset; "
                        "system: which metric ranks the systems (generators) of each slice as the human labels do")
    p.set_defaults(func=cmd_select)


def add_agree(sub) -> None:
    p = sub.add_parser("agree", help="Cohen's kappa between two raters (judges or 'human') per slice, with CIs")
    p.add_argument("--results", required=True, help="an audit output folder (reads scores.parquet)")
    p.add_argument("--a", required=True, help="first rater: a scorer name or 'human'")
    p.add_argument("--b", required=True, help="second rater: a scorer name or 'human'")
    p.add_argument("--threshold", type=finite_float, default=0.5,
                   help="scorers without a discrete label count as attributable at score >= this (default 0.5)")
    add_n_boot_arg(p)
    add_seed_arg(p)
    p.set_defaults(func=cmd_agree)
