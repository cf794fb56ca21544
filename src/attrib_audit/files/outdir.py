"""The one writer of every output: staged beside its target, checked, then moved into place whole.

Why one writer: an output path comes from a flag that can be mistyped (`--export pool.labels.sqlite`), and a
folder may hold a symlink someone planted (`plots -> ~`). So every command writes through here, and here:

- a file or folder is written to a temporary name beside the target and renamed over it, so a failure leaves
  the earlier result whole; files and folders get the permissions the umask gives (not tempfile's 0600/0700);
- nothing is written onto an input of the same command (`command_outputs` registers them), through a symbolic
  link, or onto an existing file attrib-audit did not write (`--force` allows the last two: the link itself is
  replaced, never its target);
- what was written is recorded in the folder's manifest `.attrib-audit.json` (name → sha256 of each file), so a
  later run replaces or removes only entries that are still exactly as attrib-audit left them;
- two runs publishing into the same folder take turns on a lock of the folder (fcntl.flock).

Every artefact derived from one audit carries the `run_id` of its results.json, so a reader can tell one run's
files from another's (`run_id_of`).
"""
from __future__ import annotations

import contextvars
import fcntl
import json
import os
import shutil
import stat
import tempfile
import threading
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from attrib_audit.errors import InputError
from attrib_audit.files.hashing import file_sha256
from attrib_audit.files.jsonfile import read_json

# what one audit writes or derives from its scores: replaced as a set, never carried into a new run's folder
RUN_ARTEFACTS = ("results.json", "scores.parquet", "bootstrap.npz", "agreement.json", "thresholds.json", "report.md",
                 "report.html", "plots")
REPORT_FILES = ("report.md", "report.html", "plots")  # what `report` writes (and replaces) in its folder
PARQUET_RUN_KEY = b"attrib_audit.run_id"
MANIFEST = ".attrib-audit.json"


class OutputError(InputError):
    """The output location cannot hold the results (an existing file, a file on the path, not writable)."""

    kind = "output error"


# ---- what this command reads, and whether --force was given ------------------------------------------------

_COMMAND: contextvars.ContextVar[tuple[frozenset[tuple[int, int]], bool]] = contextvars.ContextVar(
    "attrib_audit_outputs", default=(frozenset(), False))


def _key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL byte in the name, so no such file
        return None
    return st.st_dev, st.st_ino


@contextmanager
def command_outputs(inputs: Iterable[str | Path] = (), force: bool = False) -> Iterator[None]:
    """While one command runs: the files it reads (never written onto) and whether --force was given."""
    keys = frozenset(k for k in (_key(Path(p)) for p in inputs) if k is not None)
    token = _COMMAND.set((keys, force))
    try:
        yield
    finally:
        _COMMAND.reset(token)


def _forced() -> bool:
    return _COMMAND.get()[1]


def _is_input(path: Path, inputs: Iterable[str | Path] = ()) -> bool:
    if path.is_symlink():
        return False  # the link itself is what would be replaced, never its target
    key = _key(path)
    return key is not None and (key in _COMMAND.get()[0] or key in {_key(Path(p)) for p in inputs})


# ---- the manifest: what attrib-audit wrote in a folder -------------------------------------------------------

def _fingerprint(path: Path) -> dict | None:
    """What a manifest records of an entry: a file's sha256, a folder's files' sha256s; None for a symlink
    anywhere (attrib-audit never writes one) or anything else."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return {"sha256": file_sha256(path)}
    if stat.S_ISDIR(mode):
        files = {}
        for root, dirs, names in os.walk(path):  # never into a linked folder
            for name in dirs + names:
                entry = Path(root) / name
                m = os.lstat(entry).st_mode
                if not (stat.S_ISREG(m) or stat.S_ISDIR(m)):
                    return None  # a symlink (or anything else) inside: attrib-audit wrote no such thing
                if stat.S_ISREG(m):
                    files[entry.relative_to(path).as_posix()] = file_sha256(entry)
        return {"files": dict(sorted(files.items()))}
    return None


def _manifest(folder: Path) -> dict[str, dict]:
    path = folder / MANIFEST
    if path.is_symlink() or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # unreadable or crafted: it vouches for nothing here
        return {}
    written = data.get("written") if isinstance(data, dict) else None
    return {k: v for k, v in written.items() if isinstance(v, dict)} if isinstance(written, dict) else {}


def _save_manifest(folder: Path, written: dict[str, dict]) -> None:
    text = json.dumps({"about": "files attrib-audit wrote here; it replaces or removes only these, unchanged",
                       "written": dict(sorted(written.items()))}, indent=1)
    tmp = _temp_file(folder, MANIFEST)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, folder / MANIFEST)
    finally:
        tmp.unlink(missing_ok=True)


def _ours(folder: Path, name: str, manifest: dict[str, dict]) -> bool:
    """The entry is exactly as attrib-audit wrote it (so replacing or removing it loses nothing of the user's)."""
    return name in manifest and _fingerprint(folder / name) == manifest[name]


# ---- permissions, staging, locking --------------------------------------------------------------------------

_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    with _UMASK_LOCK:  # reading the umask means setting it: keep other threads out for that instant
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _temp_file(folder: Path, name: str) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.partial-", dir=folder)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; an output gets what any new file would
    return Path(tmp)


def _temp_dir(folder: Path, name: str) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=folder))
    os.chmod(tmp, 0o777 & ~_umask())
    return tmp


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold `folder`'s lock: a second run publishing there waits until this one has finished. The folder itself
    is locked (fcntl.flock on its descriptor), so no lock file is left behind."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise OutputError(f"cannot lock {folder} for writing ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# ---- checks ---------------------------------------------------------------------------------------------------

