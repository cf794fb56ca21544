"""One run spec: everything that decides an audit's numbers, as one frozen, JSON-serialisable value.

Why one object: the command line, `audit --config FILE`, `audit --check DIR` and the Ray engine all
run from it and results.json stores it, so no path can run something other than what is recorded.

What it leaves out on purpose is `Local`: the score cache, the judge's request cache, endpoint and
API-key variable, model paths and the Ray address. Those belong to the machine that runs, so they
come from the current command line and environment only, never from a file (a crafted results.json
must not choose where requests, secrets or new files go). A spec that names one is refused.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from attrib_audit.errors import InputError

SPEC_VERSION = 1
# scorer options that name a place on this machine or on the network: Local only, never in a spec
LOCAL_OPTIONS = frozenset({"path", "url", "api_key_env", "request_cache", "baseline_path", "trust_remote_code"})
_LOCAL_FLAG = {"path": "--model-path SCORER=PATH", "url": "--judge-url", "api_key_env": "--judge-api-key-env",
               "request_cache": "--cache / --no-cache", "baseline_path": "--model-path (baseline files beside it)",
               "trust_remote_code": "--trust-remote-code"}


class SpecError(InputError):
    """A spec that cannot run; the message names the field (and the file, when read from one)."""

    kind = "error"


def _strict(cls: type, raw: Any, where: str) -> dict:
    """`raw` as keyword arguments of `cls`: an object whose keys are all fields of it."""
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: expected an object, got {type(raw).__name__}")
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise SpecError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                        f"valid: {', '.join(names)}")
    return dict(raw)


def _need(ok: bool, where: str, what: str, value: Any) -> None:
    if not ok:
        raise SpecError(f"{where}: {what}, got {value!r}")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


@dataclass(frozen=True)
class FileSource:
    """One input file; `format` and `sha256` are filled in when it is loaded, so a rerun reads it the same way."""

    path: str
    format: str = "auto"
    sha256: str | None = None
    construct: str | None = None  # overrides DataSpec.construct for this file (the demo mixes two)
    dataset: str | None = None

    def __post_init__(self) -> None:
        _need(isinstance(self.path, str) and bool(self.path), "data.files.path", "expected a file path", self.path)
        for name in ("format", "sha256", "construct", "dataset"):
            _need(_opt_str(getattr(self, name)), f"data.files.{name}", "expected a string", getattr(self, name))


@dataclass(frozen=True)
class HFSource:
    """A Hugging Face dataset (`--hf ID --hf-split S --hf-revision SHA --hf-config NAME`)."""

    id: str
    split: str | None = None
    revision: str | None = None
    config: str | None = None

    def __post_init__(self) -> None:
        for name in ("split", "revision", "config"):
            _need(_opt_str(getattr(self, name)), f"data.hf.{name}", "expected a string", getattr(self, name))


@dataclass(frozen=True)
class DataSpec:
    """Where pairs come from and how rows become pairs (our schema's column/label maps, adapter options)."""

    files: tuple[FileSource, ...] = ()
    hf: HFSource | None = None
    format: str = "auto"
    columns: Mapping[str, str] = field(default_factory=dict)
    label_map: Mapping[str, int] | None = None
    dataset: str | None = None
    construct: str | None = None
    on_error: str = "fail"
    nei: str = "drop"
    wice_partial: int = 0

    def __post_init__(self) -> None:
        from attrib_audit.data.adapters import FORMATS
        from attrib_audit.data.records import FIELDS

        object.__setattr__(self, "files", tuple(self.files))
        object.__setattr__(self, "columns", dict(self.columns or {}))
        if self.label_map is not None:
            object.__setattr__(self, "label_map", dict(self.label_map))
        _need(self.format in FORMATS, "data.format", f"expected one of {', '.join(FORMATS)}", self.format)
        for f in self.files:
            _need(f.format in FORMATS, "data.files.format", f"expected one of {', '.join(FORMATS)}", f.format)
        bad = sorted(set(self.columns) - set(FIELDS))
        _need(not bad, "data.columns", f"keys must be among {', '.join(FIELDS)}", bad)
        _need(all(isinstance(v, str) for v in self.columns.values()), "data.columns", "expected column names",
              self.columns)
        _need(self.label_map is None or all(v in (0, 1) and not isinstance(v, bool) for v in self.label_map.values()),
              "data.label_map", "values must be 0 or 1", self.label_map)
        _need(self.on_error in ("fail", "skip"), "data.on_error", "expected fail or skip", self.on_error)
        _need(self.nei in ("drop", "0"), "data.nei", "expected drop or 0", self.nei)
        _need(self.wice_partial in (0, 1), "data.wice_partial", "expected 0 or 1", self.wice_partial)

    def resolved(self, origin: list[dict]) -> "DataSpec":
        """The same spec with each file's detected format and sha256 from its loaded `data` entry."""
        files = tuple(replace(f, format=o.get("format", f.format), sha256=o.get("sha256", f.sha256))
                      for f, o in zip(self.files, origin))
        return replace(self, files=files)


@dataclass(frozen=True)
class ScorerChoice:
    """A scorer and its options, checked against what its factory accepts."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from attrib_audit.scorers.base import check_options

        object.__setattr__(self, "options", dict(self.options or {}))
        local = sorted(LOCAL_OPTIONS & set(self.options))
        if local:
            raise SpecError(f"scorers.{self.name}: option {local[0]!r} names a path or endpoint of this machine; "
                            f"it is never read from a spec or results file: pass {_LOCAL_FLAG[local[0]]}")
        if self.plugin:
            return  # its options are checked when it is built: checking them here would import its code
        try:
            check_options(self.name, {k: v for k, v in self.options.items()})
        except ValueError as exc:
            raise SpecError(str(exc)) from None

    @property
    def plugin(self) -> bool:
        """A `module:factory` scorer: running it imports code, so --check runs it only when asked to again."""
        from attrib_audit.scorers.plugins import is_import_path

        return is_import_path(self.name)


@dataclass(frozen=True)
class StatsSpec:
    n_boot: int = 2000
    seed: int = 0
    n_perm: int = 10_000
    slice_by: str = "dataset"
    level: float = 0.95  # coverage of the per-slice AUROC and paired-difference CIs
    window_sensitivity: int | None = None  # also rescore windowed scorers at this many tokens (sensitivity section)

    def __post_init__(self) -> None:
        _need(_int(self.n_boot) and self.n_boot >= 1, "stats.n_boot", "expected an integer >= 1", self.n_boot)
        _need(_int(self.seed), "stats.seed", "expected an integer", self.seed)
        _need(_int(self.n_perm) and self.n_perm >= 1, "stats.n_perm", "expected an integer >= 1", self.n_perm)
        _need(self.slice_by in ("dataset", "source", "construct"), "stats.slice_by",
              "expected dataset, source or construct", self.slice_by)
        _need(isinstance(self.level, (int, float)) and not isinstance(self.level, bool) and 0 < self.level < 1,
              "stats.level", "expected a number between 0 and 1", self.level)
        _need(self.window_sensitivity is None or (_int(self.window_sensitivity) and self.window_sensitivity >= 8),
              "stats.window_sensitivity", "expected an integer >= 8 (tokens) or null", self.window_sensitivity)


@dataclass(frozen=True)
class EngineSpec:
    engine: str = "local"
    device: str = "cpu"
    batch_size: int | None = None
    concurrency: int = 2  # Ray actors per scorer
    actor_gpus: float | None = None  # per Ray actor; None: 1 on cuda, else 0

    def __post_init__(self) -> None:
        _need(self.engine in ("local", "ray"), "engine.engine", "expected local or ray", self.engine)
        _need(isinstance(self.device, str), "engine.device", "expected a string", self.device)
        _need(self.batch_size is None or (_int(self.batch_size) and self.batch_size >= 1), "engine.batch_size",
              "expected an integer >= 1", self.batch_size)
        _need(_int(self.concurrency) and self.concurrency >= 1, "engine.concurrency", "expected an integer >= 1",
              self.concurrency)


@dataclass(frozen=True)
class RunSpec:
    """What an audit runs: data, scorers with options, statistics settings, engine."""

    data: DataSpec
    scorers: tuple[ScorerChoice, ...]
    stats: StatsSpec = StatsSpec()
    engine: EngineSpec = EngineSpec()
    precomputed: tuple[Any, ...] = ()  # external.ScoreSource: metrics computed elsewhere (--score-col, --scores)
    version: int = SPEC_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "scorers", tuple(self.scorers))
        object.__setattr__(self, "precomputed", tuple(self.precomputed))
        _need(bool(self.scorers) or bool(self.precomputed), "scorers", "expected at least one scorer", [])
        names = [s.name for s in self.scorers]
        _need(len(set(names)) == len(names), "scorers", "each scorer at most once", names)
        clash = sorted(set(names) & {p.name for p in self.precomputed})
        if clash:
            raise SpecError(f"precomputed scorer {clash[0]!r} has the name of a scorer in `scorers`; rename it")
        _need(self.version == SPEC_VERSION, "version", f"this attrib-audit reads spec version {SPEC_VERSION}",
              self.version)

    @property
    def scorer_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scorers)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, raw: Any, where: str = "spec") -> "RunSpec":
        top = _strict(cls, raw, where)
        data = _strict(DataSpec, top.get("data", {}), f"{where}.data")
        files = data.get("files", [])
        if not isinstance(files, list):
            raise SpecError(f"{where}.data.files: expected a list, got {type(files).__name__}")
        data["files"] = tuple(FileSource(**_strict(FileSource, f, f"{where}.data.files[{i}]"))
                              for i, f in enumerate(files))
        if data.get("hf") is not None:
            data["hf"] = HFSource(**_strict(HFSource, data["hf"], f"{where}.data.hf"))
        scorers, precomputed = top.get("scorers", []), top.get("precomputed", [])
        for key, value in (("scorers", scorers), ("precomputed", precomputed)):
            if not isinstance(value, list):
                raise SpecError(f"{where}.{key}: expected a list, got {type(value).__name__}")
        from attrib_audit.external.sources import ScoreSource

        try:
            return cls(data=DataSpec(**data),
                       scorers=tuple(ScorerChoice(**_strict(ScorerChoice, s, f"{where}.scorers[{i}]"))
                                     for i, s in enumerate(scorers)),
                       precomputed=tuple(ScoreSource(**_strict(ScoreSource, p, f"{where}.precomputed[{i}]"))
                                         for i, p in enumerate(precomputed)),
                       stats=StatsSpec(**_strict(StatsSpec, top.get("stats", {}), f"{where}.stats")),
                       engine=EngineSpec(**_strict(EngineSpec, top.get("engine", {}), f"{where}.engine")),
                       version=top.get("version", SPEC_VERSION))
        except TypeError as exc:  # a required key (data.files[].path, hf.id, scorers[].name) is missing
            raise SpecError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class Local:
    """Settings of the machine that runs: always from the current command line and environment."""

    cache: str | None = None  # score cache; None: $ATTRIB_AUDIT_CACHE or the default file; ":memory:": none
    scorer_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # LOCAL_OPTIONS per scorer
    ray_address: str | None = None
    quiet: bool = False

    def describe(self, names: tuple[str, ...]) -> list[str]:
        """What this run takes from here, one `what: value` per line."""
        from attrib_audit.engine.cache import default_cache_path

        lines = [f"score cache: {'none' if self.cache == ':memory:' else self.cache or default_cache_path()}"]
        for name in names:
            for k, v in sorted(self.scorer_options.get(name, {}).items()):
                lines.append(f"{name}.{k}: {v}")
        if self.ray_address:
            lines.append(f"ray address: {self.ray_address}")
        return lines


def load_spec_file(path: str | Path) -> RunSpec:
    """A spec written as JSON (`.json`) or TOML (`.toml`), e.g. by hand or copied from results.json's `spec`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            raw = tomllib.loads(text)
        else:
            raw = json.loads(text)
    except ValueError as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise SpecError(f"{p}: not valid {'TOML' if p.suffix.lower() == '.toml' else 'JSON'} ({exc})") from None
    if isinstance(raw, dict) and "spec" in raw and "data" not in raw:
        raw = raw["spec"]  # a results.json: run the spec it recorded
    try:
        spec = RunSpec.from_dict(raw, where=str(p))
    except SpecError as exc:
        msg = str(exc)
        raise SpecError(msg if msg.startswith(str(p)) else f"{p}: {msg}") from None
    # relative data paths are read from the config file's folder, wherever the command runs
    files = tuple(replace(f, path=str(p.parent / f.path)) if not Path(f.path).is_absolute() else f
                  for f in spec.data.files)
    return replace(spec, data=replace(spec.data, files=files))


# ---- from command-line flags ----------------------------------------------------------------------------

def coerce(v: str) -> Any:
    """A `--scorer-opt` value: int, float, true/false, else the string."""
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def scorer_options_from_args(args: argparse.Namespace) -> tuple[tuple[str, ...], dict[str, dict[str, Any]]]:
    """`--scorers` and every option for them: `--scorer-opt`, `--model-path`, the judge flags (unvalidated)."""
    from attrib_audit.judge.cli import JUDGE_SCORERS, judge_options

    names = tuple(dict.fromkeys(s.strip() for s in args.scorers.split(",") if s.strip() and s.strip() != "none"))
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
        opts.setdefault(name.strip(), {})[opt.strip()] = coerce(value.strip())
    return names, opts


def trusting(names: Sequence[str], args: argparse.Namespace) -> list[str]:
    """The scorers `--trust-remote-code` applies to: built-ins that take the option (so --check re-asks it)."""
    if not getattr(args, "trust_remote_code", False):
        return []
    from attrib_audit.scorers.base import scorer_spec
    from attrib_audit.scorers.plugins import is_import_path

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
    from attrib_audit.data.records import FIELDS

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
    return DataSpec(files=tuple(FileSource(str(Path(p).absolute())) for p in getattr(args, "data", [])), hf=hf,
                    format=getattr(args, "format", "auto"), columns=columns, label_map=label_map,
                    dataset=getattr(args, "dataset_name", None), construct=getattr(args, "construct", None),
                    on_error=getattr(args, "on_error", "fail"), nei=getattr(args, "nei", "drop"),
                    wice_partial=getattr(args, "wice_partial", 0))


def local_from_args(args: argparse.Namespace, local_options: Mapping[str, Mapping[str, Any]] | None = None) -> Local:
    import os

    cache = ":memory:" if getattr(args, "no_cache", False) else getattr(args, "cache", None)
    return Local(cache=cache, scorer_options=dict(local_options or {}), quiet=getattr(args, "quiet", False),
                 ray_address=getattr(args, "ray_address", None) or os.environ.get("RAY_ADDRESS") or None)


def spec_from_args(args: argparse.Namespace, data: DataSpec | None = None,
                   log: Callable[[str], None] = lambda _m: None) -> tuple[RunSpec, Local]:
    """The spec and the local settings the flags of `audit`/`score`/`demo` describe."""
    from attrib_audit.external.cli import sources_from_args

    scorers, local_opts = scorers_from_args(args)
    stats = StatsSpec(n_boot=getattr(args, "n_boot", 2000), seed=getattr(args, "seed", 0),
                      n_perm=getattr(args, "n_perm", 10_000), slice_by=getattr(args, "slice_by", "dataset"),
                      level=getattr(args, "ci_level", 0.95),
                      window_sensitivity=getattr(args, "window_sensitivity", None))
    engine = EngineSpec(engine=getattr(args, "engine", "local"), device=getattr(args, "device", "cpu"),
                        batch_size=getattr(args, "batch_size", None), concurrency=getattr(args, "concurrency", 2),
                        actor_gpus=getattr(args, "actor_gpus", None))
    spec = RunSpec(data=data if data is not None else data_from_args(args), scorers=scorers, stats=stats,
                   engine=engine, precomputed=tuple(sources_from_args(args, log).values()))
    return spec, local_from_args(args, local_opts)


def local_for(spec: RunSpec, args: argparse.Namespace) -> Local:
    """The local settings of this command line for the scorers of `spec` (which came from a file)."""
    from attrib_audit.judge.cli import JUDGE_SCORERS, judge_options

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


# ---- running a spec ---------------------------------------------------------------------------------------

def audit_config(spec: RunSpec, local: Local):
    """The AuditConfig a spec runs with on this machine (its scorer options plus the local ones)."""
    from attrib_audit.audit import AuditConfig

    opts = {c.name: {**c.options, **local.scorer_options.get(c.name, {})} for c in spec.scorers}
    ray = None
    if spec.engine.engine == "ray":
        from attrib_audit.engine.ray_engine import RayOptions

        e = spec.engine
        gpus = e.actor_gpus if e.actor_gpus is not None else (1.0 if e.device.startswith("cuda") else 0.0)
        ray = RayOptions(address=local.ray_address, concurrency=e.concurrency, num_gpus=gpus)
    s = spec.stats
    return AuditConfig(scorers=spec.scorer_names, slice_by=s.slice_by, n_boot=s.n_boot, seed=s.seed, n_perm=s.n_perm,
                       level=s.level, window_sensitivity=s.window_sensitivity, batch_size=spec.engine.batch_size, device=spec.engine.device,
                       cache_path=local.cache, scorer_options={k: v for k, v in opts.items() if v}, quiet=local.quiet,
                       engine=spec.engine.engine, ray=ray, precomputed={p.name: p for p in spec.precomputed},
                       on_error=spec.data.on_error)


def run_spec(spec: RunSpec, local: Local, log: Callable[[str], None] = print):
    """Load the spec's data, run the audit, and record the spec (formats and hashes filled in) in the results."""
    from attrib_audit.audit import run_audit
    from attrib_audit.data.args import load_data

    table = load_data(spec.data, log=None if local.quiet else log)
    result = run_audit(table, audit_config(spec, local), log=log)
    result.results["spec"] = replace(spec, data=spec.data.resolved(table.origin)).to_dict()
    return result


__all__ = ["DataSpec", "EngineSpec", "FileSource", "HFSource", "LOCAL_OPTIONS", "Local", "RunSpec", "ScorerChoice",
           "SpecError", "StatsSpec", "audit_config", "load_spec_file", "local_for", "run_spec", "spec_from_args"]
