"""The `transfer` section of an audit: per construct, does metric quality carry across its datasets?

Slices are grouped by their construct and statistics run inside one group only. A slice
whose construct is not declared ('unspecified') or that mixes constructs is listed as
excluded with the reason: the code never guesses that two datasets measure the same thing.
"""
from __future__ import annotations

import hashlib
import inspect
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, Mapping, Sequence

import numpy as np

from attrib_audit.audit.config import STATISTIC_LABELS
from attrib_audit.audit.correlations import StatisticBoot
from attrib_audit.audit.results import SliceBoot, SliceRow
from attrib_audit.engine.cache import ScoreCache, text_key
from attrib_audit.stats.bootstrap import BootstrapAUROC, slice_rng
from attrib_audit.stats.classification import average_precision, transferred_balanced_accuracy
from attrib_audit.stats.rank import KendallW, kendall_tau_matrix, kendall_w_test, spearman
from attrib_audit.stats.transfer import (
    DEFAULT_EPS_GRID,
    AurocMatrix,
    DatasetBest,
    Decomposition,
    LodoRegret,
    PairedDiff,
    Portability,
    SignFlip,
    best_per_dataset,
    decompose,
    eps_regret_sweep,
    lodo_regret,
    paired_best_vs_rest,
    portability,
    sign_flips,
)
from attrib_audit.text import sentences, tokenize
from attrib_audit.text.sentences import split_sentences
from attrib_audit.text.tokenize import count_tokens

DEFAULT_N_PERM = 10_000
COUNT_BATCH = 4096  # distinct evidences counted per cache transaction
LEVEL = 0.95
THRESHOLD_NOTE = ("balanced accuracy uses, for each held-out dataset, the threshold that maximises balanced accuracy "
                  "on the pooled rows of the OTHER datasets of the construct; it is never tuned on the slice itself")


SKIP: Mapping[str, Any] = {"skip_default": True}  # field metadata: not written while it holds its default


# ---- the records of the `transfer` block (its JSON is their `to_record`) ----

@dataclass(frozen=True, kw_only=True)
class ExcludedSlice:
    """A slice the transfer statistics leave out, and why (no two classes, no declared construct, mixed)."""

    slice: str
    construct: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class ExcludedMetric:
    """A metric left out of a construct's matrix, and why (undefined on a dataset, or its failures)."""

    scorer: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class RowsUsed:
    """One dataset's rows: all of them, those every kept metric scored, and those each metric's failures removed."""

    n: int
    n_used: int
    dropped_by: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class AuprcCell:
    """One scorer's AUPRC on a slice, on its scored rows (NaN when the slice has no positive)."""

    auprc: float
    n: int
    n_failed: int


@dataclass(frozen=True, kw_only=True)
class EvidenceLength:
    """Mean and median evidence length of a slice's rows, in words and in sentences."""

    words_mean: float
    words_median: float
    sentences_mean: float
    sentences_median: float


@dataclass(frozen=True, kw_only=True)
class SliceCompanion:
    """A two-class slice's AUPRC per scorer (chance = prevalence) and evidence length; Horvitz–Thompson estimates
    of the pool when `weighted`."""

    slice: str
    construct: str
    n: int
    prevalence: float
    weighted: bool
    auprc: dict[str, AuprcCell]
    evidence_length: EvidenceLength


@dataclass(frozen=True, kw_only=True)
class KendallTauTable:
    """τ-b between every two datasets' rankings of the metrics, with scipy's p and method (exact or asymptotic)."""

    datasets: list[str]
    tau: list[list[float]]
    p: list[list[float]]
    method: list[list[str]]
    note: str


@dataclass(frozen=True, kw_only=True)
class EpsRegret:
    """The metrics whose point regret is at most `eps` on every dataset."""

    eps: float
    metrics: list[str]


@dataclass(frozen=True, kw_only=True)
class BalancedAccuracyRow:
    """A metric's balanced accuracy on one dataset at the threshold chosen on the construct's other datasets
    (stats.classification.TransferredThreshold); without one, `test_balanced_accuracy` is None and `reason` says
    why."""

    scorer: str
    dataset: str
    threshold_from: list[str]
    n_failed_excluded: int
    threshold: float | None = field(default=None, metadata=SKIP)
    train_balanced_accuracy: float | None = field(default=None, metadata=SKIP)
    test_balanced_accuracy: float | None = None
    n_train: int | None = field(default=None, metadata=SKIP)
    n_test: int | None = field(default=None, metadata=SKIP)
    reason: str | None = field(default=None, metadata=SKIP)


