"""`label --until-sure`: label the pairs a session proposes until a metric is the best for this pool (or all tie).

The session lives in the pool's label store (the SQLite file beside the pool): its settings, the pool's scores
and proxy, and every coin flip of the walk (pair, π, shown or not, time) written before a pair is shown, with
the answer filed against the flip. Rerunning the same command resumes from there; `audit --until-sure POOL`
reads the same store. A person (the label page) and `--oracle FILE` drive the same `UntilSure` object.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any, Callable

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.labels import parse_label
from attrib_audit.data.loaders import iter_rows
from attrib_audit.engine.table import ScoringConfig
from attrib_audit.errors import InputError, UsageError
from attrib_audit.stats.auroc import average_ranks
from attrib_audit.stats.confseq import PairInterval
from attrib_audit.stats.ppauroc import FixedInterval, bootstrap_fit, fixed_intervals
from attrib_audit.stats.until_sure import Flip, Session, Settings, fixed_sample_size, run_oracle
from attrib_audit.text.cells import cell_text
from attrib_audit.validate.sample import Pool, cluster_codes, read_pool, score_pool
from attrib_audit.validate.store import LabelStore, store_path

ANNOTATOR = "until-sure"
FIXED_BOOT = 1000
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS until_sure (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS until_sure_flips (
      seq INTEGER PRIMARY KEY, pair_id TEXT NOT NULL, row INTEGER NOT NULL, pi REAL NOT NULL, shown INTEGER NOT NULL,
      outcome TEXT, ts REAL NOT NULL, answered REAL)""",
)


@dataclass(frozen=True, kw_only=True)
class SessionSpec:
    """What fixes a session: the metrics, the proxy and what was done to it, the claim's δ and α, the budget,
    the sampling (active or uniform) and the seed. A resumed session must be asked for with the same."""

    metrics: tuple[str, ...]
    proxy: str
    proxy_note: str
    delta: float
    alpha: float
    budget: int
    active: bool
    seed: int
    pool_digest: str
    cluster_by: str | None = None
    calibrate: bool = False

    def settings(self) -> Settings:
        return Settings(delta=self.delta, alpha=self.alpha, budget=self.budget, active=self.active, seed=self.seed,
                        calibrate=self.calibrate)


def pool_digest(pool: Pool) -> str:
    """A digest of the pool's ids and texts in order: a log replayed on another pool would mean nothing."""
    h = hashlib.sha256()
    for rid, c, e in zip(pool.ids, pool.claims, pool.evidences):
        h.update(f"{rid}\0{c}\0{e}\1".encode("utf-8", "surrogatepass"))
    return "sha256:" + h.hexdigest()


def proxy_probability(values: np.ndarray) -> tuple[np.ndarray, str, bool]:
    """The proxy as a probability of "supported", a note saying what was done to it, and whether the session
    calibrates it on the labels.

    A score already in [0, 1] is used as it is. Any other score is mapped to its pool percentile rank (a monotone
    map fixed before any label, the fallback) and, once the labels allow, calibrated on them with cross-fitting,
    so no labelled pair's p̂ depends on its own label (`stats.calibrate.cross_fit`).
    """
    v = np.asarray(values, dtype=np.float64)
    if ((v >= 0) & (v <= 1)).all():
        return v, "used as the probability of supported (its values lie in [0, 1])", False
    return (average_ranks(v) / (v.size + 1), "not a probability: its pool percentile rank, calibrated on the labels "
            "with 5-fold cross-fitting once each fold's complement holds 2 of each class", True)


def column_scores(pool: Pool, column: str, lower: bool = False) -> np.ndarray:
    """A numeric column of every pool row (negated when lower means better supported).

    Raises:
        DataError: a row lacks the column or holds something that is not a finite number.
    """
    out = np.empty(len(pool.rows))
    for i, row in enumerate(pool.rows):
        value = row.get(column)
        try:
            out[i] = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise DataError(f"score {value!r} is not a number", path=str(pool.path), row=i + 1, field=column) from None
        if not np.isfinite(out[i]):
            raise DataError("score is not finite", path=str(pool.path), row=i + 1, field=column)
    return -out if lower else out


