"""Output folders: checked before any work, written to a temporary folder beside the target, moved into place.

A failure (a crash, a full disk, Ctrl-C) then leaves the folder with either the whole earlier
result set or the whole new one, never results.json beside a stale scores.parquet. Every artefact
derived from one audit carries the `run_id` of its results.json, so a reader can tell one run's files
from another's (`run_id_of`).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from attrib_audit.errors import InputError
from attrib_audit.files.jsonfile import read_json

# what one audit writes or derives from its scores: replaced as a set, never carried into a new run's folder
RUN_ARTEFACTS = ("results.json", "scores.parquet", "bootstrap.npz", "agreement.json", "thresholds.json", "report.md",
                 "report.html", "plots")
PARQUET_RUN_KEY = b"attrib_audit.run_id"


class OutputError(InputError):
    """The output location cannot hold the results (an existing file, a file on the path, not writable)."""

    kind = "output error"


def new_run_id() -> str:
    return uuid.uuid4().hex


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_out_dir(out: str | Path, flag: str = "--out") -> Path:
    """Fail in one line, before any scoring, if `out` cannot become a results folder."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{flag} {out} is an existing file, not a folder; give a folder path")
    where = _nearest_existing(out.parent)
    if not where.is_dir():
        raise OutputError(f"{flag} {out}: {where} is a file, so no folder can be made under it")
    try:  # the real test of writability (os.access is wrong for root and for read-only mounts)
        tempfile.TemporaryDirectory(dir=where, prefix=".attrib-audit-probe-").cleanup()
    except OSError as exc:
        raise OutputError(f"{flag} {out}: cannot write in {where} ({exc.strerror or exc})") from None
    return out


def check_out_file(out: str | Path, flag: str = "--out") -> Path:
    """Like check_out_dir, for a single output file (`score --out scores.parquet`)."""
    out = Path(out)
    if out.is_dir():
        raise OutputError(f"{flag} {out} is a folder; give a file path such as {out / 'scores.parquet'}")
    check_out_dir(out.parent if str(out.parent) else ".", flag=f"{flag} {out}: the folder")
    return out


def _only_run_artefacts(out: Path) -> bool:
    """`out` holds nothing but an earlier run's artefacts, and is not the working folder or one above it."""
    here = Path.cwd().resolve()
    if out.resolve() == here or out.resolve() in here.parents:
        return False
    return all(e.name in RUN_ARTEFACTS for e in out.iterdir())


def _swap(tmp: Path, out: Path) -> None:
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.replace(out, old / out.name)
    try:
        os.replace(tmp, out)
    except OSError:
        os.replace(old / out.name, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _move_in(tmp: Path, out: Path) -> None:
    """Into a folder that also holds other files: results.json goes first and comes back last, so at any moment
    the folder has the earlier complete set, no results.json, or the new complete set."""
    (out / "results.json").unlink(missing_ok=True)
    for name in RUN_ARTEFACTS:
        if name != "results.json" and not (tmp / name).exists() and (out / name).exists():
            shutil.rmtree(out / name) if (out / name).is_dir() else (out / name).unlink()
    for entry in sorted(tmp.iterdir(), key=lambda e: e.name == "results.json"):
        os.replace(entry, out / entry.name)


@contextmanager
def staged_dir(out: str | Path) -> Iterator[Path]:
    """Yield an empty temporary folder beside `out` to write a run's artefacts into, then publish them.

    A new `out`, or one that holds only an earlier run's artefacts, is replaced in one rename. A folder that also
    holds other files (notes, provenance.json, probe.json, or the working folder) keeps them: the artefacts are
    moved in one by one, results.json last (see `_move_in`); the earlier run's derived files are removed.
    """
    out = check_out_dir(out).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        yield tmp
        if not out.exists():
            os.replace(tmp, out)
        elif _only_run_artefacts(out):
            _swap(tmp, out)
        else:
            _move_in(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_text_atomic(path: Path, text: str) -> None:
    """Write beside `path` and rename over it: a reader sees the old file or the new one, never half of one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.partial-", dir=path.absolute().parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def run_id_of(path: Path) -> str | None:
    """The run id an artefact carries (None: it has none, e.g. written by an older version)."""
    try:
        if path.suffix == ".json":
            return read_json(path).get("run_id")
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            meta = pq.read_schema(path).metadata or {}
            return meta[PARQUET_RUN_KEY].decode() if PARQUET_RUN_KEY in meta else None
        if path.suffix == ".npz":
            import numpy as np

            with np.load(path) as z:
                return str(z["run_id"]) if "run_id" in z.files else None
    except Exception:  # noqa: BLE001 - an unreadable artefact carries no run id; the caller names it
        return None
    return None
