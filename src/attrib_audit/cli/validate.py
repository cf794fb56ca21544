"""The commands of the validate room: `plan` (how many labels), `sample` (which pairs) and `label` (a local page)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from attrib_audit.cli.convert import config_from_args, sources_from_args, target_from_args
from attrib_audit.cli.options import (
    add_judge_args,
    add_model_args,
    add_target_args,
    float_list,
    half_open_unit,
    int_list,
    n_boot_int,
    open_unit,
    positive_float,
    positive_int,
    seed_int,
)
from attrib_audit.errors import UsageError
from attrib_audit.external.exports import SCORE_FORMATS
from attrib_audit.external.sources import parse_score_col
from attrib_audit.report.console import format_gate_plan, format_plan
from attrib_audit.report.until_sure import until_sure_plan_text, until_sure_text
from attrib_audit.validate.label import DEFAULT_PORT, export, serve
from attrib_audit.validate.plan import DEFAULT_GRID, GRID_RANGE, TARGET_POWER, GatePlan, PlanOptions, SamplePlan, plan
from attrib_audit.validate.sample import POOL_FIELDS, STRATEGIES, sample
from attrib_audit.validate.until_sure import (
    ANNOTATOR,
    UntilSure,
    open_session,
    plan_until_sure,
    read_oracle,
    run_with_oracle,
)
from attrib_audit.validate.until_sure_page import serve_until_sure


def _mark_until_sure_only(p: argparse.ArgumentParser, before: set[str]) -> None:
    """Record the flags added since `before` (the until-sure ones): without --until-sure they would do nothing."""
    flags = {a.dest: (a.option_strings[0], a.default) for a in p._actions if a.dest not in before and a.option_strings}
    p.set_defaults(until_sure_only=flags)


def refuse_until_sure_flags(args: argparse.Namespace) -> None:
    """A flag of --until-sure given without it is an error, not a silent no-op."""
    given = [flag for dest, (flag, default) in args.until_sure_only.items() if getattr(args, dest) != default]
    if given:
        raise UsageError(f"{', '.join(given)} belong(s) to --until-sure")


def _list(text: str | None, cast=str) -> tuple | None:
    return tuple(cast(x.strip()) for x in text.split(",")) if text else None


def _session_inputs(args: argparse.Namespace, pool_file: str) -> dict[str, Any]:
    """The metrics, proxy and scoring configuration `label --until-sure` and `plan --until-sure` share."""
    from attrib_audit.validate.sample import read_pool

    metrics = _list(args.metrics) or ()
    cols = _score_cols(args.us_score_col)
    if len(metrics) + len(cols) < 2:
        raise UsageError("--until-sure needs at least two metrics: --metrics a,b and/or --score-col NAME=COL")
    if args.proxy is None:
        raise UsageError("--until-sure needs --proxy: a scorer (e.g. judge) or a column of the pool")
    proxy: str | None = args.proxy
    proxy_col: tuple[str, bool] | None = None
    by_name = {n: (c, low) for n, c, low in cols}
    if args.proxy in by_name:
        proxy, proxy_col = None, by_name[args.proxy]
    elif args.proxy not in metrics and args.proxy in read_pool(pool_file).rows[0]:
        proxy, proxy_col = None, (args.proxy, False)

    def config_for(names: tuple[str, ...]) -> Any:
        return config_from_args(argparse.Namespace(**{**vars(args), "scorers": ",".join(names)}))

    return {"metrics": tuple(metrics), "score_cols": cols, "proxy": proxy, "proxy_col": proxy_col,
            "config_for": config_for, "log": lambda m: print(m, file=sys.stderr)}


def pool_size(text: str | None) -> int | None:
    """--pool: a count of pairs, or the pool file itself (its rows are counted as `sample` reads them)."""
    if text is None:
        return None
    if text.strip().isdigit():
        return int(text)
    from attrib_audit.validate.sample import read_pool

    return len(read_pool(text).ids)


def cmd_plan(args: argparse.Namespace) -> int:
    if args.until_sure:
        delta = 0.02 if args.delta is None else args.delta
        sure = plan_until_sure(args.until_sure, **_session_inputs(args, args.until_sure), delta=delta,
                               alpha=args.alpha, budget=args.budget, sims=args.sims, seed=args.seed)
        print(until_sure_plan_text(sure))
        return 0
    refuse_until_sure_flags(args)
    if args.delta is None:
        args.delta = 0.1  # the gate target's default margin (the parser leaves it unset for --until-sure's own)
    opts = PlanOptions(results=args.results, slice=args.slice, scorers=_list(args.scorers), auroc=args.auroc,
                       prevalence=args.prevalence, corr=args.corr, half_width=args.half_width, detect=args.detect,
                       pairs_per_cluster=args.pairs_per_cluster, icc=args.icc,
                       grid=tuple(sorted(set(args.grid))) if args.grid else DEFAULT_GRID,
                       sims=args.sims, n_boot=args.n_boot, seed=args.seed, gate=target_from_args(args),
                       delta=args.delta, pool=pool_size(args.pool))
    plans = plan(opts)
    if opts.gate is not None:
        print("\n\n".join(format_gate_plan(p) for p in plans if isinstance(p, GatePlan)))
        return 0
    samples = [p for p in plans if isinstance(p, SamplePlan)]
    for p in samples:
        print(format_plan(p) + "\n")
    if len(samples) > 1:
        recs = [p.recommended_n for p in samples if p.recommended_n is not None]
        need = max(recs) if len(recs) == len(samples) else None
        overall = (f"label {need} pairs (the most any audited slice needs)" if need
                   else "some slice needs more than the grid allows")
        print(f"overall: {overall}")
    if opts.pool is None:
        print("sizes not capped: no --pool given. With fewer pairs to label than this asks for, --pool N|FILE "
              "caps the plan at them and says what they can reach")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    def log(message: str) -> None:
        print(message, file=sys.stderr)

    # which format each score file was read as: a progress note, left out with --quiet
    score_cols = list(sources_from_args(args, (lambda _m: None) if args.quiet else log).values())
    config = None if args.strategy == "random" else config_from_args(args)
    columns = {f: getattr(args, f"{f}_col") for f in POOL_FIELDS if getattr(args, f"{f}_col", None)}
    s = sample(args.data, args.out, args.n, strategy=args.strategy, seed=args.seed, strata=args.strata,
               cluster_by=args.cluster_by, config=config, log=log,
               score_cols=score_cols, columns=columns)
    pi = s.inclusion_prob[s.chosen]
    print(f"sampled {s.chosen.size} of {s.pool_size} pairs "
          f"({args.strategy}{', by ' + args.cluster_by if args.cluster_by else ''}); "
          f"inclusion probabilities {pi.min():.3g}–{pi.max():.3g}, weights sum to {(1.0 / pi).sum():.0f} "
          f"(the pool size, in expectation)\nto label: {s.out}\nnext: attrib-audit label {s.out} --annotator YOUR_NAME")
    return 0


def _score_cols(items: list[str]) -> tuple[tuple[str, str, bool], ...]:
    out = []
    for text in items:
        src = parse_score_col(text)
        out.append((src.name, src.column, src.lower))
    return tuple(out)


def open_until_sure(args: argparse.Namespace) -> UntilSure:
    """The session `label --until-sure` asks for: metrics scored through the engine (cached), or pool columns."""
    return open_session(args.data, **_session_inputs(args, args.data), delta=args.delta, alpha=args.alpha,
                        budget=args.budget, active=not args.uniform, seed=args.seed, cluster_by=args.cluster_by,
                        annotator=args.annotator or ANNOTATOR)


def cmd_label_until_sure(args: argparse.Namespace) -> int:
    session = open_until_sure(args)
    if args.oracle:
        report = run_with_oracle(session, read_oracle(args.oracle))
        print(until_sure_text(report))
        print(f"labels used: {report.n_labels} (of budget {report.budget}); store: {session.log.path}")
        print(f"next: attrib-audit audit --until-sure {args.data}")
        return 0
    try:
        server = serve_until_sure(session, args.port)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"label until sure: {len(session.pool.ids)} pairs, budget {args.budget}; every coin flip and label is saved "
          f"to {session.log.path}\nopen {server.url}\n(Ctrl-C stops the server; rerun the same command to resume)",
          flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("stopped; every label is saved", file=sys.stderr)
    finally:
        server.server_close()
    print(until_sure_text(session.report()))
    if session.pending_row is not None:
        print("note: one shown pair awaits its answer; it is shown again when you rerun the same command")
    return 0


def cmd_audit_until_sure(pool: str) -> int:
    """`audit --until-sure POOL`: the session its store holds, as it stands."""
    print(until_sure_text(open_session(pool).report()))
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
    if args.until_sure:
        return cmd_label_until_sure(args)
    refuse_until_sure_flags(args)
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
            print(f"{len(s['annotators'])} annotators: attrib-audit agree --results {s['agreement_dir']} "
                  f"--a {a} --b {b}")
        print(next_after_export(s))
        return 0
    if not args.annotator:
        raise UsageError("give --annotator NAME (your labels are stored under it)")
    try:
        server = serve(args.data, args.annotator, args.port)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"labelling {len(server.pool.ids)} pairs as {server.annotator}; labels are saved to "
          f"{server.store.path} after "
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
    p.add_argument("--label-map", metavar="partial=0|1",
                   help="with --export: the label a 'partial' (partly supported) answer stands for under your "
                        "guidelines; required when there is one (never guessed)")
    before = {a.dest for a in p._actions} | {"until_sure"}
    g = p.add_argument_group("label until sure (the page proposes pairs until a metric is the best for this pool)")
    g.add_argument("--until-sure", action="store_true",
                   help="propose pairs one at a time and stop when a metric is the best within --delta (or all tie)")
    g.add_argument("--metrics", help="candidate metrics to score the pool with, comma-separated, e.g. lexical,minilm")
    g.add_argument("--score-col", dest="us_score_col", action="append", default=[], metavar="NAME=COL[:lower]",
                   help="a candidate metric precomputed in a column of the pool (repeatable)")
    g.add_argument("--proxy", help="p̂ of supported on every pair: a scorer (e.g. judge) or a pool column; a score "
                                   "outside [0, 1] is mapped to its pool percentile rank")
    g.add_argument("--delta", type=half_open_unit, default=0.02, help="AUROC margin of the claim (default 0.02)")
    g.add_argument("--alpha", type=open_unit, default=0.05, help="error rate of the claim (default 0.05)")
    g.add_argument("--budget", type=positive_int, default=400, help="most pairs to show (default 400)")
    g.add_argument("--uniform", action="store_true", help="uniform sampling instead of active")
    g.add_argument("--seed", type=seed_int, default=0, help="seed of the walk and its coins (default 0)")
    g.add_argument("--cluster-by", metavar="FIELD", help="cluster for the fixed-sample bootstrap, e.g. question")
    g.add_argument("--oracle", metavar="FILE", help="answer from a labelled file (id, label) instead of the page: "
                                                    "headless, for tests and benchmarks")
    add_model_args(p)
    add_judge_args(p)
    _mark_until_sure_only(p, before)
    p.set_defaults(func=cmd_label)


def add_plan(sub) -> None:
    p = sub.add_parser("plan",
                       help="how many human labels the target dataset needs (simulated with the audit's bootstrap)")
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
                   help="AUROC gap between the best metric and the runner-up to detect with power "
                        f"{TARGET_POWER}, e.g. 0.05")
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
    p.add_argument("--pool", metavar="N|FILE",
                   help="the pool the labels come from (its size, or the unlabelled file): the plan never asks for "
                        "more pairs than it holds, and says when the target is out of its reach")
    add_target_args(p, required=False)  # instead of an AUROC target: labels that certify a gate threshold
    before = {a.dest for a in p._actions} | {"until_sure"}
    g = p.add_argument_group("label until sure: expected labels to a decision, uniform vs active sampling")
    g.add_argument("--until-sure", metavar="POOL", help="simulate `label POOL --until-sure` sessions from the pool's "
                                                       "scores (labels drawn from the proxy)")
    g.add_argument("--metrics", help="candidate metrics to score the pool with, comma-separated")
    g.add_argument("--score-col", dest="us_score_col", action="append", default=[], metavar="NAME=COL[:lower]",
                   help="a candidate metric precomputed in a column of the pool (repeatable)")
    g.add_argument("--proxy", help="p̂ of supported: a scorer or a pool column")
    g.add_argument("--alpha", type=open_unit, default=0.05, help="error rate of the claim (default 0.05)")
    g.add_argument("--budget", type=positive_int, default=400, help="most pairs to show (default 400)")
    add_model_args(p)
    add_judge_args(p)
    _mark_until_sure_only(p, before)
    p.set_defaults(func=cmd_plan, delta=None)  # --delta: 0.1 for a gate target, 0.02 AUROC with --until-sure


def add_sample(sub) -> None:
    p = sub.add_parser("sample",
                       help="choose which unlabelled pairs to label; records each pair's inclusion probability")
    p.add_argument("data",
                   help="unlabelled pairs (JSONL/CSV/Parquet with claim, evidence; id, question, group optional)")
    p.add_argument("--n", type=positive_int, required=True, help="pairs to label")
    p.add_argument("--out", required=True, help="output JSONL of the pairs to label")
    p.add_argument("--strategy", choices=STRATEGIES, default="disagreement",
                   help="random; stratified over the metrics' score quantiles; disagreement over-samples pairs the "
                        "metrics rank differently (default)")
    p.add_argument("--scorers", default="lexical,minilm", help="metrics that steer stratified/disagreement sampling")
    p.add_argument("--score-col", action="append", default=[], metavar="NAME=COL[:lower]",
                   help="a numeric column of the pool as one more steering metric, named NAME (':lower': lower values "
                        "mean better supported); repeatable, as in `audit`")
    p.add_argument("--scores", action="append", default=[], metavar="FILE[:COLS]",
                   help="a score file computed elsewhere, joined to the pool on id (or on the pair's text for "
                        "evaluator exports); each numeric column, or the listed COL / NAME=COL[:lower] entries, is "
                        "one more steering metric (repeatable, as in `audit`)")
    p.add_argument("--scores-format", choices=SCORE_FORMATS, default="auto",
                   help="format of --scores files: table (id + columns), ragas, deepeval, trulens (default: detect)")
    for f in POOL_FIELDS:
        p.add_argument(f"--{f}-col", dest=f"{f}_col", metavar="COL", help=f"column holding `{f}`")
    p.add_argument("--strata", type=positive_int, default=4,
                   help="score quantiles per metric for --strategy stratified")
    p.add_argument("--cluster-by", metavar="FIELD",
                   help="sample whole clusters, e.g. question or group (all pairs of a question together)")
    p.add_argument("--seed", type=seed_int, default=0)
    add_model_args(p)
    add_judge_args(p)
    p.set_defaults(func=cmd_sample)