def new_run_id() -> str:
    return uuid.uuid4().hex


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _refuse(target: Path, shown: str, manifest: dict[str, dict], inputs: Iterable[str | Path] = (),
            force: bool | None = None) -> None:
    """Refuse to replace `target` (named `shown` in the message) unless that loses nothing the user has."""
    if not os.path.lexists(target):
        return
    if _is_input(target, inputs):
        raise OutputError(f"{shown} is an input of this command; attrib-audit never writes onto what it reads: "
                          "choose another output path")
    if _ours(target.parent, target.name, manifest) or (_forced() if force is None else force):
        return
    if target.is_symlink():
        raise OutputError(f"{shown} is a symbolic link; attrib-audit never writes through one: remove it, or pass "
                          "--force to replace the link itself (never its target)")
    raise OutputError(f"{shown} exists and attrib-audit did not write it (or it changed since); move it away, or "
                      "pass --force to replace it")


def check_out_dir(out: str | Path, flag: str = "--out", names: Iterable[str] = ()) -> Path:
    """Fail in one line, before any work, if `out` cannot become an output folder holding `names`."""
    out = Path(out)
    if out.is_symlink() and not _forced():
        raise OutputError(f"{flag} {out} is a symbolic link; attrib-audit never writes through one: give a real "
                          "folder, or pass --force to replace the link itself (never its target)")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{flag} {out} is an existing file, not a folder; give a folder path")
    if _is_input(out):
        raise OutputError(f"{flag} {out} is an input of this command; choose another output folder")
    if out.is_dir() and not out.is_symlink():
        manifest = _manifest(out)
        for name in names:
            _refuse(out / name, f"{flag} {out}: {name}", manifest)
    where = _nearest_existing(out.parent)
    if not where.is_dir():
        raise OutputError(f"{flag} {out}: {where} is a file, so no folder can be made under it")
    try:  # the real test of writability (os.access is wrong for root and for read-only mounts)
        tempfile.TemporaryDirectory(dir=where, prefix=".attrib-audit-probe-").cleanup()
    except OSError as exc:
        raise OutputError(f"{flag} {out}: cannot write in {where} ({exc.strerror or exc})") from None
    return out


def check_out_file(out: str | Path, flag: str = "--out", inputs: Iterable[str | Path] = (),
                   force: bool | None = None) -> Path:
    """Like check_out_dir, for a single output file (`score --out scores.parquet`)."""
    out = Path(out)
    if out.is_dir() and not out.is_symlink():
        raise OutputError(f"{flag} {out} is a folder; give a file path such as {out / 'scores.parquet'}")
    folder = out.parent if str(out.parent) else Path(".")
    check_out_dir(folder, flag=f"{flag} {out}: the folder")
    _refuse(out, f"{flag} {out}", _manifest(folder) if folder.is_dir() else {}, inputs, force)
    return out


# ---- publishing ---------------------------------------------------------------------------------------------

class StagedFile:
    """One output file written whole: `tmp` (beside `path`, same suffix) is written, then `publish` moves it into
    place, or `discard` drops it (a failed run leaves the earlier file as it was)."""

    def __init__(self, path: str | Path, flag: str = "--out", inputs: Iterable[str | Path] = (),
                 force: bool | None = None) -> None:
        self.inputs, self.force, self.flag = tuple(inputs), force, flag
        self.path = check_out_file(path, flag, self.inputs, force)
        self.folder = self.path.absolute().parent
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.partial-", suffix=self.path.suffix, dir=self.folder)
        os.close(fd)
        self.tmp = Path(name)
        os.chmod(self.tmp, 0o666 & ~_umask())  # mkstemp makes 0600; an output gets what any new file would

    def publish(self) -> Path:
        try:
            with _locked(self.folder):
                manifest = _manifest(self.folder)
                target = self.folder / self.path.name
                _refuse(target, f"{self.flag} {self.path}", manifest, self.inputs, self.force)
                if target.is_symlink():
                    target.unlink()  # --force: the link goes, its target is never touched
                os.replace(self.tmp, target)
                manifest[target.name] = _fingerprint(target) or {}
                _save_manifest(self.folder, manifest)
        finally:
            self.discard()
        return self.path

    def discard(self) -> None:
        self.tmp.unlink(missing_ok=True)


