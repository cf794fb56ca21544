"""One run spec: everything that decides an audit's numbers, as one frozen, JSON-serialisable value.

Why one object: the command line, `audit --config FILE`, `audit --check DIR` and the Ray engine all
run from it and results.json stores it, so no path can run something other than what is recorded.

What it leaves out on purpose is `Local`: the score cache, the judge's request cache, endpoint and
API-key variable, model paths and the Ray address. Those belong to the machine that runs, so they
come from the current command line and environment only, never from a file (a crafted results.json
must not choose where requests, secrets or new files go). A spec that names one is refused.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from attrib_audit.audit.config import TRANSFER_STATISTICS, AuditConfig
from attrib_audit.audit.trust import LOCAL_OPTIONS, Asked, check_file_spec, refuse_local_options
from attrib_audit.data.sources import DataSpec, is_int, need
from attrib_audit.engine.ray_engine import RayOptions
from attrib_audit.errors import SpecError
from attrib_audit.external.sources import ScoreSource
from attrib_audit.files.jsonfile import lone_surrogate
from attrib_audit.files.paths import default_cache_path
from attrib_audit.files.records import from_record
from attrib_audit.scorers.catalog import check_options
from attrib_audit.scorers.plugins import is_import_path
from attrib_audit.stats.bootstrap import DEFAULT_B, MIN_BOOT

SPEC_VERSION = 1


@dataclass(frozen=True)
class ScorerChoice:
    """A scorer and its options, checked against what its factory accepts."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        need(isinstance(self.name, str) and bool(self.name), "scorers.name", "expected a scorer name", self.name)
        need(isinstance(self.options or {}, Mapping), f"scorers.{self.name}.options", "expected an object",
             self.options)
        object.__setattr__(self, "options", dict(self.options or {}))
        refuse_local_options(f"scorers.{self.name}", self.options)
        if self.plugin:
            return  # its options are checked when it is built: checking them here would import its code
        try:
            check_options(self.name, {k: v for k, v in self.options.items()})
        except ValueError as exc:
            raise SpecError(str(exc)) from None

    @property
    def plugin(self) -> bool:
        """A `module:factory` scorer: running it imports code, so --check runs it only when asked to again."""
        return is_import_path(self.name)


@dataclass(frozen=True, kw_only=True)
class StatsSpec:
    n_boot: int = DEFAULT_B
    seed: int = 0
    n_perm: int = 10_000
    slice_by: str = "dataset"
    level: float = 0.95  # coverage of the per-slice AUROC and paired-difference CIs
    window_sensitivity: int | None = None  # also rescore windowed scorers at this many tokens (sensitivity section)
    system_resample: tuple[str, ...] = ("inputs",)  # system level: resample inputs, or systems too (--resample)
    statistic: str = "auroc"  # what the transfer statistics and the selector compare metrics by (--statistic)

    def __post_init__(self) -> None:
        need(self.statistic in TRANSFER_STATISTICS, "stats.statistic", f"expected one of "
             f"{', '.join(TRANSFER_STATISTICS)}", self.statistic)
        if isinstance(self.system_resample, (list, tuple)):
            object.__setattr__(self, "system_resample", tuple(sorted(set(self.system_resample))))
        need(isinstance(self.system_resample, tuple) and "inputs" in self.system_resample
             and set(self.system_resample) <= {"inputs", "systems"}, "stats.system_resample",
             "expected [\"inputs\"] or [\"inputs\", \"systems\"]", self.system_resample)
        need(is_int(self.n_boot) and self.n_boot >= MIN_BOOT, "stats.n_boot", f"expected an integer >= {MIN_BOOT}",
             self.n_boot)
        need(is_int(self.seed), "stats.seed", "expected an integer", self.seed)
        need(is_int(self.n_perm) and self.n_perm >= 1, "stats.n_perm", "expected an integer >= 1", self.n_perm)
        need(self.slice_by in ("dataset", "source", "construct"), "stats.slice_by",
              "expected dataset, source or construct", self.slice_by)
        need(isinstance(self.level, (int, float)) and not isinstance(self.level, bool) and 0 < self.level < 1,
              "stats.level", "expected a number between 0 and 1", self.level)
        need(self.window_sensitivity is None or (is_int(self.window_sensitivity) and self.window_sensitivity >= 8),
              "stats.window_sensitivity", "expected an integer >= 8 (tokens) or null", self.window_sensitivity)


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    engine: str = "local"
    device: str = "cpu"
    batch_size: int | None = None
    concurrency: int = 2  # Ray actors per scorer
    actor_gpus: float | None = None  # per Ray actor; None: 1 on cuda, else 0

    def __post_init__(self) -> None:
        need(self.engine in ("local", "ray"), "engine.engine", "expected local or ray", self.engine)
        need(isinstance(self.device, str), "engine.device", "expected a string", self.device)
        need(self.batch_size is None or (is_int(self.batch_size) and self.batch_size >= 1), "engine.batch_size",
              "expected an integer >= 1", self.batch_size)
        need(is_int(self.concurrency) and self.concurrency >= 1, "engine.concurrency", "expected an integer >= 1",
              self.concurrency)


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """What an audit runs: data, scorers with options, statistics settings, engine."""

    data: DataSpec = DataSpec()  # a spec file may leave it out: then it names no input, which loading says
    scorers: tuple[ScorerChoice, ...] = ()
    stats: StatsSpec = StatsSpec()
    engine: EngineSpec = EngineSpec()
    precomputed: tuple[ScoreSource, ...] = ()  # metrics computed elsewhere (--score-col, --scores)
    version: int = SPEC_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "scorers", tuple(self.scorers))
        object.__setattr__(self, "precomputed", tuple(self.precomputed))
        need(bool(self.scorers) or bool(self.precomputed), "scorers", "expected at least one scorer", [])
        need(self.stats.statistic == "auroc" or "rating" in self.data.columns, "stats.statistic",
             "a correlation with the graded rating needs its column (--rating-col, data.columns.rating)",
             self.stats.statistic)
        names = [s.name for s in self.scorers]
        need(len(set(names)) == len(names), "scorers", "each scorer at most once", names)
        clash = sorted(set(names) & {p.name for p in self.precomputed})
        if clash:
            raise SpecError(f"precomputed scorer {clash[0]!r} has the name of a scorer in `scorers`; rename it")
        need(self.version == SPEC_VERSION, "version", f"this attrib-audit reads spec version {SPEC_VERSION}",
              self.version)

    @property
    def scorer_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scorers)


    @classmethod
    def from_dict(cls, raw: Any, where: str = "spec", key: str = "") -> "RunSpec":
        """A run spec from its JSON form (a spec file, results.json's `spec`), read strictly: every key and value is
        checked (files.records.from_record with `strict`), so nothing runs with a silent default.

        Args:
            raw: What json.loads (or tomllib) gave for the spec.
            where: The file named in an error.
            key: The spec's key path in that file (``spec`` in a results.json; empty: the file is the spec).

        Returns:
            The checked spec.

        Raises:
            SpecError: One line naming `where` and the key (``spec.toml: stats: unknown key n_boots; valid: ...``,
                ``spec.toml: data.construct: expected a string, got 5``).
        """
        return from_record(cls, raw, where=where, key=key, error=SpecError, strict=True)


