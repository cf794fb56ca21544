"""The commands of the validate room: `plan` (how many labels), `sample` (which pairs) and `label` (a local page)."""
from __future__ import annotations

import argparse
import sys

from attrib_audit.cli.convert import config_from_args, target_from_args
from attrib_audit.cli.options import (
    add_judge_args, add_model_args, add_target_args, float_list, int_list, n_boot_int, open_unit, positive_float,
    positive_int, seed_int,
)
from attrib_audit.errors import UsageError
from attrib_audit.report.console import format_gate_plan, format_plan
from attrib_audit.validate.label import DEFAULT_PORT, export, serve
from attrib_audit.validate.plan import DEFAULT_GRID, GRID_RANGE, TARGET_POWER, PlanOptions, plan
from attrib_audit.validate.sample import STRATEGIES, sample


def _list(text: str | None, cast=str) -> tuple | None:
    return tuple(cast(x.strip()) for x in text.split(",")) if text else None


def cmd_plan(args: argparse.Namespace) -> int:
    opts = PlanOptions(results=args.results, slice=args.slice, scorers=_list(args.scorers), auroc=args.auroc,
                       prevalence=args.prevalence, corr=args.corr, half_width=args.half_width, detect=args.detect,
                       pairs_per_cluster=args.pairs_per_cluster, icc=args.icc,
                       grid=tuple(sorted(set(args.grid))) if args.grid else DEFAULT_GRID,
                       sims=args.sims, n_boot=args.n_boot, seed=args.seed, gate=target_from_args(args), delta=args.delta)
    plans = plan(opts)
    if opts.gate is not None:
        print("\n\n".join(format_gate_plan(p) for p in plans))
        return 0
    for p in plans:
        print(format_plan(p) + "\n")
    if len(plans) > 1:
        recs = [p["recommended_n"] for p in plans]
        need = None if None in recs else max(recs)
        print(f"overall: {'label ' + str(need) + ' pairs (the most any audited slice needs)' if need else 'some slice needs more than the grid allows'}")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    config = None if args.strategy == "random" else config_from_args(args)
    s = sample(args.data, args.out, args.n, strategy=args.strategy, seed=args.seed, strata=args.strata,
               cluster_by=args.cluster_by, config=config, log=lambda m: print(m, file=sys.stderr))
    pi = s.inclusion_prob[s.chosen]
    print(f"sampled {s.chosen.size} of {s.pool_size} pairs ({args.strategy}{', by ' + args.cluster_by if args.cluster_by else ''}); "
          f"inclusion probabilities {pi.min():.3g}–{pi.max():.3g}, weights sum to {(1.0 / pi).sum():.0f} "
          f"(the pool size, in expectation)\nto label: {s.out}\nnext: attrib-audit label {s.out} --annotator YOUR_NAME")
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    if args.export:
        s = export(args.data, args.export, args.annotator)
        print(f"exported {s['written']} labels by {s['annotator']} to {s['out']} ({s['skipped']} skipped and "
              f"{s['unlabelled']} not yet labelled left out)")
        if s["skipped"] or s["unlabelled"]:
            print("note: pairs left out act like non-response; the weights assume they resemble the labelled ones")
        if "agreement_dir" in s:
            a, b = s["annotators"][:2]
            print(f"{len(s['annotators'])} annotators: attrib-audit agree --results {s['agreement_dir']} --a {a} --b {b}")
        print(f"next: attrib-audit audit {s['out']} --construct attribution --out audit-target, then "
              "attrib-audit select --results audit-target")
        return 0
    if not args.annotator:
        raise UsageError("give --annotator NAME (your labels are stored under it)")
    try:
        server = serve(args.data, args.annotator, args.port)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"labelling {len(server.pool.ids)} pairs as {server.annotator}; labels are saved to {server.store.path} after "
          f"every key press\nopen {server.url}\n(Ctrl-C stops the server; rerun to resume)", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("stopped; every label is saved", file=sys.stderr)
    finally:
        server.server_close()
    return 0


