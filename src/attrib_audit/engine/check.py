"""`audit --check DIR`: rerun a recorded audit from the cache and confirm it gives the same numbers.

Reads DIR/results.json, verifies every data file still has its recorded sha256, reloads each file
with the load options recorded beside it, reruns the recorded config (scorers, options, seed, n_boot)
and compares every statistic exactly. Pairs missing from the cache are scored anew and reported.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

COMPARED = ("scorers_signatures", "slices", "auroc", "paired", "truncation", "failures", "skipped")


def _label(row: Any, i: int) -> str:
    if isinstance(row, dict):
        ident = [f"{k}={row[k]}" for k in ("scorer", "scorer_a", "scorer_b", "slice", "file", "row") if k in row]
        if ident:
            return "[" + ", ".join(ident) + "]"
    return f"[{i}]"


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Human-readable differences between two JSON values (recorded `a`, rerun `b`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: {'missing in record' if k not in a else 'missing in rerun'}")
            else:
                out += diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} entries recorded, {len(b)} on rerun"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}{_label(x, i)}")]
    return [] if a == b else [f"{path}: recorded {a!r}, rerun {b!r}"]


def _comparable(results: dict) -> dict:
    out = {k: results.get(k) for k in COMPARED if k in results}
    out["scorers_signatures"] = {s["scorer"]: s["signature"] for s in results.get("scorers", [])}
    return out


def check(folder: str | Path, cache_path: str | None = None, log=print) -> tuple[list[str], dict]:
    """Differences between DIR/results.json and a rerun (empty: reproduced), and the rerun's results."""
    from attrib_audit.audit import AuditConfig, _jsonable, run_audit
    from attrib_audit.data import PairTable, file_sha256, load_pairs

    recorded = json.loads((Path(folder) / "results.json").read_text())
    problems = []
    tables = []
    for entry in recorded.get("data", []):
        path = Path(entry["path"])
        if not path.exists():
            problems.append(f"data file {path} is gone")
            continue
        sha = file_sha256(path)
        if sha != entry.get("sha256"):
            problems.append(f"data file {path} changed: sha256 recorded {entry.get('sha256')}, now {sha}")
            continue
        if "load" not in entry:
            problems.append(f"data file {path}: results.json does not record how it was loaded")
            continue
        tables.append(load_pairs([path], **entry["load"]))
    if problems or not tables:
        return problems or ["results.json records no data files"], {}
    cfg = recorded["config"]
    from attrib_audit.external.sources import ScoreSource

    sources = cfg.get("precomputed") or {}
    given = [n for n, d in sources.items() if "column" not in d]
    if given:  # scores handed to run_audit from Python: nothing on disk to replay them from
        return [f"precomputed scorer {given[0]!r} was given from Python; only file and column sources can be checked"], {}
    config = AuditConfig(scorers=tuple(cfg["scorers"]), slice_by=cfg["slice_by"], n_boot=cfg["n_boot"],
                         seed=cfg["seed"], batch_size=cfg.get("batch_size"), device=cfg.get("device", "cpu"),
                         cache_path=cache_path or cfg.get("cache"), scorer_options=cfg.get("scorer_options", {}),
                         quiet=True, precomputed={n: ScoreSource.from_dict(d) for n, d in sources.items()},
                         on_error=cfg.get("on_error", "fail"))
    rerun = run_audit(PairTable.concat(tables), config, log=log).results
    rerun = json.loads(json.dumps(rerun, allow_nan=False, default=_jsonable))
    fresh = sum(s["n_scored"] for s in rerun["scorers"])
    if fresh:
        log(f"note: {fresh} pairs were not in the cache and were scored anew")
    return diff(_comparable(recorded), _comparable(rerun)), rerun


def cmd_check(args: argparse.Namespace) -> int:
    import sys

    diffs, rerun = check(args.check, cache_path=args.cache, log=lambda m: print(m, file=sys.stderr))
    if diffs:
        print(f"NOT reproduced: {len(diffs)} difference(s) from {Path(args.check) / 'results.json'}")
        for d in diffs:
            print(f"  {d}")
        return 1
    n = sum(s["n_pairs"] for s in rerun["scorers"])
    print(f"reproduced: {len(rerun['auroc'])} AUROC rows and {len(rerun['paired'])} paired differences identical "
          f"({n} scorer×pair scores, {sum(s['n_cached'] for s in rerun['scorers'])} unique from the cache)")
    return 0