@contextmanager
def output_file(path: str | Path, flag: str = "--out", inputs: Iterable[str | Path] = (),
                force: bool | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path` to write the whole file to; moved into place when the block ends.

    `inputs`: files this command reads besides those `command_outputs` registered; `force`: None takes --force.
    """
    staged = StagedFile(path, flag, inputs, force)
    try:
        yield staged.tmp
    except BaseException:
        staged.discard()
        raise
    staged.publish()


def write_text_atomic(path: Path, text: str, flag: str = "--out", force: bool | None = None) -> None:
    """Write `text` whole through the one writer: a reader sees the old file or the new one, never half of one."""
    with output_file(path, flag, force=force) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _cwd_or_above(path: Path) -> bool:
    here = Path.cwd().resolve()
    return path.resolve() == here or path.resolve() in here.parents


def _remove(path: Path) -> None:
    """Remove an entry attrib-audit wrote (checked: no symlink in it), or a link --force replaces."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _swap(tmp: Path, out: Path) -> None:
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.replace(out, old / out.name)
    try:
        os.replace(tmp, out)
    except OSError:
        os.replace(old / out.name, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _publish(tmp: Path, out: Path, flag: str, replaces: set[str]) -> None:
    new = {e.name for e in tmp.iterdir()}
    if out.is_symlink():
        _refuse(out, f"{flag} {out}", {})  # raises without --force
        out.unlink()
    if _is_input(out):
        raise OutputError(f"{flag} {out} is an input of this command; choose another output folder")
    if not os.path.lexists(out):
        _save_manifest(tmp, {n: _fingerprint(tmp / n) or {} for n in new})
        os.replace(tmp, out)
        return
    if not out.is_dir():
        raise OutputError(f"{flag} {out} is an existing file, not a folder; give a folder path")
    manifest = _manifest(out)
    for name in sorted(new):
        _refuse(out / name, f"{flag} {out}: {name}", manifest)
    stale = {n for n in replaces - new if os.path.lexists(out / n) and _ours(out, n, manifest)}
    written = {n: v for n, v in manifest.items() if n not in stale and n not in new and os.path.lexists(out / n)}
    written.update({n: _fingerprint(tmp / n) or {} for n in new})
    entries = {e.name for e in out.iterdir()} - {MANIFEST}
    if entries <= new | stale and not _cwd_or_above(out):
        _save_manifest(tmp, {n: written[n] for n in new})
        _swap(tmp, out)  # the folder held only what this output replaces: one rename
        return
    # other files stay: results.json goes first and comes back last, so at any moment the folder has the earlier
    # complete set, no results.json, or the new complete set
    if "results.json" in new and os.path.lexists(out / "results.json"):
        _remove(out / "results.json")
    for name in sorted(stale):
        _remove(out / name)
    for name in sorted(new, key=lambda n: n == "results.json"):
        target = out / name
        if os.path.lexists(target) and (target.is_symlink() or target.is_dir() or (tmp / name).is_dir()):
            _remove(target)  # checked above: ours, or --force
        os.replace(tmp / name, target)
    _save_manifest(out, written)


@contextmanager
def staged_dir(out: str | Path, flag: str = "--out", replaces: Iterable[str] = ()) -> Iterator[Path]:
    """Yield an empty temporary folder beside `out` to write a set of outputs into, then publish them in `out`.

    `replaces`: names of the same set (an audit's RUN_ARTEFACTS) that an earlier run left and this one does not
    write; they are removed when attrib-audit wrote them and they are unchanged. A new `out`, or one holding only
    what this run replaces, is swapped in one rename; otherwise the new entries are moved in, results.json last.
    """
    out = check_out_dir(out, flag).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_dir(out.parent, out.name)
    try:
        yield tmp
        with ExitStack() as held:
            held.enter_context(_locked(out.parent))  # the entry `out` of its parent may be swapped
            if out.is_dir() and not out.is_symlink():
                held.enter_context(_locked(out))  # and single files published into it wait
            try:
                _publish(tmp, out, flag, set(replaces))
            except OSError as exc:
                raise OutputError(f"{flag} {out}: cannot publish ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