def add_label(sub) -> None:
    p = sub.add_parser("label", help="label sampled pairs in a local web page (127.0.0.1); --export writes them out")
    p.add_argument("data", help="pairs to label (the JSONL `attrib-audit sample` wrote, or any pair file)")
    p.add_argument("--annotator", help="your name; labels are stored per annotator")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free)")
    p.add_argument("--export", metavar="OUT.jsonl", help="write the labelled pairs (our schema) instead of serving")
    p.set_defaults(func=cmd_label)


def add_plan(sub) -> None:
    p = sub.add_parser("plan", help="how many human labels the target dataset needs (simulated with the audit's bootstrap)")
    p.add_argument("--results",
                   help="an earlier `attrib-audit audit --out` folder: simulate from its score distributions")
    p.add_argument("--slice", help="plan for this slice of --results only (default: every two-class slice)")
    p.add_argument("--scorers", help="candidate metrics from --results (default: all audited)")
    p.add_argument("--auroc", type=float_list(0.5, 1.0, high_open=True),
                   help="assumed AUROC of the best metric (and others, comma-separated) instead of --results")
    p.add_argument("--prevalence", type=open_unit,
                   help="share of supported pairs (default with --results: the slice's)")
    p.add_argument("--corr", type=float, default=0.5,
                   help="with --auroc: correlation of the metrics' scores (default 0.5)")
    p.add_argument("--half-width", type=positive_float,
                   help="target 95%% CI half-width of the best metric's AUROC, e.g. 0.05")
    p.add_argument("--detect", type=positive_float,
                   help=f"AUROC gap between the best metric and the runner-up to detect with power {TARGET_POWER}, e.g. 0.05")
    p.add_argument("--pairs-per-cluster", type=positive_int,
                   help="pairs per question/document in your data (default: the audit's)")
    p.add_argument("--icc", type=float,
                   help="intra-cluster correlation of scores (default: estimated from the audit, or 0)")
    p.add_argument("--grid", type=int_list(*GRID_RANGE), help="sample sizes to simulate, comma-separated, each in "
                   f"[{GRID_RANGE[0]}, {GRID_RANGE[1]}] (default " + ",".join(map(str, DEFAULT_GRID)) + ")")
    p.add_argument("--sims", type=positive_int, default=200, help="simulated labelled samples per n (default 200)")
    p.add_argument("--n-boot", type=n_boot_int, default=300,
                   help="bootstrap resamples per simulated sample (default 300)")
    p.add_argument("--seed", type=seed_int, default=0)
    add_target_args(p, required=False)  # instead of an AUROC target: labels that certify a gate threshold
    p.set_defaults(func=cmd_plan)


def add_sample(sub) -> None:
    p = sub.add_parser("sample", help="choose which unlabelled pairs to label; records each pair's inclusion probability")
    p.add_argument("data",
                   help="unlabelled pairs (JSONL/CSV/Parquet with claim, evidence; id, question, group optional)")
    p.add_argument("--n", type=positive_int, required=True, help="pairs to label")
    p.add_argument("--out", required=True, help="output JSONL of the pairs to label")
    p.add_argument("--strategy", choices=STRATEGIES, default="disagreement",
                   help="random; stratified over the metrics' score quantiles; disagreement over-samples pairs the "
                        "metrics rank differently (default)")
    p.add_argument("--scorers", default="lexical,minilm", help="metrics that steer stratified/disagreement sampling")
    p.add_argument("--strata", type=positive_int, default=4,
                   help="score quantiles per metric for --strategy stratified")
    p.add_argument("--cluster-by", metavar="FIELD",
                   help="sample whole clusters, e.g. question or group (all pairs of a question together)")
    p.add_argument("--seed", type=seed_int, default=0)
    add_model_args(p)
    add_judge_args(p)
    p.set_defaults(func=cmd_sample)
