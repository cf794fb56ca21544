"""The shipped illustrative ASQA-format set: 30 fictional questions and two systems' answers.

Written for attrib-audit (no ASQA text): `tuned.jsonl` paraphrases `base.jsonl` heavily and,
in some answers, moves citations to a passage that does not state the claim or hedges.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def example_paths() -> dict[str, Path]:
    root = resources.files("attrib_audit") / "probe" / "examples"
    return {"data": Path(str(root / "asqa_illustrative.jsonl")), "base": Path(str(root / "base.jsonl")),
            "tuned": Path(str(root / "tuned.jsonl"))}
