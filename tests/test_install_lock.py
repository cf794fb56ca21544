"""The README's setup command installs through requirements/lock.txt, and the lock pins every package it needs.

A dependency added to pyproject.toml (or pulled in by a new release of one) but missing from the lock would
install at whatever version the registry serves that day: the failure a fresh machine hit before the lock.
"""
import re
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock.txt"


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line.strip())
            assert m, f"lock line {line!r} is not NAME==VERSION"
            name = canonicalize_name(m.group(1))
            assert name not in pins, f"{name} pinned twice"
            pins[name] = m.group(2)
    return pins


def needed(dist: str, extras: frozenset[str], seen: set) -> None:
    """Every distribution `dist[extras]` requires on this machine, transitively (markers evaluated here)."""
    key = (canonicalize_name(dist), extras)
    if key in seen:
        return
    seen.add(key)
    for text in metadata.requires(dist) or []:
        req = Requirement(text)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
            continue
        needed(req.name, frozenset(req.extras), seen)


def test_setup_command_is_one_line_of_the_readme_and_ci_runs_it():
    readme = (ROOT / "README.md").read_text()
    setup = readme[readme.index("## Setup"):]
    command = re.search(r"```bash\n(.+?)\n```", setup, re.S).group(1).strip()
    assert "-c requirements/lock.txt" in command and '".[dev]"' in command
    assert command in (ROOT / ".ci" / "run").read_text()


def test_lock_pins_every_package_the_dev_extra_needs():
    seen: set = set()
    needed("attrib-audit", frozenset({"dev"}), seen)
    names = {name for name, _ in seen} - {"attrib-audit"}
    missing = sorted(names - set(lock_pins()))
    assert len(names) > 50 and not missing, f"not in {LOCK.name}: {missing}; run tools/refresh-lock"
