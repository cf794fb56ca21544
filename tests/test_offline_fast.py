"""A model that is not on the machine fails at once, in one line, when the hub cannot be reached; online, the loader
runs as before."""
from __future__ import annotations

import socket
import threading
import time

import pytest

from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.resolve import Resolved, hub_reachable, load_or_unavailable


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_hub_fails_at_once_without_calling_the_loader(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    calls = []
    t0 = time.perf_counter()
    with pytest.raises(ScorerUnavailable) as exc:
        load_or_unavailable(Resolved("org/model", "hub"), lambda loc: calls.append(loc), what="m", install_hint="hint")
    assert time.perf_counter() - t0 < 3 and calls == []
    msg = str(exc.value)
    assert msg == "m: weights not installed locally and the hub cannot be reached from this machine (hint)"


def test_offline_environment_fails_at_once(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not hub_reachable()
    with pytest.raises(ScorerUnavailable, match="the hub is offline"):
        load_or_unavailable(Resolved("org/model", "hub"), lambda loc: pytest.fail("loader called"), what="m",
                            install_hint="hint")


def test_a_reachable_hub_still_runs_the_loader(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    try:
        assert load_or_unavailable(Resolved("org/model", "hub"), lambda loc: f"loaded {loc}", what="m",
                                   install_hint="hint") == "loaded org/model"
        local = load_or_unavailable(Resolved("/local", "path"), lambda loc: "local", what="m", install_hint="h")
        assert local == "local"
    finally:
        server.close()
