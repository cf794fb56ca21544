"""`models install judge`: concatenating byte-range parts into one GGUF, checked before it is moved into place."""
from __future__ import annotations

import hashlib

import pytest

from attrib_audit.scorers import pinned
from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.judge import models
from fake_weights import pins_for


def _split(data: bytes, tmp_path, n: int = 3):
    size = -(-len(data) // n)
    parts = []
    for i in range(n):
        p = tmp_path / f"part{i + 1:02d}.bin"
        p.write_bytes(data[i * size:(i + 1) * size])
        parts.append(p)
    return parts


def test_assemble_concatenates_parts_into_a_loadable_gguf(tmp_path, monkeypatch):
    src = models.smollm2_gguf_path()
    data = open(src, "rb").read()
    parts = _split(data, tmp_path)
    monkeypatch.setattr(pinned, "installed_parts", lambda pins: parts)
    assert models.judge_gguf_path() is None
    out = models.assemble_judge(pins_for(parts, "judge", pinned.JUDGE.target))
    assert out == models.judge_gguf_path() and models.resolve_judge().location == out
    assert hashlib.sha256(open(out, "rb").read()).digest() == hashlib.sha256(data).digest()
    assert "smollm2" in models.gguf_name(out).lower()


def test_assemble_rejects_parts_that_are_not_a_gguf(tmp_path, monkeypatch):
    parts = _split(b"PK\x03\x04" + b"x" * 100, tmp_path)
    monkeypatch.setattr(pinned, "installed_parts", lambda pins: parts)
    with pytest.raises(ScorerUnavailable, match="not a GGUF"):
        models.assemble_judge(pins_for(parts, "judge", pinned.JUDGE.target))
    assert models.judge_gguf_path() is None


def test_judge_absent_is_a_one_line_reason(monkeypatch):
    from attrib_audit.scorers import get_scorer

    monkeypatch.delenv("ATTRIB_AUDIT_JUDGE_GGUF", raising=False)
    with pytest.raises(ScorerUnavailable, match="models install judge"):
        get_scorer("judge")