@dataclass(frozen=True, kw_only=True)
class LengthCorrelate:
    """Spearman ρ across a construct's datasets between a metric's AUROC and mean evidence words / sentences."""

    scorer: str
    rho_words: float
    p_words: float
    rho_sentences: float
    p_sentences: float
    n_datasets: int


@dataclass(frozen=True, kw_only=True)
class MatrixStatistics:
    """Every statistic of a construct that needs only its metric × dataset matrix and replicates (what `select`
    recomputes), then, with the AUROC as the statistic, the thresholds' balanced accuracy and length correlates."""

    metrics: list[str]
    auroc: dict[str, dict[str, float]]  # metric → dataset → the statistic's point estimate
    best_per_dataset: list[DatasetBest]
    portability: list[Portability]
    kendall_tau: KendallTauTable
    kendall_w: KendallW
    regret: LodoRegret
    eps_regret: list[EpsRegret]
    paired_best_vs_rest: list[PairedDiff]
    sign_flips: list[SignFlip]
    decomposition: Decomposition
    balanced_accuracy: list[BalancedAccuracyRow] | None = field(default=None, metadata=SKIP)
    length_correlates: list[LengthCorrelate] | None = field(default=None, metadata=SKIP)


@dataclass(frozen=True, kw_only=True)
class ConstructTransfer:
    """One construct: its datasets, the metrics left out and the rows used, then its statistics when `status` is
    ok (written inline), or why not."""

    datasets: list[str]
    excluded_metrics: list[ExcludedMetric] | None = field(default=None, metadata=SKIP)
    rows: dict[str, RowsUsed] | None = field(default=None, metadata=SKIP)
    status: Literal["ok", "insufficient"]
    reason: str | None = field(default=None, metadata=SKIP)
    statistics: MatrixStatistics | None = field(default=None, metadata={"inline": True, "skip_default": True})


@dataclass(frozen=True, kw_only=True)
class TransferSection:
    """The `transfer` block of results.json: per construct, does metric quality carry across its datasets."""

    level: float
    n_perm: int
    statistic: str = "auroc"  # what the metrics are compared by: auroc, or a correlation with the graded rating
    notes: list[str]
    slices: list[SliceCompanion]  # AUPRC and evidence length per two-class slice
    excluded_slices: list[ExcludedSlice]
    constructs: dict[str, ConstructTransfer]

    @property
    def ok(self) -> dict[str, tuple[ConstructTransfer, MatrixStatistics]]:
        """The constructs whose statistics were computed, each with them."""
        return {c: (e, e.statistics) for c, e in self.constructs.items() if e.status == "ok" and e.statistics}


def construct_groups(slices: Sequence[SliceRow],
                     graded: Mapping[str, str] | None = None) -> tuple[dict[str, list[str]], list[ExcludedSlice]]:
    """Usable slices per construct, and every other slice with the reason it is left out. `graded` (slice → why
    it has no correlation, "" when it has one) replaces the AUROC's two-class rule when a correlation with a graded
    rating is the transfer statistic."""
    groups: dict[str, list[str]] = {}
    excluded = []
    for s in slices:
        c = s.construct
        if graded is not None and graded.get(s.slice):
            excluded.append(ExcludedSlice(slice=s.slice, construct=c, reason=graded[s.slice]))
        elif graded is None and s.status != "ok":
            excluded.append(ExcludedSlice(slice=s.slice, construct=c, reason="no binary label: AUROC undefined"
                                          if s.status == "no_label" else "one class in slice: AUROC undefined"))
        elif c == "unspecified":
            excluded.append(ExcludedSlice(slice=s.slice, construct=c, reason="construct not declared (set "
                                          "--construct or a construct column); datasets of unknown construct are "
                                          "never pooled"))
        elif c.startswith("mixed:"):
            excluded.append(ExcludedSlice(slice=s.slice, construct=c, reason="slice mixes constructs; constructs "
                                          "are never pooled (slice by dataset so each slice holds one construct)"))
        else:
            groups.setdefault(c, []).append(s.slice)
    return groups, excluded


