"""The packaged demo set: AttributionBench (Apache-2.0) and BEGIN WoW (CC-BY-4.0) samples."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from attrib_audit.data.loaders import load_pairs
from attrib_audit.data.records import PairTable

DEMO_FILES = {"attributionbench_id.jsonl": "attribution", "begin_wow.jsonl": "boundary-dialogue"}


def demo_paths() -> list[Path]:
    """The packaged demo files (AttributionBench sample, then BEGIN sample), wherever the package is installed.

    Returns:
        The two paths.

    Examples:
        >>> [p.name for p in demo_paths()]
        ['attributionbench_id.jsonl', 'begin_wow.jsonl']
    """
    root = resources.files("attrib_audit") / "data" / "demo"
    return [Path(str(root / name)) for name in DEMO_FILES]


def load_demo() -> PairTable:
    """Both demo files, each tagged with its construct (they are never pooled)."""
    return PairTable.concat([load_pairs(p, construct=DEMO_FILES[p.name]) for p in demo_paths()])
