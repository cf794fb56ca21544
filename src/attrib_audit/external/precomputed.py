"""Scores of a metric computed elsewhere, aligned with the audited pairs.

A precomputed scorer enters the audit as a ScoreBatch like a built-in one, so it gets exactly the
same statistics; it never touches the score cache (nothing is computed). Missing, NaN, infinite or
non-numeric values are failures carrying the reason, excluded and never imputed. Its signature is the
sha256 of the values audited plus the source's file name, so results.json records what was audited.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.engine.runner import RunStats
from attrib_audit.scorers.base import ScoreBatch

PYTHON_SOURCE = "python"  # the source name of values handed to run_audit directly


def to_score(value: Any) -> tuple[float, str | None]:
    """One raw cell as a finite score, or NaN and why it is not one."""
    if value is None:
        return math.nan, "missing value"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return math.nan, "missing value"
        try:
            v = float(text)
        except ValueError:
            return math.nan, f"non-numeric value {text[:40]!r}"
    elif isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
        v = float(value)
    else:
        return math.nan, f"non-numeric value of type {type(value).__name__}"
    if math.isnan(v):
        return math.nan, "NaN value"
    if math.isinf(v):
        return math.nan, "infinite value"
    return v, None


def parse_scores(raw: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, list[str | None]]:
    """Scores and per-row failure reasons for raw values (numbers, numeric strings, None)."""
    arr = np.asarray(raw) if not isinstance(raw, np.ndarray) else raw
    if arr.dtype.kind in "fiub" and arr.ndim == 1:  # the notebook case: a float array, checked at once
        values = arr.astype(np.float64)
        finite = np.isfinite(values)
        reasons: list[str | None] = ([None if ok else ("NaN value" if np.isnan(v) else "infinite value")
                                      for ok, v in zip(finite, values)] if not finite.all() else [None] * values.size)
        return np.where(finite, values, np.nan), reasons
    pairs = [to_score(v) for v in raw]
    return np.array([p[0] for p in pairs], dtype=np.float64), [p[1] for p in pairs]


@dataclass(frozen=True)
class FailedId:
    """A pair whose precomputed score is missing or unusable, and why."""

    id: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class PrecomputedRecord:
    """results.json's entry for one precomputed metric: where its scores came from, every failed or unmatched id."""

    scorer: str
    source: str
    sha256: str | None
    column: str
    join: str
    direction: str
    signature: str
    n: int
    n_failed: int
    failed: list[FailedId]
    n_missing_in_source: int
    n_unmatched: int
    unmatched_ids: list[str]


@dataclass(kw_only=True)
class Precomputed:
    """One external metric's scores, one per audited pair (NaN where `failures` says why)."""

    name: str
    values: np.ndarray  # as the source gives them; `batch()` negates them when lower is better
    failures: list[str | None]
    source: str = PYTHON_SOURCE  # file it came from, or "python"
    column: str = ""
    lower_is_better: bool = False
    join: str = "position"  # how the source's rows met the pairs: position, id or text
    missing_ids: list[str] = field(default_factory=list)  # pairs the source has no row for
    unmatched_ids: list[str] = field(default_factory=list)  # source rows matching no pair (id, or "row N")
    sha256: str | None = None  # of the score file, when the scores came from one

    def __post_init__(self) -> None:
        self.values = np.asarray(self.values, dtype=np.float64)
        if len(self.failures) != self.values.size:
            raise ValueError(f"precomputed {self.name!r}: {len(self.failures)} failure entries for "
                             f"{self.values.size} values")

    @property
    def signature(self) -> str:
        h = hashlib.sha256()
        h.update(f"{Path(self.source).name}\0{self.column}\0{int(self.lower_is_better)}\0".encode())
        h.update(np.ascontiguousarray(self.values, dtype="<f8").tobytes())
        return f"precomputed:{Path(self.source).name}:{self.column or self.name}:{h.hexdigest()}"

    def batch(self) -> ScoreBatch:
        """What the statistics see: higher = more supported, so a lower-is-better metric is negated."""
        scores = -self.values if self.lower_is_better else self.values.copy()
        n = scores.size
        return ScoreBatch(scores=scores, truncated_tokens=np.zeros(n, dtype=np.int64),
                          input_tokens=np.zeros(n, dtype=np.int64), chunks=np.ones(n, dtype=np.int64),
                          failures=list(self.failures))

    def run_stats(self) -> RunStats:
        n = int(self.values.size)
        return RunStats(scorer=self.name, signature=self.signature, n_pairs=n, n_unique=n, n_cached=0, n_scored=0,
                        n_batches=0)

    def record(self, ids: Sequence[str]) -> PrecomputedRecord:
        """The results.json entry: where the scores came from and every failed or unmatched id."""
        failed = [FailedId(id=ids[i], reason=r) for i, r in enumerate(self.failures) if r is not None]
        return PrecomputedRecord(
            scorer=self.name, source=self.source, sha256=self.sha256, column=self.column, join=self.join,
            direction="lower is better (negated before the statistics)" if self.lower_is_better else
            "higher is better", signature=self.signature, n=int(self.values.size), n_failed=len(failed),
            failed=failed, n_missing_in_source=len(self.missing_ids), n_unmatched=len(self.unmatched_ids),
            unmatched_ids=list(self.unmatched_ids))


