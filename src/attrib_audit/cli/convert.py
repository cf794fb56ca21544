"""Namespace → run spec: every conversion of parsed flags into the typed values the layers below take.

`spec_from_args` splits the flags into the RunSpec (what decides the numbers, recorded in results.json) and
`Local` (this machine's cache, model paths, judge endpoint and key variable, Ray address: never recorded).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from attrib_audit.audit.config import AuditConfig
from attrib_audit.audit.spec import LOCAL_OPTIONS, EngineSpec, Local, RunSpec, ScorerChoice, StatsSpec, audit_config
from attrib_audit.data.errors import DataError
from attrib_audit.data.records import FIELDS
from attrib_audit.data.sources import DataSpec, FileSource, HFSource
from attrib_audit.errors import SpecError, UsageError
from attrib_audit.external.sources import ScoreSource, parse_score_col, parse_scores_arg
from attrib_audit.files.paths import default_requests_path
from attrib_audit.scorers.catalog import scorer_spec
from attrib_audit.scorers.judge import JUDGE_SCORERS
from attrib_audit.scorers.plugins import is_import_path
from attrib_audit.stats.threshold import Target, make_target


def stderr(message: str) -> None:
    print(message, file=sys.stderr)


def log_for(args: argparse.Namespace) -> Callable[[str], None]:
    """Where notes go: stderr, or nowhere with --quiet."""
    return (lambda *_: None) if getattr(args, "quiet", False) else stderr


def coerce(v: str) -> Any:
    """A `--scorer-opt` value: int, float, true/false, else the string."""
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def scorer_options_from_args(args: argparse.Namespace, names_flag: str = "scorers") -> tuple[tuple[str, ...],
                                                                                          dict[str, dict[str, Any]]]:
    """The scorers a comma-separated flag names (`--scorers`; provenance: `--rankers`) and every option for them:
    `--scorer-opt`, `--model-path`, the judge flags (unvalidated)."""
    text = getattr(args, names_flag)
    names = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip() and s.strip() != "none"))
    opts: dict[str, dict[str, Any]] = {n: judge_options(args) for n in JUDGE_SCORERS if n in names}
    for item in getattr(args, "model_path", []):
        name, _, path = item.partition("=")
        opts.setdefault(name.strip(), {})["path"] = path.strip()
    for name in trusting(names, args):
        opts.setdefault(name, {})["trust_remote_code"] = True
    for item in getattr(args, "scorer_opt", []):
        key, sep, value = item.partition("=")
        name, _, opt = key.rpartition(".")  # rpartition: a `pkg.mod:factory` plugin name holds dots
        if not name or not opt or not sep:
            raise SpecError(f"--scorer-opt {item!r} must be SCORER.KEY=VALUE")
        value = coerce(value.strip())
        if isinstance(value, float) and not math.isfinite(value):  # nan/inf pass every range check downstream
            raise SpecError(f"--scorer-opt {item!r}: {opt.strip()} must be a finite number, not {value}")
        opts.setdefault(name.strip(), {})[opt.strip()] = value
    return names, opts


def trusting(names: Sequence[str], args: argparse.Namespace) -> list[str]:
    """The scorers `--trust-remote-code` applies to: built-ins that take the option (so --check re-asks it)."""
    if not getattr(args, "trust_remote_code", False):
        return []
    return [n for n in names if not is_import_path(n) and "trust_remote_code" in (scorer_spec(n).option_names() or ())]


def scorers_from_args(args: argparse.Namespace) -> tuple[tuple[ScorerChoice, ...], dict[str, dict[str, Any]]]:
    """(the validated scorer choices of these flags, their local options: model paths, judge endpoint, caches)."""
    names, opts = scorer_options_from_args(args)
    stray = sorted(set(opts) - set(names))
    if stray:  # an option for a scorer that does not run would be recorded but never applied
        raise SpecError(f"--scorer-opt/--model-path name {stray[0]!r}, which is not in --scorers {','.join(names)}")
    local: dict[str, dict[str, Any]] = {}
    for name, o in opts.items():
        for k in LOCAL_OPTIONS & set(o):
            local.setdefault(name, {})[k] = o.pop(k)
    return tuple(ScorerChoice(n, opts.get(n, {})) for n in names), {n: o for n, o in local.items() if n in names}


def _kv(text: str, what: str) -> dict[str, str]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise SpecError(f"{what} entry {part!r} must be KEY=VALUE")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def data_from_args(args: argparse.Namespace) -> DataSpec:
    columns = {f: getattr(args, f"{f}_col") for f in FIELDS if getattr(args, f"{f}_col", None)}
    label_map = None
    if getattr(args, "label_map", None):
        raw = _kv(args.label_map, "--label-map")
        bad = {k: v for k, v in raw.items() if v not in ("0", "1")}
        if bad:
            raise SpecError(f"--label-map values must be 0 or 1, got {bad}")
        label_map = {k: int(v) for k, v in raw.items()}
    hf = HFSource(args.hf, args.hf_split, args.hf_revision, args.hf_config) if getattr(args, "hf", None) else None
    # absolute, so `--check` and `--config results.json` find the files from any folder
    return DataSpec(files=tuple(FileSource(path=str(Path(p).absolute())) for p in getattr(args, "data", [])), hf=hf,
                    format=getattr(args, "format", "auto"), columns=columns, label_map=label_map,
                    dataset=getattr(args, "dataset_name", None), construct=getattr(args, "construct", None),
                    on_error=getattr(args, "on_error", "fail"), nei=getattr(args, "nei", "drop"),
                    wice_partial=getattr(args, "wice_partial", 0),
                    label_from_rating=getattr(args, "label_from_rating", None))


def local_from_args(args: argparse.Namespace, local_options: Mapping[str, Mapping[str, Any]] | None = None) -> Local:
    cache = ":memory:" if getattr(args, "no_cache", False) else getattr(args, "cache", None)
    return Local(cache=cache, scorer_options=dict(local_options or {}), quiet=getattr(args, "quiet", False),
                 ray_address=getattr(args, "ray_address", None) or os.environ.get("RAY_ADDRESS") or None)


def spec_from_args(args: argparse.Namespace, data: DataSpec | None = None,
                   log: Callable[[str], None] = lambda _m: None) -> tuple[RunSpec, Local]:
    """The spec and the local settings the flags of `audit`/`score`/`demo` describe."""
    scorers, local_opts = scorers_from_args(args)
    d = StatsSpec()  # a command without a statistics flag gets the spec's default for it
    stats = StatsSpec(n_boot=getattr(args, "n_boot", d.n_boot), seed=getattr(args, "seed", d.seed),
                      n_perm=getattr(args, "n_perm", d.n_perm), slice_by=getattr(args, "slice_by", d.slice_by),
                      level=getattr(args, "ci_level", d.level),
                      window_sensitivity=getattr(args, "window_sensitivity", d.window_sensitivity),
                      system_resample=tuple(getattr(args, "resample", ",".join(d.system_resample)).split(",")),
                      statistic=getattr(args, "statistic", d.statistic))
    engine = EngineSpec(engine=getattr(args, "engine", "local"), device=getattr(args, "device", "cpu"),
                        batch_size=getattr(args, "batch_size", None), concurrency=getattr(args, "concurrency", 2),
                        actor_gpus=getattr(args, "actor_gpus", None))
    spec = RunSpec(data=data if data is not None else data_from_args(args), scorers=scorers, stats=stats,
                   engine=engine, precomputed=tuple(sources_from_args(args, log).values()))
    return spec, local_from_args(args, local_opts)


def local_for(spec: RunSpec, args: argparse.Namespace) -> Local:
    """The local settings of this command line for the scorers of `spec` (which came from a file)."""
    local: dict[str, dict[str, Any]] = {}
    for name in spec.scorer_names:
        if name in JUDGE_SCORERS:
            local[name] = {k: v for k, v in judge_options(args).items() if k in LOCAL_OPTIONS}
    for item in getattr(args, "model_path", []):
        name, _, path = item.partition("=")
        if name.strip() in spec.scorer_names:
            local.setdefault(name.strip(), {})["path"] = path.strip()
    for name in trusting(spec.scorer_names, args):
        local.setdefault(name, {})["trust_remote_code"] = True
    return local_from_args(args, local)


def config_from_args(args: argparse.Namespace) -> AuditConfig:
    """The AuditConfig of these flags (scorers, options, statistics, engine; data aside)."""
    return audit_config(*spec_from_args(args, data=DataSpec()))


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """Options for both judge scorers; the request cache sits beside the score cache (none with --no-cache)."""
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


def sources_from_args(args: argparse.Namespace, log: Callable[[str], None]) -> dict[str, ScoreSource]:
    """The precomputed scorers the flags ask for, as plain sources (a `--scores` file is read to list its columns)."""
    sources = [parse_score_col(t) for t in getattr(args, "score_col", [])]
    for text in getattr(args, "scores", []):
        sources += parse_scores_arg(text, args.scores_format, log)[0]
    out: dict[str, ScoreSource] = {}
    for s in sources:
        if s.name in out:
            raise DataError(f"two precomputed scorers are named {s.name!r}: rename one with NAME=COLUMN")
        out[s.name] = s
    return out


def target_from_args(args: argparse.Namespace) -> Target | None:
    """The gate target of --max-false-pass / --min-precision / --min-catch, None if none is given."""
    given = {k: getattr(args, k, None) for k in ("max_false_pass", "min_precision", "min_catch")}
    if all(v is None for v in given.values()):
        return None
    try:
        return make_target(**given)
    except ValueError as exc:
        raise UsageError(str(exc).replace("_", "-")) from None