@dataclass(frozen=True)
class Local:
    """Settings of the machine that runs: always from the current command line and environment."""

    cache: str | None = None  # score cache; None: $ATTRIB_AUDIT_CACHE or the default file; ":memory:": none
    scorer_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # LOCAL_OPTIONS per scorer
    ray_address: str | None = None
    quiet: bool = False

    def describe(self, names: tuple[str, ...]) -> list[str]:
        """What this run takes from here, one `what: value` per line."""
        lines = [f"score cache: {'none' if self.cache == ':memory:' else self.cache or default_cache_path()}"]
        for name in names:
            for k, v in sorted(self.scorer_options.get(name, {}).items()):
                lines.append(f"{name}.{k}: {v}")
        if self.ray_address:
            lines.append(f"ray address: {self.ray_address}")
        return lines


def load_spec_file(path: str | Path, asked: Asked = Asked()) -> RunSpec:
    """A run spec from a file: JSON (`.json`) or TOML (`.toml`), by hand or copied from results.json's `spec`.

    A results.json itself works too (its recorded spec runs; its numbers are left aside). What it names
    that only a command line may choose (code, a dataset to fetch, a URL) is refused unless `asked` names
    it too (see audit.trust).

    Args:
        path: The spec file.
        asked: What the command line itself asked for, which the file may then name.

    Returns:
        The checked spec.

    Raises:
        SpecError: The file cannot be read or parsed, a field is wrong (named with its value), or it names a
            machine-local or code-running setting the command line did not ask for.
    """
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
        odd = lone_surrogate(raw)
    except ValueError as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise SpecError(f"{p}: not valid {'TOML' if p.suffix.lower() == '.toml' else 'JSON'} ({exc})") from None
    except RecursionError:
        raise SpecError(f"{p}: nested too deeply to be a run spec") from None
    if odd is not None:
        raise SpecError(f"{p}, field '{odd}': holds an escaped lone surrogate (\\ud800-\\udfff), which UTF-8 text "
                        "cannot carry")
    recorded = isinstance(raw, dict) and isinstance(raw.get("spec"), dict)  # a results.json (a spec has no `spec`)
    spec = RunSpec.from_dict(raw["spec"] if recorded else raw, where=str(p), key="spec" if recorded else "")
    check_file_spec(spec, f"{p}: spec" if recorded else str(p), asked)
    if recorded:
        return spec  # its paths are as the audit was given them, read from where it ran (as `--check` does)
    # relative data paths are read from the config file's folder, wherever the command runs
    files = tuple(replace(f, path=str(p.parent / f.path)) if not Path(f.path).is_absolute() else f
                  for f in spec.data.files)
    return replace(spec, data=replace(spec.data, files=files))


# ---- running a spec ---------------------------------------------------------------------------------------

def audit_config(spec: RunSpec, local: Local) -> AuditConfig:
    """The AuditConfig a spec runs with on this machine (its scorer options plus the local ones)."""
    opts = {c.name: {**c.options, **local.scorer_options.get(c.name, {})} for c in spec.scorers}
    ray = None
    if spec.engine.engine == "ray":
        e = spec.engine
        gpus = e.actor_gpus if e.actor_gpus is not None else (1.0 if e.device.startswith("cuda") else 0.0)
        ray = RayOptions(address=local.ray_address, concurrency=e.concurrency, num_gpus=gpus)
    s = spec.stats
    return AuditConfig(scorers=spec.scorer_names, slice_by=s.slice_by, n_boot=s.n_boot, seed=s.seed, n_perm=s.n_perm,
                       level=s.level, window_sensitivity=s.window_sensitivity, system_resample=s.system_resample,
                       statistic=s.statistic,
                       batch_size=spec.engine.batch_size, device=spec.engine.device,
                       cache_path=local.cache, scorer_options={k: v for k, v in opts.items() if v}, quiet=local.quiet,
                       engine=spec.engine.engine, ray=ray, precomputed={p.name: p for p in spec.precomputed},
                       on_error=spec.data.on_error)


__all__ = ["Asked", "EngineSpec", "LOCAL_OPTIONS", "Local", "RunSpec", "ScorerChoice", "SpecError",
           "StatsSpec", "audit_config",
           "load_spec_file"]
