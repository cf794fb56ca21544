"""A cache in front of the plot functions: a figure is a pure function of the numbers it is given, so a report
rebuilt from the same results reuses each SVG instead of importing matplotlib and drawing it again.

An entry is keyed by sha256 of (the report code, matplotlib's version, the plot style, the plot function, every
argument but the plots folder, whether PNGs are wanted): a change to any of them draws anew. Entries live in
$ATTRIB_AUDIT_HOME/figures, one JSON file each, written whole (temp file + rename). The cache only saves time: an
entry that is unreadable or not of this layout is drawn again and replaced, and a home that cannot be written
just draws every time. A cached name is used as a file name only if it is a plain one. The folder keeps the
MAX_ENTRIES entries used last.

The folder is not trusted: an entry is opened only as a regular file of at most MAX_ENTRY_BYTES, holds its own key
(checked against its file name and the figure asked for) and a sha256 of its content, and its SVG is used only if it
is inert (no script, event handler, foreign object or outside link); anything else is drawn again, with a one-line
warning. Those digests are unkeyed: they catch accidents (a truncated or copied entry), not tampering, so no safety
rests on them: the SVG check does not, and `build_session` catches two figures claiming one file name (an entry
whose name was changed) and draws the whole report again without the cache.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import os
import re
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, ParamSpec, TypeVar

import numpy as np

from attrib_audit import __version__
from attrib_audit.files.paths import figures_path
from attrib_audit.files.regular import read_regular
from attrib_audit.report import style
from attrib_audit.report.blocks import Figure

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")
_LAYOUT = 2  # the entry layout below; part of the key, so a new layout never reads an old one
MAX_ENTRIES = 2000  # about 80 MB of SVG; beyond it the entries used longest ago are deleted
MAX_ENTRY_BYTES = 16 << 20  # a report's largest figure (with its PNG) is well under 1 MB
# What an SVG matplotlib writes never holds: code, event handlers, embedded HTML, links outside the file
_ACTIVE_SVG = re.compile(r"<\s*(script|foreignObject|iframe|object|embed|a|animate|set|handler|listener)\b"
                         r"|\bon[a-z]+\s*="
                         r"|javascript:|href\s*=\s*[\"'](?!#|data:image/png;base64,)", re.IGNORECASE)
_FIELDS = ("name", "caption", "alt", "width_px", "svg", "png")


class _Session:
    """One report build: which figure key wrote each plot file, whether two keys claimed one, whether to bypass."""

    def __init__(self) -> None:
        self.files: dict[Path, str] = {}
        self.conflict = False
        self.bypass = False


_SESSION: list[_Session] = []


@contextlib.contextmanager
def build_session() -> Any:
    """Track the figures of one report build; `.conflict` afterwards says a cached entry claimed a file another
    figure wrote (a renamed entry), so the caller draws again with `.bypass` set."""
    session = _Session()
    _SESSION.append(session)
    try:
        yield session
    finally:
        _SESSION.remove(session)


class _Uncacheable(Exception):
    """An argument with no canonical form (a function, an open file): the figure is drawn without the cache."""


def _canonical(obj: Any) -> Any:
    """A JSON value that is equal for equal arguments and keeps order (a plot draws its rows in order)."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)
    if isinstance(obj, np.generic):
        return _canonical(obj.item())
    if isinstance(obj, np.ndarray):
        return ["ndarray", str(obj.dtype), list(obj.shape), _canonical(obj.tolist())]
    if isinstance(obj, dict):
        return ["dict", [[_canonical(k), _canonical(v)] for k, v in obj.items()]]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [_canonical(v) for v in obj]]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [type(obj).__qualname__, [[f.name, _canonical(getattr(obj, f.name))] for f in dataclasses.fields(obj)]]
    raise _Uncacheable(type(obj).__name__)


