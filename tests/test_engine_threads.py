"""Scoring threads: every usable core once, a Ray actor's share, or what the user pinned."""
import sys

import pytest

from attrib_audit.engine import threads


@pytest.fixture(autouse=True)
def _no_pins(monkeypatch):
    for var in ("ATTRIB_AUDIT_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    yield
    threads.set_core_share(None)


def test_usable_cores_is_the_affinity_lowered_to_a_cgroup_quota(tmp_path, monkeypatch):
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    f = tmp_path / "cpu.max"
    assert threads.usable_cores(f) == 6  # no quota file
    f.write_text("max 100000\n")
    assert threads.usable_cores(f) == 6
    f.write_text("250000 100000\n")  # 2.5 CPUs of quota: 3 threads
    assert threads.usable_cores(f) == 3
    f.write_text("50000 100000\n")
    assert threads.usable_cores(f) == 1
    f.write_text("garbage\n")
    assert threads.usable_cores(f) == 6


def test_a_share_then_a_pin_override_the_machine(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 8)
    assert threads.scoring_threads() == 8
    threads.set_core_share(2.0)
    assert threads.scoring_threads() == 2
    threads.set_core_share(0.5)  # a fractional actor still runs one thread
    assert threads.scoring_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert threads.scoring_threads() == 3
    monkeypatch.setenv("ATTRIB_AUDIT_THREADS", "5")
    assert threads.scoring_threads() == 5
    monkeypatch.setenv("ATTRIB_AUDIT_THREADS", "zero")  # not a count: the next rule applies
    assert threads.scoring_threads() == 3


def test_torch_pool_is_sized_only_when_torch_is_loaded(monkeypatch):
    class FakeTorch:
        n = 64

        def get_num_threads(self):
            return self.n

        def set_num_threads(self, n):
            self.n = n

    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert threads.fit_torch_threads() is None and "torch" not in sys.modules
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert threads.fit_torch_threads() == 2 and fake.n == 2
    threads.set_core_share(1)
    assert threads.fit_torch_threads() == 1 and fake.n == 1
