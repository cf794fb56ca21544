"""Every model scorer's signature carries a sha256 of its weight files and the versions of the libraries that
run them, so a cached score is never replayed for other weights or code; the hashes are cached per file."""
from __future__ import annotations

import os
import shutil

from attrib_audit.files import hashing
from attrib_audit.scorers import get_scorer, resolve_minilm
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.resolve import Resolved


def test_fingerprint_follows_the_bytes_and_is_cached_per_path_mtime_size(tmp_path, monkeypatch):
    model = tmp_path / "m"
    (model / "1_Pooling").mkdir(parents=True)
    (model / "config.json").write_text('{"a": 1}')
    (model / "model.safetensors").write_bytes(b"weights" * 1000)
    (model / "1_Pooling" / "config.json").write_text('{"pool": "mean"}')
    calls = []
    real = hashing.file_sha256
    monkeypatch.setattr(hashing, "file_sha256", lambda p: calls.append(p) or real(p))
    first = weights_fingerprint(Resolved(str(model), "path"))
    assert len(calls) == 3
    assert weights_fingerprint(Resolved(str(model), "path")) == first and len(calls) == 3  # all from the cache
    copy = tmp_path / "copy"
    shutil.copytree(model, copy)
    assert weights_fingerprint(Resolved(str(copy), "path")) == first  # same bytes, same fingerprint
    data = bytearray((model / "model.safetensors").read_bytes())
    data[10] ^= 1  # one flipped bit, same size
    (model / "model.safetensors").write_bytes(bytes(data))
    os.utime(model / "model.safetensors", ns=(1, 1))
    assert weights_fingerprint(Resolved(str(model), "path")) != first
    (copy / "1_Pooling" / "config.json").write_text('{"pool": "max!"}')  # a nested file counts too
    assert weights_fingerprint(Resolved(str(copy), "path")) != first


def test_model_signatures_carry_weights_and_library_versions():
    fp = weights_fingerprint(resolve_minilm())
    libs = library_versions("sentence-transformers", "transformers", "torch")
    assert "torch=" in libs and "=none" not in libs
    assert f"weights={fp}:{libs}" in get_scorer("minilm").signature
    bert_libs = library_versions('bert-score', 'transformers', 'torch')
    assert f"weights={fp}:{bert_libs}" in get_scorer("bertscore").signature
    assert f"weights={fp}" in get_scorer("blend").signature