def build_matrix(datasets: Sequence[str], metrics: Sequence[str],
                 boots: Mapping[str, BootstrapAUROC | StatisticBoot], *,
                 unit: str = "AUROC") -> tuple[AurocMatrix | None, list[ExcludedMetric], dict[str, RowsUsed]]:
    """The metric × dataset matrix on each dataset's rows where every kept metric has a score.

    A metric undefined on a dataset (own rows) is dropped with the reason; so is one whose
    failures leave the common rows with one class. Also returns, per dataset, the rows used
    and how many each metric's failures removed (`boots[d]` rows follow `metrics`).
    """
    pts = np.column_stack([boots[d].point for d in datasets])
    keep = np.isfinite(pts).all(axis=1)
    dropped = [ExcludedMetric(scorer=m, reason=f"{unit} undefined on " + ", ".join(
                   d for d, v in zip(datasets, pts[i]) if not np.isfinite(v)))
               for i, m in enumerate(metrics) if not keep[i]]
    idx = np.flatnonzero(keep)
    while idx.size:
        al = {d: boots[d].aligned(idx) for d in datasets}
        bad = [d for d in datasets if not np.isfinite(al[d].point).all()]
        if not bad:
            break
        worst = int(idx[np.sum([al[d].dropped for d in bad], axis=0).argmax()])
        dropped.append(ExcludedMetric(scorer=metrics[worst], reason="its failures leave one class on the rows every "
                                                                    "metric scored on " + ", ".join(bad)))
        idx = idx[idx != worst]
    if idx.size == 0:
        return None, dropped, {}
    mat = AurocMatrix.from_columns([metrics[i] for i in idx.tolist()], datasets, [al[d].point for d in datasets],
                                   [al[d].replicates for d in datasets])
    rows = {d: RowsUsed(n=boots[d].n_rows, n_used=al[d].n,
                        dropped_by={metrics[i]: int(k) for i, k in zip(idx.tolist(), al[d].dropped)})
            for d in datasets}
    return mat, dropped, rows


def matrix_statistics(mat: AurocMatrix, *, construct: str, seed: int, n_perm: int = DEFAULT_N_PERM,
                      eps_grid: Sequence[float] = DEFAULT_EPS_GRID) -> MatrixStatistics:
    """Every statistic that needs only the AUROC matrix and its replicates (also what `select` recomputes)."""
    tau = kendall_tau_matrix(mat.point)
    return MatrixStatistics(
        metrics=list(mat.metrics),
        auroc={m: dict(zip(mat.datasets, mat.point[i].tolist())) for i, m in enumerate(mat.metrics)},
        best_per_dataset=best_per_dataset(mat, LEVEL),
        portability=portability(mat, LEVEL),
        kendall_tau=KendallTauTable(datasets=list(mat.datasets), tau=tau.tau.tolist(), p=tau.pvalue.tolist(),
                                    method=tau.method.tolist(),
                                    note="τ-b between two datasets' rankings of the metrics by AUROC; "
                                    "p as scipy.stats.kendalltau"),
        kendall_w=kendall_w_test(mat.point, n_perm, slice_rng(seed, f"transfer:W:{construct}")),
        regret=lodo_regret(mat, LEVEL),
        eps_regret=[EpsRegret(eps=x["eps"], metrics=x["metrics"]) for x in eps_regret_sweep(mat, eps_grid)],
        paired_best_vs_rest=paired_best_vs_rest(mat, LEVEL),
        sign_flips=sign_flips(mat, LEVEL),
        decomposition=decompose(mat, n_perm, slice_rng(seed, f"transfer:decomposition:{construct}")),
    )