def from_values(name: str, raw: Any, n: int, *, source: str = PYTHON_SOURCE, column: str = "",
                lower_is_better: bool = False) -> Precomputed:
    """Scores computed elsewhere, given in table order: a numpy array, list, pandas Series or pyarrow (Chunked)Array.

    Args:
        name: The metric's name in the audit.
        raw: One score per pair; None, NaN or null is a failure (counted, left out of that metric).
        n: Pairs in the table.
        source: Where the scores came from, as recorded in results.json.
        column: The column they were read from (default: `name`).
        lower_is_better: The metric rates support with lower values (negated for AUROC).

    Returns:
        The metric's scores and failures, ready for `AuditConfig(precomputed={name: ...})`.

    Raises:
        ValueError: Another number of values than pairs (a value that is not a number is a failure).

    Examples:
        >>> p = from_values("mine", [0.2, None, 0.9], 3)
        >>> p.values.tolist(), p.failures
        ([0.2, nan, 0.9], [None, 'missing value', None])
    """
    if hasattr(raw, "to_pylist") and not isinstance(raw, np.ndarray):  # pyarrow: nulls become None
        raw = raw.to_pylist()
    elif hasattr(raw, "to_numpy") and not isinstance(raw, np.ndarray):  # pandas: keeps None/NaN as given
        raw = raw.to_numpy()
    values, failures = parse_scores(raw if isinstance(raw, np.ndarray) else list(raw))
    if values.size != n:
        raise ValueError(f"precomputed {name!r} has {values.size} values for {n} pairs: give one per pair in table "
                         "order, or a mapping id -> score")
    return Precomputed(name=name, values=values, failures=failures, source=source, column=column or name,
                       lower_is_better=lower_is_better)


def join_scores(name: str, pair_keys: Sequence[str], ids: Sequence[str], source_keys: Sequence[str],
                raw: Sequence[Any], *, source: str, column: str, join: str, lower_is_better: bool = False,
                reasons: Sequence[str | None] | None = None, labels: Sequence[str] | None = None) -> Precomputed:
    """Scores of a source keyed by id or text, matched to the pairs' keys (one key per pair).

    A pair the source has no row for fails with that reason; source rows matching no pair are kept
    as `unmatched_ids` (their `labels`, e.g. 'row 7' for a text join, else their key). A key given
    twice with different values is ambiguous and an error.
    """
    values, failures = parse_scores(raw)
    if reasons is not None:  # the tool's own reason for a missing score (e.g. an evaluator error)
        failures = [r if (r is not None and f is not None) else f for f, r in zip(failures, reasons)]
    slot: dict[str, int] = {}
    for j, k in enumerate(source_keys):
        if k in slot and not _same(values[slot[k]], values[j]):
            raise DataError(f"{join} key {_short(k)!r} appears twice with different values "
                            f"({values[slot[k]]} and {values[j]})", path=source, row=j + 1, field=column)
        slot.setdefault(k, j)
    out = np.full(len(pair_keys), np.nan)
    out_fail: list[str | None] = []
    missing: list[str] = []
    for i, k in enumerate(pair_keys):
        at = slot.get(k)
        if at is None:
            missing.append(ids[i])
            out_fail.append(f"no score for this pair in {Path(source).name}")
            continue
        out[i] = values[at]
        out_fail.append(failures[at])
    wanted = set(pair_keys)
    unmatched = [labels[j] if labels is not None else k for k, j in slot.items() if k not in wanted]
    return Precomputed(name=name, values=out, failures=out_fail, source=source, column=column,
                       lower_is_better=lower_is_better, join=join, missing_ids=missing, unmatched_ids=unmatched)


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
