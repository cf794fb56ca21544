"""The commands of the validate room: `plan` (how many labels), `sample` (which pairs) and `label` (a local page)."""
from __future__ import annotations

import argparse
import sys

from attrib_audit.cli.convert import config_from_args, target_from_args
from attrib_audit.cli.options import add_judge_args, add_model_args, add_target_args, positive_int, seed_int
from attrib_audit.errors import UsageError
from attrib_audit.external.sources import parse_score_col
from attrib_audit.report.console import format_gate_plan, format_plan
from attrib_audit.validate.label import DEFAULT_PORT, export, serve
from attrib_audit.validate.plan import DEFAULT_GRID, TARGET_POWER, PlanOptions, plan
from attrib_audit.validate.sample import POOL_FIELDS, STRATEGIES, sample


def _list(text: str | None, cast=str) -> tuple | None:
    return tuple(cast(x.strip()) for x in text.split(",")) if text else None


def pool_size(text: str | None) -> int | None:
    """--pool: a count of pairs, or the pool file itself (its rows are counted as `sample` reads them)."""
    if text is None:
        return None
    if text.strip().isdigit():
        return int(text)
    from attrib_audit.validate.sample import read_pool

    return len(read_pool(text).ids)


def cmd_plan(args: argparse.Namespace) -> int:
    opts = PlanOptions(results=args.results, slice=args.slice, scorers=_list(args.scorers), auroc=_list(args.auroc, float),
                       prevalence=args.prevalence, corr=args.corr, half_width=args.half_width, detect=args.detect,
                       pairs_per_cluster=args.pairs_per_cluster, icc=args.icc,
                       grid=tuple(sorted({int(x) for x in args.grid.split(",")})) if args.grid else DEFAULT_GRID,
                       sims=args.sims, n_boot=args.n_boot, seed=args.seed, gate=target_from_args(args),
                       delta=args.delta, pool=pool_size(args.pool))
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
    score_cols = [parse_score_col(t) for t in args.score_col]
    config = None if args.strategy == "random" else config_from_args(args)
    columns = {f: getattr(args, f"{f}_col") for f in POOL_FIELDS if getattr(args, f"{f}_col", None)}
    s = sample(args.data, args.out, args.n, strategy=args.strategy, seed=args.seed, strata=args.strata,
               cluster_by=args.cluster_by, config=config, log=lambda m: print(m, file=sys.stderr),
               score_cols=score_cols, columns=columns)
    pi = s.inclusion_prob[s.chosen]
    print(f"sampled {s.chosen.size} of {s.pool_size} pairs ({args.strategy}{', by ' + args.cluster_by if args.cluster_by else ''}); "
          f"inclusion probabilities {pi.min():.3g}–{pi.max():.3g}, weights sum to {(1.0 / pi).sum():.0f} "
          f"(the pool size, in expectation)\nto label: {s.out}\nnext: attrib-audit label {s.out} --annotator YOUR_NAME")
    return 0


def answer_map(text: str | None) -> dict[str, int]:
    """--label-map for `label --export`: what the page's answers other than supported/not supported mean (0 or 1)."""
    out: dict[str, int] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or value.strip() not in ("0", "1"):
            raise UsageError(f"--label-map {part.strip()!r}: write ANSWER=0 or ANSWER=1, e.g. partial=0")
        out[key.strip()] = int(value.strip())
    unknown = sorted(set(out) - {"partial"})
    if unknown:
        raise UsageError(f"--label-map: the page has no answer {unknown[0]!r} to map (only partial)")
    return out


def next_after_export(s: dict) -> str:
    """The next step after an export, from the exported pairs: their construct, and the pool they are weighted to."""
    constructs = s["constructs"]
    construct = constructs[0] if len(constructs) == 1 else "CONSTRUCT"
    line = f"next: attrib-audit audit {s['out']} --construct {construct} --out audit-target, then " \
           "attrib-audit select --results audit-target"
    if construct == "CONSTRUCT":
        line += " (CONSTRUCT: what the claims are checked for, e.g. attribution or fact-check; `attrib-audit " \
                "datasets` lists them)"
    if s["weighted"]:
        size = f"{s['pool_size']}-pair " if s["pool_size"] else ""
        line += f"\nthe audit weights each pair by 1/inclusion_prob, so its AUROCs describe the {size}pool it was " \
                "sampled from"
    return line


