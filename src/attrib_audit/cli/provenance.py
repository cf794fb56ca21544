"""`attrib-audit provenance`: top-1 provenance accuracy, the confusable-evidence test and the α sweep."""
from __future__ import annotations

import argparse
import sys

from attrib_audit.cli.convert import scorer_options_from_args
from attrib_audit.cli.options import add_model_args, n_boot_int, seed_int
from attrib_audit.errors import UsageError
from attrib_audit.provenance.loaders import FORMATS, load_provenance
from attrib_audit.report.console import format_provenance


def _weights(text: str) -> "Eq1Weights":  # noqa: F821
    from attrib_audit.provenance.rankers import Eq1Weights  # here: the rankers import scipy, and `--help` must not

    try:
        return Eq1Weights.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _scorer_options(args: argparse.Namespace) -> dict[str, dict]:
    """--model-path / --scorer-opt parsed exactly as the audit commands parse them."""
    return scorer_options_from_args(args, "rankers")[1]


def cmd_provenance(args: argparse.Namespace) -> int:
    from attrib_audit.provenance.diagnostic import ProvenanceConfig, run_provenance  # deferred like Eq1Weights

    if args.seeds < 1:
        raise UsageError("--seeds must be at least 1")
    sets = [load_provenance(p, format=args.format, dataset=args.dataset_name, limit=args.limit) for p in args.data]
    rankers = tuple(r.strip() for r in args.rankers.split(",") if r.strip())
    step = args.alpha_step
    alphas = None if step is None else tuple(round(i * step, 6) for i in range(int(round(1 / step)) + 1)) if step > 0 else ()
    config = ProvenanceConfig(
        rankers=rankers, semantic=args.semantic, eq1_weights=args.eq1_weights, confusable_k=args.confusable,
        seeds=args.seeds, candidate_cap=args.candidate_cap or None, alphas=alphas, n_boot=args.n_boot,
        seed=args.seed, device=args.device, batch_size=args.batch_size,
        cache_path=":memory:" if args.no_cache else args.cache, scorer_options=_scorer_options(args), quiet=args.quiet)
    log = (lambda *_: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        result = run_provenance(sets, config, log=log)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    path = result.save(args.out)
    print(format_provenance(result.results))
    print(f"\nresults: {path}")
    return 0


def add_provenance(sub) -> None:
    p = sub.add_parser("provenance", help="top-1 provenance accuracy, confusable-evidence test and alpha sweep")
    p.add_argument("data", nargs="+", help="provenance files (each is its own dataset; never pooled)")
    p.add_argument("--format", choices=FORMATS, default="auto",
                   help="jsonl (our schema), alce (ALCE/ASQA), hotpotqa, msmarco (v2.1); auto detects from fields")
    p.add_argument("--dataset", dest="dataset_name", help="dataset name (default: from the file)")
    p.add_argument("--limit", type=int, help="use the first N examples only (the rest is reported as skipped)")
    p.add_argument("--rankers", default="lexical,minilm,blend,eq1",
                   help="comma-separated: lexical, eq1, or any registered scorer (minilm, mpnet, blend, an NLI scorer…)")
    p.add_argument("--semantic", default="minilm", help="encoder of Eq. 1's sem term and the alpha sweep (minilm, mpnet)")
    p.add_argument("--eq1-weights", type=_weights, default="0.40,0.45,0.10,0.05",  # argparse parses a str default (after --help)
                   help="Eq. 1 weights lex,sem,hint,cite (default 0.40,0.45,0.10,0.05)")
    p.add_argument("--confusable", type=int, default=5, metavar="K", help="distractors per unit (0 = no stress test)")
    p.add_argument("--seeds", type=int, default=4, help="confusable-test seeds (default 4)")
    p.add_argument("--candidate-cap", type=int, default=5000,
                   help="distractor candidates sampled per seed (default 5000; 0 = all passages, seeds then agree)")
    p.add_argument("--alpha-step", type=float, default=None,
                   help="alpha sweep step (0 = no sweep; default: 0.1 when a ranker already embeds with --semantic, "
                        "else no sweep, so no encoder runs for it)")
    p.add_argument("--n-boot", type=n_boot_int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=seed_int, default=0)
    add_model_args(p)
    p.add_argument("--out", required=True, help="output folder (writes provenance.json)")
    p.set_defaults(func=cmd_provenance)