class FlipLog:
    """The session's tables in the pool's label store: settings and scores, and one row per coin flip."""

    def __init__(self, path: Path):
        self.path = path
        LabelStore(path)  # creates the file (WAL) and its labels table, or says it is not a label store
        con = self._connect()
        try:
            for stmt in SCHEMA:
                con.execute(stmt)
        finally:
            con.close()

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        con.execute("PRAGMA synchronous=FULL")
        return con

    def get(self, key: str) -> Any:
        con = self._connect()
        try:
            row = con.execute("SELECT value FROM until_sure WHERE key = ?", (key,)).fetchone()
        finally:
            con.close()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except ValueError:
            raise InputError(f"{self.path}: the until-sure session's {key!r} is not JSON") from None

    def put(self, key: str, value: Any) -> None:
        con = self._connect()
        try:
            con.execute("INSERT INTO until_sure VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (key, json.dumps(value, allow_nan=False)))
        finally:
            con.close()

    def append(self, flips: list[tuple[int, str, Flip]]) -> None:
        """Log (seq, pair id, flip) rows in one transaction, committed before any of them is shown."""
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            con.executemany("INSERT INTO until_sure_flips VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)",
                            [(seq, pid, f.row, f.pi, int(f.shown), time.time()) for seq, pid, f in flips])
            con.execute("COMMIT")
        finally:
            con.close()

    def answer(self, seq: int, outcome: str) -> None:
        con = self._connect()
        try:
            con.execute("UPDATE until_sure_flips SET outcome = ?, answered = ? WHERE seq = ?",
                        (outcome, time.time(), seq))
        finally:
            con.close()

    def flips(self) -> list[tuple[int, str, int, float, bool, str | None]]:
        """(seq, pair id, row, π, shown, outcome) of every logged flip, in walk order."""
        con = self._connect()
        try:
            rows = con.execute("SELECT seq, pair_id, row, pi, shown, outcome FROM until_sure_flips ORDER BY seq")
            return [(int(a), str(b), int(c), float(d), bool(e), f) for a, b, c, d, e, f in rows]
        finally:
            con.close()


@dataclass(frozen=True, kw_only=True)
class Setup:
    """What a session (or a simulated one) runs on and for: the pool, the metrics, the proxy and what was done to
    it, the claim's δ and α, the label budget. The head of both `Report` and `UntilSurePlan`."""

    pool: str
    metrics: tuple[str, ...]
    proxy: str
    proxy_note: str
    delta: float
    alpha: float
    budget: int

    def fields(self) -> dict[str, Any]:
        """The setup as keywords, to build a report that extends it."""
        return {f.name: getattr(self, f.name) for f in dataclass_fields(Setup)}


@dataclass(frozen=True, kw_only=True)
class Report(Setup):
    """Where a session stands: the prediction-powered AUROCs with both kinds of interval, the decision and its
    guarantee, and the counts (labels, flips, non-response) it rests on."""

    sampling: str
    aurocs: tuple[float, ...]
    lams: tuple[float, ...]
    fixed: tuple[FixedInterval, ...]  # fixed-sample 95% intervals: not for stopping
    pairs: tuple[PairInterval, ...]  # anytime-valid, level α/(K−1)
    # the same differences, fixed-sample 95% (paired resamples): not for stopping
    fixed_pairs: tuple[FixedInterval, ...]
    decision: str
    best: str | None
    message: str
    n_labels: int
    n_supported: int
    visited: int
    pool_size: int
    non_response: int
    caveats: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """The report as plain data (for the label page's live standings)."""
        return asdict(self)


class UntilSure:
    """A session bound to its pool and store: propose the next pair, file answers, report."""

    def __init__(self, pool: Pool, spec: SessionSpec, names: tuple[str, ...], scores: np.ndarray, p_hat: np.ndarray,
                 log: FlipLog, store: LabelStore, annotator: str = ANNOTATOR):
        self.pool, self.spec, self.log, self.store, self.annotator = pool, spec, log, store, annotator
        self.session = Session(names, scores, p_hat, spec.settings())
        self.codes = cluster_codes(pool, spec.cluster_by)
        self.seq = 0
        self.pending_seq: int | None = None
        self._replay()

    def _replay(self) -> None:
        s = self.session
        for seq, pid, row, pi, shown, outcome in self.log.flips():
            if not 0 <= row < len(self.pool.ids) or self.pool.ids[row] != pid:
                raise InputError(f"{self.log.path}: flip {seq} names pair {pid!r}, not row {row + 1} of this pool")
            s.replay(Flip(row, pi, shown))
            self.seq = seq
            if not shown:
                continue
            if outcome in ("supported", "not_supported"):
                s.record(1 if outcome == "supported" else 0, refresh=False)
            elif outcome == "skip":
                s.abandon()
            else:
                self.pending_seq = seq  # shown, never answered: shown again
        if s.rows:
            s.update()

    @property
    def pending_row(self) -> int | None:
        return self.session.pending.row if self.session.pending is not None else None

    def stopped(self) -> bool:
        last = self.session.last
        return bool(last is not None and last.decision.stopped) or (
            self.session.pending is None and self.session.budget_spent())

    def propose(self) -> int | None:
        """The row to show next (flipping and logging coins until one comes up); None once the session is over."""
        if self.session.pending is not None:
            return self.session.pending.row
        if self.stopped():
            return None
        batch: list[tuple[int, str, Flip]] = []
        row = None
        while True:
            flip = self.session.flip()
            if flip is None:
                break
            self.seq += 1
            batch.append((self.seq, self.pool.ids[flip.row], flip))
            if flip.shown:
                row, self.pending_seq = flip.row, self.seq
                break
        if batch:
            self.log.append(batch)  # every flip is on disk before the pair is shown
        if row is None and self.session.rows:
            self.session.update()  # the walk ended: the budget rule may now fire
        return row

    def answer(self, decision: str) -> None:
        """File the answer to the shown pair: supported, not_supported, or skip (non-response)."""
        if self.session.pending is None or self.pending_seq is None:
            raise ValueError("no pair is waiting for an answer")
        row = self.session.pending.row
        if decision not in ("supported", "not_supported", "skip"):
            raise ValueError("decision must be supported, not_supported or skip")
        self.store.put(self.annotator, self.pool.ids[row], decision)
        self.log.answer(self.pending_seq, decision)
        self.pending_seq = None
        if decision == "skip":
            self.session.abandon()
        else:
            self.session.record(1 if decision == "supported" else 0)

    def report(self, n_boot: int = FIXED_BOOT) -> Report:
        """The standings now, with fixed-sample bootstrap intervals beside the anytime-valid ones."""
        s = self.session
        st = s.last if s.last is not None else None
        k = len(s.names)
        if st is None or not s.rows:
            nan = tuple(float("nan") for _ in range(k))
            fixed = tuple(FixedInterval(estimate=float("nan"), low=float("nan"), high=float("nan"), n_boot=0,
                                        dropped=0) for _ in range(k))
            return self._report(nan, nan, fixed, (), (), "burn-in", None, "no labels yet")
        draws = s.draws()
        reps = bootstrap_fit(s.indexes, s.p_pool, draws, st.lams, self.codes, n_boot,
                             np.random.default_rng([self.spec.seed, 99, len(s.rows)]))
        fixed = fixed_intervals(st.aurocs, reps, 0.95)
        diffs = fixed_intervals(np.array([p.estimate for p in st.pairs]),
                                np.array([reps[p.a] - reps[p.b] for p in st.pairs]).reshape(len(st.pairs), -1), 0.95)
        best = s.names[st.decision.best] if st.decision.best is not None else None
        return self._report(tuple(float(a) for a in st.aurocs), tuple(float(x) for x in st.lams), fixed, st.pairs,
                            diffs, st.decision.kind, best, st.decision.message)

    def _report(self, aurocs: tuple[float, ...], lams: tuple[float, ...], fixed: tuple[FixedInterval, ...],
                pairs: tuple[PairInterval, ...], fixed_pairs: tuple[FixedInterval, ...], kind: str, best: str | None,
                message: str) -> Report:
        s = self.session
        caveats = []
        if s.non_response:
            caveats.append(f"{s.non_response} shown pair(s) got no answer (skipped): they are left out, which assumes "
                           "they resemble the answered ones")
        n_pos = int(sum(s.labels))
        setup = Setup(pool=str(self.pool.path), metrics=s.names, proxy=self.spec.proxy,
                      proxy_note=self.spec.proxy_note, delta=self.spec.delta, alpha=self.spec.alpha,
                      budget=self.spec.budget)
        return Report(**setup.fields(), sampling="active" if self.spec.active else "uniform", aurocs=aurocs,
                      lams=lams, fixed=fixed, pairs=pairs, fixed_pairs=fixed_pairs, decision=kind, best=best,
                      message=message, n_labels=len(s.rows), n_supported=n_pos, visited=s.visited,
                      pool_size=s.pool_size, non_response=s.non_response, caveats=tuple(caveats))


def _saved_spec(raw: Any, path: Path) -> SessionSpec:
    try:
        return SessionSpec(**{**raw, "metrics": tuple(raw["metrics"])})
    except (TypeError, KeyError):
        raise InputError(f"{path}: the until-sure session's settings are not what this version writes") from None


def _saved_scores(raw: Any, path: Path, n: int) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    try:
        names = tuple(str(x) for x in raw["names"])
        scores = np.asarray(raw["scores"], dtype=np.float64)
        p_hat = np.asarray(raw["p_hat"], dtype=np.float64)
        if scores.shape != (len(names), n) or p_hat.shape != (n,):
            raise ValueError
    except (TypeError, KeyError, ValueError):
        raise InputError(f"{path}: the until-sure session's scores do not fit this pool") from None
    return names, scores, p_hat


def pool_scores(pool: Pool, metrics: tuple[str, ...] | None, score_cols: tuple[tuple[str, str, bool], ...],
                proxy: str | None, proxy_col: tuple[str, bool] | None,
                config_for: Callable[[tuple[str, ...]], ScoringConfig] | None,
                log: Callable[[str], None]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, str, str, bool]:
    """(metric names, their (K, N) pool scores, p̂, the proxy's name, what was done to it, whether to calibrate it).

    Raises:
        UsageError: no proxy, fewer than two distinct metrics, or scoring without a configuration.
    """
    if (proxy is None) == (proxy_col is None):
        raise UsageError("give the proxy: --proxy SCORER or --proxy COLUMN of the pool")
    names = tuple(metrics or ()) + tuple(n for n, _, _ in score_cols)
    if len(set(names)) != len(names) or len(names) < 2:
        raise UsageError(f"need at least two distinct metrics, got {', '.join(names) or 'none'}")
    run = tuple(dict.fromkeys(tuple(metrics or ()) + ((proxy,) if proxy else ())))
    scored: dict[str, np.ndarray] = {}
    if run:
        if config_for is None:
            raise UsageError("scoring the pool needs a scoring configuration")
        got, matrix = score_pool(pool, config_for(run), log)
        scored = dict(zip(got, matrix))
    for name, col, lower in score_cols:
        scored[name] = column_scores(pool, col, lower)
    if proxy is not None:
        raw_proxy, proxy_name = scored[proxy], proxy
    else:
        assert proxy_col is not None
        raw_proxy, proxy_name = column_scores(pool, *proxy_col), f"column {proxy_col[0]}"
    p_hat, note, calibrate = proxy_probability(raw_proxy)
    return names, np.vstack([scored[n] for n in names]), p_hat, proxy_name, note, calibrate


def check_claim(delta: float, alpha: float, budget: int, sims: int | None = None) -> None:
    """The settings `label --until-sure` and `plan --until-sure` share.

    Raises:
        UsageError: α outside (0, 1), δ < 0, a budget (or a number of simulated sessions) below 1.
    """
    if not 0 < alpha < 1 or delta < 0 or budget < 1 or (sims is not None and sims < 1):
        need = ["0 < --alpha < 1", "--delta ≥ 0", "--budget ≥ 1"] + (["--sims ≥ 1"] if sims is not None else [])
        raise UsageError(f"need {', '.join(need[:-1])} and {need[-1]}")


def open_session(pool_file: str | Path, *, metrics: tuple[str, ...] | None = None,
                 score_cols: tuple[tuple[str, str, bool], ...] = (), proxy: str | None = None,
                 proxy_col: tuple[str, bool] | None = None, delta: float = 0.02, alpha: float = 0.05,
                 budget: int = 400, active: bool = True, seed: int = 0, cluster_by: str | None = None,
                 config_for: Callable[[tuple[str, ...]], ScoringConfig] | None = None,
                 annotator: str = ANNOTATOR, log: Callable[[str], None] = print) -> UntilSure:
    """Start a session on `pool_file`, or resume the one its store holds (the same settings are required).

    Args:
        metrics: scorer names run on the pool (through the engine and its cache).
        score_cols: (name, column, lower) precomputed metric columns of the pool.
        proxy: a scorer (one of `metrics`, or run for the proxy only) giving p̂; or None with `proxy_col`.
        proxy_col: (column, lower) of the pool holding p̂.
        config_for: the scoring configuration for a tuple of scorer names (from the command line's flags).

    Raises:
        UsageError: bad settings, or a stored session with other settings.
    """
    pool = read_pool(pool_file)
    path = store_path(pool.path)
    flips = FlipLog(path)
    store = LabelStore(path)
    saved = flips.get("spec")
    if saved is not None and metrics is None and not score_cols:  # `audit`: whatever the store holds
        spec = _saved_spec(saved, path)
        names, scores, p_hat = _saved_scores(flips.get("scores"), path, len(pool.ids))
        if spec.pool_digest != pool_digest(pool):
            raise InputError(f"{path}: the session was run on another version of {pool.path.name}")
        return UntilSure(pool, spec, names, scores, p_hat, flips, store, annotator)
    if saved is None and metrics is None and not score_cols:
        raise UsageError(f"{pool.path} has no until-sure session (its store {path.name} holds none)")
    check_claim(delta, alpha, budget)
    names, scores, p_hat, proxy_name, note, calibrate = pool_scores(pool, metrics, score_cols, proxy, proxy_col,
                                                                    config_for, log)
    spec = SessionSpec(metrics=names, proxy=proxy_name, proxy_note=note, delta=float(delta), alpha=float(alpha),
                       budget=int(budget), active=bool(active), seed=int(seed),
                       pool_digest=pool_digest(pool), cluster_by=cluster_by, calibrate=calibrate)
    if saved is not None:
        old = _saved_spec(saved, path)
        if old != spec:
            diff = ", ".join(f"{k} {getattr(old, k)!r} → {getattr(spec, k)!r}" for k in asdict(spec)
                             if getattr(old, k) != getattr(spec, k))
            raise UsageError(f"{path} holds a session with other settings ({diff}); rerun with its settings to "
                             "resume, or label a copy of the pool")
        names_s, scores_s, p_s = _saved_scores(flips.get("scores"), path, len(pool.ids))
        if names_s != names or not (np.array_equal(scores_s, scores) and np.array_equal(p_s, p_hat)):
            raise UsageError(f"{path}: the metrics now score this pool differently than when the session began "
                             "(a scorer changed); label a copy of the pool to start afresh")
    else:
        flips.put("scores", {"names": list(names), "scores": scores.tolist(), "p_hat": p_hat.tolist()})
        flips.put("spec", {**asdict(spec), "metrics": list(spec.metrics)})
    return UntilSure(pool, spec, names, scores, p_hat, flips, store, annotator)


def read_oracle(path: str | Path) -> dict[str, int]:
    """id → 0/1 label from a labelled file (JSONL/CSV/Parquet with id and label).

    Raises:
        DataError: a row without an id, a label that is not 0/1, or an id given twice.
    """
    out: dict[str, int] = {}
    for row, raw in iter_rows(path):
        rid = cell_text(raw.get("id"))
        if not rid:
            raise DataError("no id", path=str(path), row=row, field="id")
        if rid in out:
            raise DataError(f"id {rid!r} given twice", path=str(path), row=row, field="id")
        out[rid] = parse_label(raw.get("label"), None, path=str(path), row=row, field="label")
    return out


def run_with_oracle(session: UntilSure, answers: dict[str, int]) -> Report:
    """Answer every proposal from `answers` (a pair without one is skipped: non-response) until the session stops."""
    while True:
        row = session.propose()
        if row is None:
            break
        label = answers.get(session.pool.ids[row])
        session.answer("skip" if label is None else ("supported" if label == 1 else "not_supported"))
    return session.report()


@dataclass(frozen=True, kw_only=True)
class PlanArm:
    """Simulated sessions of one sampling design: labels to a decision, and how the sessions ended."""

    sampling: str
    median_labels: float
    q25: float
    q75: float
    decisions: dict[str, int]  # kind → sessions
    winners: dict[str, int]  # metric → sessions declaring it best


@dataclass(frozen=True)
class UntilSurePlan(Setup):
    """`plan --until-sure`: expected labels to a decision, uniform vs active, from the pool's scores and proxy."""

    sims: int
    arms: tuple[PlanArm, ...]
    fixed_n: tuple[int | None, ...]  # per simulated pool: the fixed uniform sample the same claim needs


def simulate_arm(names: tuple[str, ...], scores: np.ndarray, p_hat: np.ndarray, settings: Settings,
                 label_sets: list[np.ndarray]) -> PlanArm:
    """Run one session per simulated label set (seeded by its index) and summarise labels and decisions."""
    used: list[int] = []
    kinds: dict[str, int] = {}
    winners: dict[str, int] = {}
    for i, y in enumerate(label_sets):
        s = Session(names, scores, p_hat, Settings(**{**asdict(settings), "seed": settings.seed + i}))
        st = run_oracle(s, y)
        kind = st.decision.kind if st is not None else "budget"
        used.append(st.n_labels if st is not None else 0)
        kinds[kind] = kinds.get(kind, 0) + 1
        if st is not None and st.decision.best is not None and kind == "best":
            winners[names[st.decision.best]] = winners.get(names[st.decision.best], 0) + 1
    q = np.percentile(used, [25, 50, 75]) if used else np.full(3, np.nan)
    return PlanArm(sampling="active" if settings.active else "uniform", median_labels=float(q[1]), q25=float(q[0]),
                   q75=float(q[2]), decisions=kinds, winners=winners)


def plan_until_sure(pool_file: str | Path, *, metrics: tuple[str, ...] | None = None,
                    score_cols: tuple[tuple[str, str, bool], ...] = (), proxy: str | None = None,
                    proxy_col: tuple[str, bool] | None = None, delta: float = 0.02, alpha: float = 0.05,
                    budget: int = 400, sims: int = 20, seed: int = 0,
                    config_for: Callable[[tuple[str, ...]], ScoringConfig] | None = None,
                    log: Callable[[str], None] = print) -> UntilSurePlan:
    """Simulate sessions on the pool, labels drawn as Bernoulli(p̂) (so as good as the proxy's calibration).

    Raises:
        UsageError: bad settings (as `open_session`).
    """
    check_claim(delta, alpha, budget, sims)
    pool = read_pool(pool_file)
    names, scores, p_hat, proxy_name, note, calibrate = pool_scores(pool, metrics, score_cols, proxy, proxy_col,
                                                                    config_for, log)
    rng = np.random.default_rng([seed, 17])
    label_sets = [(rng.random(p_hat.size) < p_hat).astype(np.int64) for _ in range(sims)]
    arms = tuple(simulate_arm(names, scores, p_hat, Settings(delta=delta, alpha=alpha, budget=budget, active=a,
                                                             seed=seed, calibrate=calibrate), label_sets)
                 for a in (False, True))
    fixed = tuple(fixed_sample_size(scores, y, delta, alpha) if 0 < y.sum() < y.size else None for y in label_sets)
    setup = Setup(pool=str(pool.path), metrics=names, proxy=proxy_name, proxy_note=note, delta=delta, alpha=alpha,
                  budget=budget)
    return UntilSurePlan(**setup.fields(), sims=sims, arms=arms, fixed_n=fixed)
