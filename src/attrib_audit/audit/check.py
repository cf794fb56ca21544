"""`audit --check DIR`: rerun the audit recorded in DIR/results.json and confirm it gives the same numbers.

The rerun is the run spec stored in results.json (data with each file's sha256 and format, scorers and
their options, statistics settings, engine), and nothing else from that file: caches, the judge
endpoint and its API-key variable, and model paths come from the current command line and
environment (a results file may have been written by anyone). The check says what it took from where.

Everything results.json holds is compared, the `transfer` block included, numbers within a stated
absolute tolerance, all else exactly; only what legitimately differs between two runs is left out
(timings, tool/platform, cache hit counts, local paths). Scores are replayed from the score cache,
or recomputed with `--rescore`.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from attrib_audit import __version__
from attrib_audit.audit.results import AuditResult, AuditResults
from attrib_audit.audit.run import run_spec
from attrib_audit.audit.saved import read_results
from attrib_audit.audit.spec import LOCAL_OPTIONS, Local, RunSpec
from attrib_audit.audit.trust import Asked, check_file_spec
from attrib_audit.errors import InputError
from attrib_audit.files.hashing import file_sha256
from attrib_audit.files.records import to_record

DEFAULT_TOLERANCE = 1e-9
# what two faithful runs may differ in: not compared
IGNORED_TOP = ("elapsed_s", "tool", "run_id", "command", "digest")
IGNORED_SCORER_STATS = ("n_cached", "n_scored", "n_batches")


class CheckError(InputError):
    """A results folder that cannot be checked (missing, unreadable, no run spec); one line."""

    kind = "error"


def _label(row: Any, i: int) -> str:
    if isinstance(row, dict):
        ident = [f"{k}={row[k]}" for k in ("scorer", "scorer_a", "scorer_b", "slice", "file", "row") if k in row]
        if ident:
            return "[" + ", ".join(ident) + "]"
    return f"[{i}]"


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def diff(a: Any, b: Any, path: str = "", tolerance: float = 0.0) -> list[str]:
    """Human-readable differences between two JSON values (recorded `a`, rerun `b`); numbers within `tolerance`."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: {'missing in record' if k not in a else 'missing in rerun'}")
            else:
                out += diff(a[k], b[k], f"{path}.{k}", tolerance)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} entries recorded, {len(b)} on rerun"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}{_label(x, i)}", tolerance)]
    if _number(a) and _number(b):
        return [] if abs(a - b) <= tolerance else [f"{path}: recorded {a!r}, rerun {b!r}"]
    return [] if a == b else [f"{path}: recorded {a!r}, rerun {b!r}"]


def comparable(results: AuditResults) -> dict:
    """results.json (its plain form) less what two faithful runs may differ in."""
    out: dict[str, Any] = {k: v for k, v in to_record(results).items() if k not in IGNORED_TOP}
    if isinstance(out.get("scorers"), list):
        out["scorers"] = [{k: v for k, v in s.items() if k not in IGNORED_SCORER_STATS} if isinstance(s, dict) else s
                          for s in out["scorers"]]
    if isinstance(out.get("config"), dict):
        cfg = {k: v for k, v in out["config"].items() if k != "cache"}
        if isinstance(cfg.get("scorer_options"), dict):
            cfg["scorer_options"] = {n: {k: v for k, v in o.items() if k not in LOCAL_OPTIONS}
                                     if isinstance(o, dict) else o for n, o in cfg["scorer_options"].items()}
            cfg["scorer_options"] = {n: o for n, o in cfg["scorer_options"].items() if o}
        out["config"] = cfg
    return out


def _data_problems(spec: RunSpec) -> list[str]:
    problems = []
    for f in spec.data.files:
        path = Path(f.path)
        if not path.is_file():
            problems.append(f"data file {path} is gone")
        elif f.sha256 is None:
            problems.append(f"data file {path}: the run spec records no sha256")
        elif (sha := file_sha256(path)) != f.sha256:
            problems.append(f"data file {path} changed: sha256 recorded {f.sha256}, now {sha}")
    return problems


def rescore_local(local: Local) -> Local:
    """Local settings that recompute every score: no score cache, no judge request cache."""
    opts = {n: ({**o, "request_cache": None} if "request_cache" in o else dict(o))
            for n, o in local.scorer_options.items()}
    return replace(local, cache=":memory:", scorer_options=opts)


def read_recorded(folder: str | Path) -> AuditResults:
    """DIR/results.json to check, read through its records (a value of the wrong type is a CheckError naming the file
    and key)."""
    return read_results(folder, "audit --check", CheckError)


def recorded_spec(recorded: AuditResults, folder: str | Path) -> RunSpec:
    """The run spec results.json recorded (read strictly with the file); CheckError when there is none."""
    if recorded.spec is None:
        raise CheckError(f"{Path(folder) / 'results.json'}: no run spec recorded (written by an older attrib-audit); "
                         "rerun the audit")
    return recorded.spec


def check(folder: str | Path, local: Local, *, tolerance: float = DEFAULT_TOLERANCE, rescore: bool = False,
          log: Callable[[str], None] = print, asked: Asked = Asked()) -> tuple[list[str], AuditResult | None]:
    """Differences between DIR/results.json and a rerun of its spec on `local` (empty: reproduced), and the rerun
    (None when a data file is gone or changed: nothing was rerun). A plugin or `--hf` dataset the file names runs
    only when `asked` names it too (audit.trust)."""
    recorded = read_recorded(folder)
    spec = recorded_spec(recorded, folder)
    check_file_spec(spec, f"{Path(folder) / 'results.json'}: spec", asked)
    problems = _data_problems(spec)
    if problems:
        return problems, None
    then = recorded.tool.version
    if then != __version__:
        log(f"note: results.json was written by attrib-audit {then}, this is {__version__}")
    if rescore:
        local = rescore_local(local)
    s, e = spec.stats, spec.engine
    sources = [f"{len(spec.data.files)} file(s)"] + ([f"--hf {spec.data.hf.id}"] if spec.data.hf else [])
    log(f"check: from results.json (run spec): data {', '.join(sources)}; scorers {','.join(spec.scorer_names)} "
        f"with their options; n_boot={s.n_boot} seed={s.seed} n_perm={s.n_perm} slice_by={s.slice_by} "
        f"level={s.level}; engine={e.engine} device={e.device}")
    log("check: from this command line and environment (never from results.json): "
        + "; ".join(local.describe(spec.scorer_names)) + ("; scores recomputed (--rescore)" if rescore else ""))
    log(f"check: numbers must agree within ±{tolerance:g} (absolute); everything else exactly")
    rerun = run_spec(spec, local, log=log)
    fresh = sum(x.n_scored for x in rerun.results.scorers)
    if fresh and not rescore:
        log(f"note: {fresh} pairs were not in the cache and were scored anew")
    return diff(comparable(recorded), comparable(rerun.results), tolerance=tolerance), rerun