def _distinct(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(distinct texts in first-seen order, each row's index into them): resampled or shared passages repeat."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(t, len(index)) for t in texts), dtype=np.int64, count=len(texts))
    return list(index), codes


def evidence_words(evidences: Sequence[str]) -> np.ndarray:
    """Evidence length in words, one per row, counted once per distinct evidence."""
    distinct, codes = _distinct(evidences)
    return np.array([count_tokens(e) for e in distinct], dtype=np.float64)[codes]


@lru_cache(maxsize=1)
def counts_signature() -> str:
    """What computes an evidence's counts: the source of the word and sentence counters and Python's Unicode tables
    (what `\\w`, isalnum and lower() follow), so a count made by another version is never read back as this one's."""
    code = "\0".join(inspect.getsource(m) for m in (tokenize, sentences))
    return f"evidence-counts:words+sentences:unicode={unicodedata.unidata_version}:" \
           f"{hashlib.sha256(code.encode()).hexdigest()[:16]}"


def evidence_counts(evidences: Sequence[str], cache: ScoreCache | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(words, sentences) of every row's evidence, counted once per distinct evidence (per-row Python: the costliest
    part of a cached audit otherwise). With a score `cache`, counts it holds for an evidence's content are read
    instead, and new ones are written in batches of COUNT_BATCH, one transaction each: a killed run keeps them."""
    distinct, codes = _distinct(evidences)
    words = np.zeros(len(distinct), dtype=np.int64)
    sents = np.zeros(len(distinct), dtype=np.int64)
    todo = list(range(len(distinct)))
    sig, keys = counts_signature(), []
    if cache is not None and distinct:
        keys = [text_key(e) for e in distinct]
        found = cache.get_counts(sig, keys)
        todo = [j for j, k in enumerate(keys) if k not in found]
        hit = [j for j, k in enumerate(keys) if k in found]
        if hit:
            words[hit], sents[hit] = np.array([found[keys[j]] for j in hit], dtype=np.int64).T
    for start in range(0, len(todo), COUNT_BATCH):
        part = todo[start:start + COUNT_BATCH]
        w = [count_tokens(distinct[j]) for j in part]
        s = [len(split_sentences(distinct[j])) for j in part]
        words[part], sents[part] = w, s
        if cache is not None:
            cache.put_counts(sig, [keys[j] for j in part], w, s)
    return words.astype(np.float64)[codes], sents.astype(np.float64)[codes]


def evidence_lengths(words: np.ndarray, sents: np.ndarray) -> EvidenceLength:
    """Mean and median words and sentences of a slice's rows."""
    return EvidenceLength(words_mean=float(words.mean()), words_median=float(np.median(words)),
                          sentences_mean=float(sents.mean()), sentences_median=float(np.median(sents)))


def slice_companions(slices: Sequence[SliceRow], rows: Mapping[str, np.ndarray], labels: np.ndarray,
                     evidences: Sequence[str], scores: Mapping[str, np.ndarray],
                     weights: np.ndarray | None = None,
                     counts: tuple[np.ndarray, np.ndarray] | None = None) -> list[SliceCompanion]:
    """AUPRC per scorer (failed rows left out and counted) and evidence length, for every two-class slice;
    with `weights` (a sample's 1/π) AUPRC and prevalence are Horvitz–Thompson estimates for the pool. `counts`:
    evidence_counts(evidences), when the caller counted them already."""
    words, sents = evidence_counts(evidences) if counts is None else counts
    out = []
    for s in slices:
        if s.status != "ok":
            continue
        r = rows[s.slice]
        y = labels[r]
        w = np.ones(r.size) if weights is None else np.asarray(weights, dtype=np.float64)[r]
        auprc = {}
        for name, sc in scores.items():
            v = sc[r]
            ok = np.isfinite(v)
            auprc[name] = AuprcCell(auprc=average_precision(v[ok], y[ok], w[ok]) if y[ok].any() else float("nan"),
                                    n=int(ok.sum()), n_failed=int((~ok).sum()))
        out.append(SliceCompanion(slice=s.slice, construct=s.construct, n=int(r.size),
                                  prevalence=float((w * y).sum() / w.sum()), weighted=weights is not None,
                                  auprc=auprc, evidence_length=evidence_lengths(words[r], sents[r])))
    return out


def balanced_accuracy_rows(datasets: Sequence[str], metrics: Sequence[str], rows: Mapping[str, np.ndarray],
                           labels: np.ndarray, scores: Mapping[str, np.ndarray]) -> list[BalancedAccuracyRow]:
    """Each metric's balanced accuracy on each dataset at the threshold fitted on the construct's other datasets."""
    out = []
    for m in metrics:
        for d in datasets:
            train = np.concatenate([rows[o] for o in datasets if o != d])
            xs, ys = scores[m][train], labels[train]
            xt, yt = scores[m][rows[d]], labels[rows[d]]
            ks, kt = np.isfinite(xs), np.isfinite(xt)
            head = BalancedAccuracyRow(scorer=m, dataset=d, threshold_from=[o for o in datasets if o != d],
                                       n_failed_excluded=int((~ks).sum() + (~kt).sum()))
            try:
                t = transferred_balanced_accuracy(xs[ks], ys[ks], xt[kt], yt[kt])
            except ValueError as exc:  # the other datasets' scored rows hold one class only
                out.append(replace(head, reason=str(exc)))
                continue
            out.append(replace(head, threshold=t.threshold, train_balanced_accuracy=t.train_balanced_accuracy,
                               test_balanced_accuracy=t.test_balanced_accuracy, n_train=t.n_train, n_test=t.n_test))
    return out


def length_correlates(mat: AurocMatrix, companions: Sequence[SliceCompanion]) -> list[LengthCorrelate]:
    """Spearman ρ across the construct's datasets between each metric's AUROC and mean evidence length."""
    length = {c.slice: c.evidence_length for c in companions}
    words = np.array([length[d].words_mean for d in mat.datasets])
    sents = np.array([length[d].sentences_mean for d in mat.datasets])
    out = []
    for i, m in enumerate(mat.metrics):
        rw, pw = spearman(mat.point[i], words)
        rs, ps = spearman(mat.point[i], sents)
        out.append(LengthCorrelate(scorer=m, rho_words=rw, p_words=pw, rho_sentences=rs, p_sentences=ps,
                                   n_datasets=len(mat.datasets)))
    return out


NOTES = ("statistics run within one construct; constructs are never pooled",
         "replicate b of the metric × dataset matrix joins resample b of every dataset (paired within a dataset, "
         "independent across datasets); regret CIs recompute the best metric in every replicate, so they lean "
         "positive when metrics are close",
         "every comparison uses, per dataset, the rows where all of the construct's metrics have a score "
         "(`rows`: rows used and rows each metric's failures removed); single-metric AUROCs use their own",
         THRESHOLD_NOTE)


def transfer_section(slices: Sequence[SliceRow], boots: Mapping[str, SliceBoot], metrics: Sequence[str],
                     rows: Mapping[str, np.ndarray], labels: np.ndarray, evidences: Sequence[str],
                     scores: Mapping[str, np.ndarray], *, seed: int, n_perm: int = DEFAULT_N_PERM,
                     weights: np.ndarray | None = None,
                     counts: tuple[np.ndarray, np.ndarray] | None = None, statistic: str = "auroc",
                     graded: Mapping[str, Any] | None = None,
                     graded_missing: Mapping[str, str] | None = None) -> TransferSection:
    """The whole `transfer` block of results.json; `boots` maps slice → SliceBoot (paired replicates); `counts`:
    evidence_counts of every row, when the caller counted them already. With a graded `statistic` (a correlation
    with the rating) `graded` maps slice → its StatisticBoot, and `graded_missing` slice → why it has none: the
    matrix, regret and selector then run on that statistic instead of the AUROC."""
    auroc = statistic == "auroc"
    per_slice: Mapping[str, Any] = {d: b.boot for d, b in boots.items()} if auroc else dict(graded or {})
    usable = None if auroc else {**{d: "" for d in per_slice}, **(graded_missing or {})}
    groups, excluded = construct_groups(slices, usable)
    companions = slice_companions(slices, rows, labels, evidences, scores, weights, counts)
    constructs = {}
    for c, datasets in sorted(groups.items()):
        if len(datasets) < 2:
            constructs[c] = ConstructTransfer(datasets=datasets, status="insufficient",
                                              reason="one dataset of this construct: transfer needs at least two")
            continue
        mat, dropped, used = build_matrix(datasets, list(metrics), {d: per_slice[d] for d in datasets},
                                          unit=STATISTIC_LABELS.get(statistic, statistic))
        if mat is None or len(mat.metrics) < 2:
            constructs[c] = ConstructTransfer(datasets=datasets, excluded_metrics=dropped, rows=used,
                                              status="insufficient",
                                              reason="fewer than two metrics defined on every dataset")
            continue
        stats = matrix_statistics(mat, construct=c, seed=seed, n_perm=n_perm)
        if auroc:  # a threshold's balanced accuracy and the two-class slices' companions need the binary label
            stats = replace(stats, balanced_accuracy=balanced_accuracy_rows(datasets, mat.metrics, rows, labels,
                                                                            scores),
                            length_correlates=length_correlates(mat, companions))
        constructs[c] = ConstructTransfer(datasets=list(mat.datasets), excluded_metrics=dropped, rows=used,
                                          status="ok", statistics=stats)
    return TransferSection(level=LEVEL, n_perm=n_perm, statistic=statistic, notes=list(NOTES), slices=companions,
                           excluded_slices=excluded, constructs=constructs)