def cmd_label(args: argparse.Namespace) -> int:
    if args.export:
        s = export(args.data, args.export, args.annotator, label_map=answer_map(args.label_map))
        print(f"exported {s['written']} labels by {s['annotator']} to {s['out']} ({s['skipped']} skipped and "
              f"{s['unlabelled']} not yet labelled left out"
              + (f"; {s['partial']} 'partial' answers labelled {answer_map(args.label_map)['partial']}"
                 if s["partial"] else "") + ")")
        if s["skipped"] or s["unlabelled"]:
            print("note: pairs left out act like non-response; the weights assume they resemble the labelled ones")
        if "agreement_dir" in s:
            a, b = s["annotators"][:2]
            print(f"{len(s['annotators'])} annotators: attrib-audit agree --results {s['agreement_dir']} --a {a} --b {b}")
        print(next_after_export(s))
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
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free)")
    p.add_argument("--export", metavar="OUT.jsonl", help="write the labelled pairs (our schema) instead of serving")
    p.add_argument("--label-map", metavar="partial=0|1",
                   help="with --export: the label a 'partial' (partly supported) answer stands for under your "
                        "guidelines; required when there is one (never guessed)")
    p.set_defaults(func=cmd_label)


def add_plan(sub) -> None:
    p = sub.add_parser("plan", help="how many human labels the target dataset needs (simulated with the audit's bootstrap)")
    p.add_argument("--results", help="an earlier `attrib-audit audit --out` folder: simulate from its score distributions")
    p.add_argument("--slice", help="plan for this slice of --results only (default: every two-class slice)")
    p.add_argument("--scorers", help="candidate metrics from --results (default: all audited)")
    p.add_argument("--auroc", help="assumed AUROC of the best metric (and others, comma-separated) instead of --results")
    p.add_argument("--prevalence", type=float, help="share of supported pairs (default with --results: the slice's)")
    p.add_argument("--corr", type=float, default=0.5, help="with --auroc: correlation of the metrics' scores (default 0.5)")
    p.add_argument("--half-width", type=float, help="target 95%% CI half-width of the best metric's AUROC, e.g. 0.05")
    p.add_argument("--detect", type=float,
                   help=f"AUROC gap between the best metric and the runner-up to detect with power {TARGET_POWER}, e.g. 0.05")
    p.add_argument("--pairs-per-cluster", type=int, help="pairs per question/document in your data (default: the audit's)")
    p.add_argument("--icc", type=float, help="intra-cluster correlation of scores (default: estimated from the audit, or 0)")
    p.add_argument("--grid", help="sample sizes to simulate, comma-separated (default "
                                  + ",".join(map(str, DEFAULT_GRID)) + ")")
    p.add_argument("--sims", type=int, default=200, help="simulated labelled samples per n (default 200)")
    p.add_argument("--n-boot", type=positive_int, default=300, help="bootstrap resamples per simulated sample (default 300)")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--pool", metavar="N|FILE",
                   help="the pool the labels come from (its size, or the unlabelled file): the plan never asks for "
                        "more pairs than it holds, and says when the target is out of its reach")
    add_target_args(p, required=False)  # instead of an AUROC target: labels that certify a gate threshold
    p.set_defaults(func=cmd_plan)


def add_sample(sub) -> None:
    p = sub.add_parser("sample", help="choose which unlabelled pairs to label; records each pair's inclusion probability")
    p.add_argument("data", help="unlabelled pairs (JSONL/CSV/Parquet with claim, evidence; id, question, group optional)")
    p.add_argument("--n", type=int, required=True, help="pairs to label")
    p.add_argument("--out", required=True, help="output JSONL of the pairs to label")
    p.add_argument("--strategy", choices=STRATEGIES, default="disagreement",
                   help="random; stratified over the metrics' score quantiles; disagreement over-samples pairs the "
                        "metrics rank differently (default)")
    p.add_argument("--scorers", default="lexical,minilm", help="metrics that steer stratified/disagreement sampling")
    p.add_argument("--score-col", action="append", default=[], metavar="NAME=COL[:lower]",
                   help="a numeric column of the pool as one more steering metric, named NAME (':lower': lower values "
                        "mean better supported); repeatable, as in `audit`")
    for f in POOL_FIELDS:
        p.add_argument(f"--{f}-col", dest=f"{f}_col", metavar="COL", help=f"column holding `{f}`")
    p.add_argument("--strata", type=int, default=4, help="score quantiles per metric for --strategy stratified")
    p.add_argument("--cluster-by", metavar="FIELD",
                   help="sample whole clusters, e.g. question or group (all pairs of a question together)")
    p.add_argument("--seed", type=seed_int, default=0)
    add_model_args(p)
    add_judge_args(p)
    p.set_defaults(func=cmd_sample)
