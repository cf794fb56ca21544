"""Judge flags for the scoring commands, and `attrib-audit agree`."""
from __future__ import annotations

import argparse
from typing import Any

JUDGE_SCORERS = ("judge", "judge-label")


def add_judge_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("LLM judge (scorers judge, judge-label)")
    g.add_argument("--judge-url", help="OpenAI-compatible server base URL, e.g. http://127.0.0.1:8000/v1 "
                                       "(default: the local GGUF from `models install judge`)")
    g.add_argument("--judge-model", help="model name the server expects (required with --judge-url)")
    g.add_argument("--judge-api-key-env", default="ATTRIB_AUDIT_JUDGE_API_KEY",
                   help="environment variable holding the server's API key (default ATTRIB_AUDIT_JUDGE_API_KEY)")
    g.add_argument("--judge-concurrency", type=int, default=4, help="requests in flight at once (server; default 4)")
    g.add_argument("--judge-timeout", type=float, default=60.0, help="seconds per request (server; default 60)")
    g.add_argument("--judge-retries", type=int, default=4, help="retries on 429/5xx/connection errors (default 4)")
    g.add_argument("--judge-grammar", action="store_true",
                   help="constrain decoding to the answer format with a GBNF grammar (local GGUF or a llama.cpp "
                        "server); lets a small model answer parseably")


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """Options for both judge scorers; the request cache sits beside the score cache (none with --no-cache)."""
    from attrib_audit.judge.requests_cache import default_requests_path

    if not hasattr(args, "judge_url"):  # a command without the scoring flags: the judges' own defaults
        return {}
    opts: dict[str, Any] = {"api_key_env": args.judge_api_key_env, "concurrency": args.judge_concurrency,
                            "timeout": args.judge_timeout, "retries": args.judge_retries,
                            "request_cache": None if getattr(args, "no_cache", False)
                            else str(default_requests_path(getattr(args, "cache", None))),
                            "grammar": args.judge_grammar}
    if args.judge_url:
        opts.update(url=args.judge_url, model=args.judge_model)
    return opts


def cmd_agree(args: argparse.Namespace) -> int:
    from attrib_audit.judge.agree import agreement, format_agreement

    res = agreement(args.results, args.a, args.b, threshold=args.threshold, n_boot=args.n_boot, seed=args.seed)
    print(format_agreement(res))
    print(f"\nagreement: {args.results}/agreement.json")
    return 0


def register(sub) -> None:
    p = sub.add_parser("agree", help="Cohen's kappa between two raters (judges or 'human') per slice, with CIs")
    p.add_argument("--results", required=True, help="an audit output folder (reads scores.parquet)")
    p.add_argument("--a", required=True, help="first rater: a scorer name or 'human'")
    p.add_argument("--b", required=True, help="second rater: a scorer name or 'human'")
    p.add_argument("--threshold", type=float, default=0.5,
                   help="scorers without a discrete label count as attributable at score >= this (default 0.5)")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_agree)