@functools.lru_cache(maxsize=1)
def _code_key() -> str:
    """The report code and the drawing library: a new version of either draws every figure anew."""
    h = hashlib.sha256(f"{_LAYOUT}\0{__version__}\0{metadata.version('matplotlib')}\0".encode())
    h.update(repr(sorted(style.RC.items())).encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _digest(data: dict) -> str:
    return hashlib.sha256(json.dumps([data.get(k) for k in _FIELDS], ensure_ascii=True).encode()).hexdigest()


def _why_not(data: Any, key: str, png: bool) -> str | None:
    """Why a parsed entry cannot be used for the figure `key`, or None when it can."""
    if not (isinstance(data, dict) and isinstance(data.get("name"), str) and _NAME.fullmatch(data["name"])
            and all(isinstance(data.get(k), str) for k in ("caption", "alt", "svg", "key", "sha256"))
            and isinstance(data.get("width_px"), int) and not isinstance(data.get("width_px"), bool)
            and 0 < data["width_px"] < 100_000
            and (isinstance(data.get("png"), str) if png else data.get("png") is None)):
        return "not an entry of this layout"
    if data["key"] != key:
        return "it holds another figure's key"
    if data["sha256"] != _digest(data):
        return "its content does not match its digest"
    try:
        for k in ("caption", "alt", "svg"):
            data[k].encode("utf-8")
    except UnicodeEncodeError:
        return "it holds text that is not valid Unicode"
    if _ACTIVE_SVG.search(data["svg"]) or not data["svg"].lstrip().startswith(("<?xml", "<svg")):
        return "its SVG is not a plain drawing"
    return None


def _read(entry: Path, key: str, png: bool) -> dict | None:
    """The entry for `key`, or None: absent, or unusable (then a one-line warning says why; it is drawn again)."""
    try:
        data = json.loads(read_regular(entry, MAX_ENTRY_BYTES))
        why = _why_not(data, key, png)
    except (FileNotFoundError, NotADirectoryError):  # no entry (or no usable home): nothing to warn about
        return None
    except (OSError, ValueError, RecursionError) as exc:
        why = f"unreadable ({exc.__class__.__name__})"
    if why is None and png:
        try:
            data["png"] = base64.b64decode(data["png"], validate=True)
        except (binascii.Error, ValueError):
            why = "its PNG is not base64"
    if why is not None:
        warnings.warn(f"figure cache entry {entry} ignored ({why}): drawn again", stacklevel=2)
        return None
    return data


def _write(entry: Path, data: dict) -> None:
    tmp = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{entry.name}.", dir=entry.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, entry)
        tmp = None
        _prune(entry.parent)
    except OSError:
        pass  # a read-only or full home: draw again next time
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _prune(folder: Path) -> None:
    """Keep the MAX_ENTRIES entries used last (a hit refreshes an entry's mtime): the cache stays bounded."""
    entries = list(folder.glob("*.json"))
    if len(entries) <= MAX_ENTRIES:
        return
    used = {}
    for p in entries:
        with contextlib.suppress(OSError):  # another process may prune at the same time
            used[p] = p.stat().st_mtime_ns
    for p in sorted(used, key=used.__getitem__)[:len(used) - MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            p.unlink()


_P = ParamSpec("_P")
_R = TypeVar("_R", bound="Figure | None")


def cached_figure(draw: Callable[_P, _R]) -> Callable[_P, _R]:
    """Wrap a plot function `draw(..., plots, ...)` that saves one figure under `plots` (via style.save)."""
    signature = inspect.signature(draw)

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        plots = Path(bound.arguments["plots"])
        png = style.png_wanted()
        try:
            given = [[k, _canonical(v)] for k, v in bound.arguments.items() if k != "plots"]
        except _Uncacheable:
            return draw(*args, **kwargs)
        key = hashlib.sha256(json.dumps([_code_key(), draw.__module__, draw.__qualname__, png, given],
                                        ensure_ascii=True, allow_nan=False).encode()).hexdigest()
        entry = figures_path() / f"{key}.json"
        session = _SESSION[-1] if _SESSION else None
        hit = None if session is not None and session.bypass else _read(entry, key, png)
        svg = None if hit is None else plots / f"{hit['name']}.svg"
        if session is not None and svg is not None and session.files.get(svg, key) != key:
            session.conflict = True  # two figures claim one file: the build is drawn again without the cache
        if hit is not None and svg is not None:
            with contextlib.suppress(OSError):
                os.utime(entry)  # used now: the last entry pruning would remove
            plots.mkdir(parents=True, exist_ok=True)
            if session is not None:
                session.files[svg] = key
            svg.write_text(hit["svg"], encoding="utf-8")
            png_path = None
            if png:
                png_path = plots / f"{hit['name']}.png"
                png_path.write_bytes(hit["png"])
            return Figure(name=hit["name"], caption=hit["caption"], png=png_path, svg=svg, alt=hit["alt"],
                          width_px=hit["width_px"])
        fig = draw(*args, **kwargs)
        if isinstance(fig, Figure):
            if session is not None:
                if session.files.get(fig.svg, key) != key:
                    session.conflict = True
                session.files[fig.svg] = key
            data = {"name": fig.name, "caption": fig.caption, "alt": fig.alt, "width_px": fig.width_px,
                    "svg": fig.svg.read_text(encoding="utf-8"),
                    "png": base64.b64encode(fig.png.read_bytes()).decode() if fig.png else None}
            _write(entry, {**data, "key": key, "sha256": _digest(data)})
        return fig

    return wrapper
