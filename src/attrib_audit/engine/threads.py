"""How many threads model scoring uses: every core this process may run on, each once.

torch's intra-op pool defaults to the machine's physical cores, which inside a container limited by CPU affinity or
a cgroup quota can be many more than the process gets: threads then wait on each other at every layer. So before a
scorer runs, the pool is sized to the cores the process really has (`usable_cores`: affinity and cgroup quota), or to
the share it was given (`set_core_share`: a Ray actor's `num_cpus`, so N actors on a machine use its cores once
between them). Scorers run one after another, so a local judge (llama.cpp, which picks its own threads) and an
encoder never run at once. Tokenizer parallelism stays off (TOKENIZERS_PARALLELISM=false, set by the CLI): its
pool would compete with torch's for the same cores, and it cannot survive the fork of a Ray or multiprocessing
worker. A user who pins threads (OMP_NUM_THREADS, MKL_NUM_THREADS or ATTRIB_AUDIT_THREADS) is obeyed.
"""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

_PINNED = ("ATTRIB_AUDIT_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_share: list[int] = []  # the core share set for this process, if any


def usable_cores(cgroup: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """Cores this process may run on: its CPU affinity, lowered to a cgroup v2 quota (rounded up) if one is set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = cgroup.read_text().split()[:2]
        if quota != "max" and int(period) > 0:
            cores = min(cores, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):  # no cgroup v2 file, or not the expected "quota period"
        pass
    return max(1, cores)


def set_core_share(cores: float | None) -> None:
    """Give this process `cores` of the machine (a Ray actor's num_cpus); None goes back to every usable core."""
    _share.clear()
    if cores is not None:
        _share.append(max(1, int(cores)))


def scoring_threads() -> int:
    """The intra-op threads model scoring uses now: a pinned count, else the share given, else every usable core."""
    for var in _PINNED:
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return _share[0] if _share else usable_cores()


def fit_torch_threads() -> int | None:
    """Size torch's intra-op pool to `scoring_threads()` if torch is loaded (a scorer that never imports it is left
    alone, and nothing here imports it); returns the count set, or None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    n = scoring_threads()
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n
