"""The `sensitivity` section of an audit: is a ranking flip real, or an artefact of length, truncation or one dataset?

1. window: every scorer with a token window rescored at `--window-sensitivity N`; AUROC at both
   windows, the paired difference, and whether the metric ranking or the verdict changes;
2. chunking: each `<scorer>-chunk` run beside its truncating `<scorer>`: AUROC change, pairs cut
   before/after, and whether the verdict changes when the chunked variant replaces it;
3. length: AUROC per evidence-length bin (bins shared by the datasets of a construct, from the
   pooled word counts) and per within-dataset short/long half;
4. lodo: the recommended metric and portability with each dataset of a construct dropped;
5. exchangeability: a cluster-respecting permutation of dataset assignment, beside the residual
   permutation of the transfer section;
6. length_spearman: Spearman ρ of score with evidence length inside each label class.
Every bootstrap here replays the audit's draws for the slice (`slice_rng(seed, slice)`), so all
differences are paired with the audit's own replicates.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Sequence

import numpy as np

from attrib_audit.audit.config import STATISTIC_LABELS, AuditConfig
from attrib_audit.audit.correlations import StatisticBoot
from attrib_audit.audit.recommend import recommend
from attrib_audit.audit.results import SliceBoot, SliceRow
from attrib_audit.audit.transfer import LEVEL, SKIP, TransferSection, build_matrix, construct_groups, evidence_words
from attrib_audit.data.records import PairTable
from attrib_audit.engine.runner import RunStats
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.stats.bootstrap import (
    BootstrapAUROC,
    bootstrap_aurocs,
    paired_auroc_difference,
    paired_difference,
    percentile_ci,
    slice_rng,
)
from attrib_audit.stats.sensitivity import (
    Exchangeability,
    SubsetAUROC,
    assign_bins,
    class_spearman,
    drop_dataset,
    exchangeability_test,
    median_halves,
    quantile_edges,
    ranking,
    subset_bootstrap,
)
from attrib_audit.stats.transfer import AurocMatrix

N_LENGTH_BINS = 3
MIN_PER_CLASS = 5  # a bin or half names a best metric only with at least this many rows of each label
CHUNK_SUFFIX = "-chunk"
EXCHANGEABILITY_CAVEAT = (
    "shuffling clusters across datasets makes the datasets exchangeable, which removes dataset difficulty and "
    "metric × dataset interaction at once: a small p says the datasets differ, not that the metrics' order depends "
    "on the dataset; the residual permutation (dataset difficulty held fixed) is the test of interaction")


# ---- the records of the `sensitivity` block (its JSON is their `to_record`) ----

@dataclass(frozen=True, kw_only=True)
class Verdict:
    """`select`'s answer for one construct in one world of metrics: the recommended metric (None when there is
    none), its verdict and the portable metrics."""

    recommended: str | None
    verdict: str
    portable: list[str]


@dataclass(frozen=True, kw_only=True)
class VerdictChange:
    """One construct's verdict before and after a substitution (another window, a chunked variant), and what
    changed; with chunking, `scorer` and `chunked` name the substitution."""

    scorer: str | None = field(default=None, metadata=SKIP)
    chunked: str | None = field(default=None, metadata=SKIP)
    construct: str
    before: Verdict
    after: Verdict
    recommended_changed: bool
    verdict_changed: bool
    portability_changed: bool


@dataclass(frozen=True, kw_only=True)
class WindowScorer:
    """A scorer rescored at another token window: its own window, the one reached, the rescored signature."""

    scorer: str
    window: int
    window_alt: int | None
    signature_alt: str


@dataclass(frozen=True, kw_only=True)
class SkippedScorer:
    """A scorer not rescored at the other window, and why."""

    scorer: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class WindowRow:
    """One scorer on one slice: AUROC at its own window and at the other, the paired difference (alt − own) with
    its CI, and the pairs and tokens cut and rows failed at each."""

    scorer: str
    slice: str
    auroc: float
    auroc_alt: float
    diff: float
    ci_low: float
    ci_high: float
    n: int
    excludes_zero: bool
    pairs_truncated: int
    pairs_truncated_alt: int
    tokens_truncated: int
    tokens_truncated_alt: int
    n_failed: int
    n_failed_alt: int


@dataclass(frozen=True, kw_only=True)
class RankingRow:
    """The metric ranking of a slice at the scorers' own windows and at the other, and whether it changed."""

    slice: str
    ranking: list[str]
    ranking_alt: list[str]
    changed: bool
    best: str
    best_alt: str


@dataclass(frozen=True, kw_only=True)
class WindowSection:
    """Window sensitivity: every scorer with a token window rescored at `window` tokens."""

    window: int
    scorers: list[WindowScorer]
    skipped: list[SkippedScorer]
    rows: list[WindowRow]
    ranking: list[RankingRow]
    verdicts: list[VerdictChange]
    scoring: list[RunStats] = field(default_factory=list)  # cache and scoring counts of the rescoring


@dataclass(frozen=True, kw_only=True)
class ChunkPair:
    """A truncating scorer and its `-chunk` variant."""

    scorer: str
    chunked: str


@dataclass(frozen=True, kw_only=True)
class ChunkRow:
    """Chunked − truncated AUROC of one scorer on one slice (the audit's draws), pairs cut by each, windows used."""

    scorer: str
    chunked: str
    slice: str
    auroc: float
    auroc_chunked: float
    diff: float
    ci_low: float
    ci_high: float
    n: int
    excludes_zero: bool
    pairs_truncated: int
    pairs_truncated_chunked: int
    mean_chunks: float


@dataclass(frozen=True, kw_only=True)
class ChunkSection:
    """Each chunked variant beside its truncating scorer, and the verdicts with it in its place."""

    pairs: list[ChunkPair]
    rows: list[ChunkRow]
    verdicts: list[VerdictChange]


@dataclass(frozen=True, kw_only=True)
class LengthCell:
    """A scorer's AUROC [CI] on the rows of one dataset that fall in one shared length bin."""

    dataset: str
    bin: int
    scorer: str
    auroc: float
    ci_low: float
    ci_high: float
    n: int
    n_pos: int


@dataclass(frozen=True, kw_only=True)
class BinBest:
    """The best metric per dataset in one length bin (datasets with enough rows of each label only)."""

    bin: int
    range: list[float]  # the bin's edges in words
    best_per_dataset: dict[str, str]
    same_best: bool


@dataclass(frozen=True, kw_only=True)
class LengthBins:
    """One construct's shared length bins: their edges, every cell, and the best metric per bin."""

    construct: str
    edges: list[float]
    n_bins: int
    cells: list[LengthCell]
    best: list[BinBest]


@dataclass(frozen=True, kw_only=True)
class HalfScorer:
    """One scorer's AUROC on a slice's short and long halves and the difference long − short with its CI."""

    scorer: str
    auroc_short: float
    auroc_long: float
    diff: float
    ci_low: float
    ci_high: float
    n_short: int
    n_long: int
    excludes_zero: bool


@dataclass(frozen=True, kw_only=True)
class HalvesRow:
    """A slice split at its median evidence words: every scorer's halves and the best metric on each half."""

    slice: str
    construct: str | None
    median_words: float
    scorers: list[HalfScorer]
    best_short: str
    best_long: str
    ranking_changed: bool


@dataclass(frozen=True, kw_only=True)
class LengthSection:
    """AUROC at matched evidence length (bins shared by a construct's datasets) and per within-slice half."""

    measure: str
    n_bins: int
    bins: list[LengthBins]
    halves: list[HalvesRow]


@dataclass(frozen=True, kw_only=True)
class SpearmanRow:
    """Spearman ρ of one scorer's score with evidence words inside each label class of a slice."""

    slice: str
    scorer: str
    rho_neg: float
    p_neg: float
    n_neg: int
    rho_pos: float
    p_pos: float
    n_pos: int


@dataclass(frozen=True, kw_only=True)
class LodoDrop:
    """The verdict with one dataset dropped (written inline), and what changed against all datasets."""

    dropped: str
    outcome: Verdict = field(metadata={"inline": True})
    recommended_changed: bool
    verdict_changed: bool
    portability_changed: bool


@dataclass(frozen=True, kw_only=True)
class LodoRow:
    """One construct's verdict on all datasets and with each dropped, or why it was not computed."""

    construct: str
    status: Literal["ok", "insufficient"]
    reason: str | None = field(default=None, metadata=SKIP)
    full: Verdict | None = field(default=None, metadata=SKIP)
    drops: list[LodoDrop] | None = field(default=None, metadata=SKIP)
    stable: bool | None = field(default=None, metadata=SKIP)
    statistic: str | None = field(default=None, metadata=SKIP)  # the graded transfer statistic, when not AUROC


@dataclass(frozen=True, kw_only=True)
class ExchangeabilityRow:
    """The cluster-shuffling permutation of dataset assignment (stats.sensitivity.Exchangeability, written inline)
    beside the transfer section's residual permutation p."""

    construct: str
    datasets: list[str]
    metrics: list[str]
    test: Exchangeability = field(metadata={"inline": True})
    p_interaction_residual: float
    caveat: str


@dataclass(frozen=True, kw_only=True)
class SensitivitySection:
    """The `sensitivity` block of results.json: is a ranking flip real, or an artefact of length, truncation or one
    dataset? `window` and `chunking` only when the audit ran them."""

    level: float
    notes: list[str]
    window: WindowSection | None = field(default=None, metadata=SKIP)
    chunking: ChunkSection | None = field(default=None, metadata=SKIP)
    length: LengthSection
    length_spearman: list[SpearmanRow]
    statistic: str | None = field(default=None, metadata=SKIP)  # a graded --statistic: what `lodo` compares by
    lodo: list[LodoRow]
    exchangeability: list[ExchangeabilityRow]


# ---- verdicts of one "world" of metrics (used by window, chunking and lodo) ----

def construct_matrix(datasets: Sequence[str], metrics: Sequence[str],
                     boots: Mapping[str, BootstrapAUROC | StatisticBoot]) -> AurocMatrix | None:
    """The construct's metric × dataset matrix from per-dataset bootstraps whose rows follow `metrics` (or None)."""
    mat, _, _ = build_matrix(datasets, list(metrics), boots)
    return mat if mat is not None and len(mat.metrics) >= 2 else None


def world_boots(table: PairTable, rows: Mapping[str, np.ndarray], world: Mapping[str, np.ndarray],
                config: AuditConfig) -> dict[str, BootstrapAUROC]:
    """Per slice, the bootstrap of the scores in `world` (name → scores of every row) on the audit's draws."""
    return {sl: bootstrap_aurocs(np.vstack([v[r] for v in world.values()]), table.labels[r].astype(np.int64),
                                 [table.groups[i] for i in r], n_boot=config.n_boot, rng=slice_rng(config.seed, sl),
                                 weights=_weights(table, r))
            for sl, r in rows.items()}


def _weights(table: PairTable, r: np.ndarray) -> np.ndarray | None:
    """A sampled file's Horvitz–Thompson row weights (1/π) on rows `r`, as the audit's own bootstrap uses them."""
    return None if table.weights is None else table.weights[r]


def world_verdicts(groups: Mapping[str, list[str]], metrics: Sequence[str],
                   boots: Mapping[str, BootstrapAUROC]) -> dict[str, Verdict]:
    """Per construct: the `select` recommendation and the portable metrics for these metrics' AUROCs."""
    out = {}
    for c, datasets in sorted(groups.items()):
        mat = construct_matrix(datasets, metrics, boots) if len(datasets) >= 2 else None
        if mat is not None:
            out[c] = _verdict(c, mat)
    return out


def _verdict(construct: str, mat: AurocMatrix, unit: str = "AUROC") -> Verdict:
    r = recommend(construct, mat, unit=unit)  # the unit sets the chance level: 0.5 for AUROC, 0 for a correlation
    return Verdict(recommended=r.metric, verdict=r.verdict, portable=list(r.portable_metrics))


def compare_verdicts(before: Mapping[str, Verdict], after: Mapping[str, Verdict],
                     renamed: Mapping[str, str]) -> list[VerdictChange]:
    """Per construct: the verdict before and after substitution (`renamed`: metric before → its replacement)."""
    back = {v: k for k, v in renamed.items()}
    rows = []
    for c in sorted(set(before) & set(after)):
        b, a = before[c], after[c]
        a_port = sorted(back.get(m, m) for m in a.portable)
        rec = a.recommended
        rows.append(VerdictChange(construct=c, before=b, after=a,
                                  recommended_changed=(back.get(rec, rec) if rec is not None else rec)
                                  != b.recommended,
                                  verdict_changed=a.verdict != b.verdict,
                                  portability_changed=sorted(b.portable) != a_port))
    return rows


# ---- 1 + 2: window sensitivity and chunking ----

@dataclass(frozen=True, kw_only=True)
class WindowRescore:
    """The audit's scorers with a token window, rescored at `window` tokens (audit.run.rescore_at_window)."""

    window: int
    scores: Mapping[str, ScoreBatch]  # scorer -> its scores at `window` tokens, rows as the audit's
    scorers: list[WindowScorer]  # scorer, own window, the window reached, the rescored scorer's signature
    skipped: list[SkippedScorer]  # scorers not rescored, each with the reason
    scoring: list[RunStats]  # cache and scoring counts of the rescoring


@dataclass(frozen=True)
class _Cut:
    pairs_truncated: int
    tokens_truncated: int
    mean_chunks: float
    n_failed: int


def _trunc(batch: ScoreBatch, rows: np.ndarray) -> _Cut:
    b = batch.take(rows)
    return _Cut(pairs_truncated=int((b.truncated_tokens > 0).sum()), tokens_truncated=int(b.truncated_tokens.sum()),
                mean_chunks=float(b.chunks.mean()) if rows.size else 0.0,
                n_failed=sum(f is not None for f in b.failures))


def window_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                   alt: WindowRescore, groups: Mapping[str, list[str]], config: AuditConfig) -> WindowSection:
    """AUROC at both windows per slice, paired differences, ranking and verdict changes."""
    alt_scores = alt.scores
    names = list(scores)
    base_boots = world_boots(table, rows, {n: scores[n].scores for n in names}, config)
    alt_boots = world_boots(table, rows, {n: (alt_scores.get(n) or scores[n]).scores for n in names}, config)
    out_rows, rank_rows = [], []
    for sl, r in rows.items():
        y, grp = table.labels[r].astype(np.int64), [table.groups[i] for i in r]
        for i, n in enumerate(names):
            if n not in alt_scores:
                continue
            d = paired_auroc_difference(alt_scores[n].scores[r], scores[n].scores[r], y, grp, n_boot=config.n_boot,
                                        seed=slice_rng(config.seed, sl), level=config.level, weights=_weights(table, r))
            tb, ta = _trunc(scores[n], r), _trunc(alt_scores[n], r)
            out_rows.append(WindowRow(scorer=n, slice=sl, auroc=float(base_boots[sl].point[i]),
                                      auroc_alt=float(alt_boots[sl].point[i]), diff=d.estimate, ci_low=d.ci_low,
                                      ci_high=d.ci_high, n=d.n, excludes_zero=bool(d.ci_low > 0 or d.ci_high < 0),
                                      pairs_truncated=tb.pairs_truncated, pairs_truncated_alt=ta.pairs_truncated,
                                      tokens_truncated=tb.tokens_truncated, tokens_truncated_alt=ta.tokens_truncated,
                                      n_failed=tb.n_failed, n_failed_alt=ta.n_failed))
        rb, ra = ranking(names, base_boots[sl].point), ranking(names, alt_boots[sl].point)
        rank_rows.append(RankingRow(slice=sl, ranking=rb, ranking_alt=ra, changed=rb != ra, best=rb[0],
                                    best_alt=ra[0]))
    verdicts = compare_verdicts(world_verdicts(groups, names, base_boots), world_verdicts(groups, names, alt_boots),
                                {})
    return WindowSection(window=alt.window, scorers=list(alt.scorers), skipped=list(alt.skipped), rows=out_rows,
                         ranking=rank_rows, verdicts=verdicts, scoring=list(alt.scoring))


def chunk_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """(truncating scorer, chunked variant) for every `<name>-chunk` run beside its `<name>`."""
    return [(n[: -len(CHUNK_SUFFIX)], n) for n in names
            if n.endswith(CHUNK_SUFFIX) and n[: -len(CHUNK_SUFFIX)] in names]


def chunk_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                  boots: Mapping[str, SliceBoot],
                  groups: Mapping[str, list[str]], pairs: list[tuple[str, str]], config: AuditConfig) -> ChunkSection:
    """Chunked − truncated AUROC per slice on the audit's own draws, truncation before/after, verdict change."""
    names = list(scores)
    out = []
    for sl, r in rows.items():
        boot = boots[sl].boot
        for base, chunked in pairs:
            i, j = names.index(base), names.index(chunked)
            d = paired_difference(boot, j, i)
            tb, tc = _trunc(scores[base], r), _trunc(scores[chunked], r)
            out.append(ChunkRow(scorer=base, chunked=chunked, slice=sl, auroc=float(boot.point[i]),
                                auroc_chunked=float(boot.point[j]), diff=d.estimate, ci_low=d.ci_low,
                                ci_high=d.ci_high, n=d.n, excludes_zero=bool(d.ci_low > 0 or d.ci_high < 0),
                                pairs_truncated=tb.pairs_truncated, pairs_truncated_chunked=tc.pairs_truncated,
                                mean_chunks=tc.mean_chunks))
    kept = [n for n in names if n not in {c for _, c in pairs}]

    def verdicts_of(metrics: list[str]) -> dict[str, Verdict]:
        return world_verdicts(groups, metrics, world_boots(table, rows, {n: scores[n].scores for n in metrics}, config))

    before = verdicts_of(kept)
    verdicts = []
    for base, chunked in pairs:
        after = verdicts_of([chunked if n == base else n for n in kept])
        verdicts += [replace(row, scorer=base, chunked=chunked)
                     for row in compare_verdicts(before, after, {base: chunked})]
    return ChunkSection(pairs=[ChunkPair(scorer=b, chunked=c) for b, c in pairs], rows=out, verdicts=verdicts)


# ---- 3 + 6: evidence length ----

def length_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                   groups: Mapping[str, list[str]], words: np.ndarray, config: AuditConfig) -> LengthSection:
    """AUROC per shared length bin (slices of a construct) and per within-slice half, on the slice's audit draws."""
    names = list(scores)
    construct_of = {d: c for c, ds in groups.items() for d in ds}
    edges = {c: quantile_edges(np.concatenate([words[rows[d]] for d in ds]), N_LENGTH_BINS) for c, ds in groups.items()}
    cells: dict[str | None, list[LengthCell]] = {c: [] for c in groups}  # no construct (None): no bin, never read
    best: dict[str | None, dict[int, dict[str, str]]] = {c: {} for c in groups}
    halves = []
    for sl, r in rows.items():
        c = construct_of.get(sl)
        k = max(edges[c].size - 1, 1) if c else 0
        b = assign_bins(words[r], edges[c]) if c else np.zeros(r.size, dtype=np.int64)
        masks = np.vstack([b == j for j in range(k)] + list(median_halves(words[r])))
        res = subset_bootstrap(np.vstack([scores[n].scores[r] for n in names]), table.labels[r],
                               [table.groups[i] for i in r], masks, n_boot=config.n_boot,
                               rng=slice_rng(config.seed, sl))
        for j in range(k):
            for i, n in enumerate(names):
                lo, hi, _ = percentile_ci(res.replicates[i, j], LEVEL)
                cells[c].append(LengthCell(dataset=sl, bin=j, scorer=n, auroc=float(res.point[i, j]), ci_low=lo,
                                           ci_high=hi, n=int(res.n[i, j]), n_pos=int(res.n_pos[i, j])))
            n_neg = res.n[:, j] - res.n_pos[:, j]
            if (np.isfinite(res.point[:, j]) & (res.n_pos[:, j] >= MIN_PER_CLASS) & (n_neg >= MIN_PER_CLASS)).any():
                best[c].setdefault(j, {})[sl] = ranking(names, res.point[:, j])[0]
        halves.append(_halves_row(sl, c, words[r], names, res, k))
    bins = []
    for c in sorted(groups):
        e = edges[c]
        k = max(e.size - 1, 1)
        bins.append(LengthBins(construct=c, edges=e.tolist(), n_bins=k, cells=cells[c],
                               best=[BinBest(bin=j, range=[float(e[j]), float(e[min(j + 1, e.size - 1)])],
                                             best_per_dataset=best[c].get(j, {}),
                                             same_best=len(best[c].get(j, {})) >= 2
                                             and len(set(best[c][j].values())) == 1)
                                     for j in range(k)]))
    return LengthSection(measure="evidence words", n_bins=N_LENGTH_BINS, bins=bins, halves=halves)


def _halves_row(dataset: str, construct: str | None, w: np.ndarray, names: list[str], res: SubsetAUROC,
                k: int) -> HalvesRow:
    short, long = k, k + 1
    per = []
    for i, n in enumerate(names):
        lo, hi, _ = percentile_ci(res.replicates[i, long] - res.replicates[i, short], LEVEL)
        diff = res.point[i, long] - res.point[i, short]
        per.append(HalfScorer(scorer=n, auroc_short=float(res.point[i, short]), auroc_long=float(res.point[i, long]),
                              diff=float(diff), ci_low=lo, ci_high=hi,
                              n_short=int(res.n[i, short]), n_long=int(res.n[i, long]),
                              excludes_zero=bool(np.isfinite(lo) and (lo > 0 or hi < 0))))
    rs, rl = ranking(names, res.point[:, short]), ranking(names, res.point[:, long])
    return HalvesRow(slice=dataset, construct=construct, median_words=float(np.median(w)), scorers=per,
                     best_short=rs[0], best_long=rl[0], ranking_changed=rs != rl)


def spearman_rows(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                  words: np.ndarray) -> list[SpearmanRow]:
    """Per slice and scorer: Spearman ρ of score with evidence words within each label class."""
    names = list(scores)
    out = []
    for sl, r in rows.items():
        rho, p, n = class_spearman(np.vstack([scores[x].scores[r] for x in names]), words[r], table.labels[r])
        for i, name in enumerate(names):
            out.append(SpearmanRow(slice=sl, scorer=name, rho_neg=float(rho[i, 0]), p_neg=float(p[i, 0]),
                                   n_neg=int(n[i, 0]), rho_pos=float(rho[i, 1]), p_pos=float(p[i, 1]),
                                   n_pos=int(n[i, 1])))
    return out


# ---- 4 + 5: dataset-level stability ----

def statistic_lodo_section(slices: Sequence[SliceRow], names: Sequence[str], graded: Mapping[str, StatisticBoot],
                           statistic: str) -> list[LodoRow]:
    """The leave-one-dataset-out verdicts under a graded transfer statistic (`--statistic`), so that they drop
    datasets from the same matrix the transfer section recommends from; each row names its statistic.

    Args:
        slices: the audit's slice rows.
        names: the metrics.
        graded: slice → its StatisticBoot (slices without one are left out, as the transfer section leaves them).
        statistic: the transfer statistic.

    Returns:
        `lodo_section`'s rows, each with `statistic`.
    """
    groups, _ = construct_groups(slices, {s.slice: "" if s.slice in graded else "no graded statistic"
                                          for s in slices})
    return lodo_section(groups, names, graded, STATISTIC_LABELS.get(statistic, statistic), statistic=statistic)


def lodo_section(groups: Mapping[str, list[str]], names: Sequence[str],
                 boots: Mapping[str, BootstrapAUROC | StatisticBoot], unit: str = "AUROC",
                 statistic: str | None = None) -> list[LodoRow]:
    """Per construct: the recommendation on all datasets, then with each one dropped (`boots`: each slice's
    bootstrap of the statistic compared; `unit`: its label, AUROC or a correlation's; `statistic`: the graded
    transfer statistic the rows are named by, if any)."""
    out: list[LodoRow] = []
    for c, datasets in sorted(groups.items()):
        mat = construct_matrix(datasets, names, {d: boots[d] for d in datasets})
        if mat is None or len(datasets) < 3:
            out.append(LodoRow(construct=c, status="insufficient",
                               reason="needs three datasets (dropping one must leave two) and two metrics defined on "
                                      "all"))
            continue
        full = _verdict(c, mat, unit)
        drops = []
        for d in datasets:
            v = _verdict(c, drop_dataset(mat, d), unit)
            drops.append(LodoDrop(dropped=d, outcome=v, recommended_changed=v.recommended != full.recommended,
                                  verdict_changed=v.verdict != full.verdict,
                                  portability_changed=sorted(v.portable) != sorted(full.portable)))
        out.append(LodoRow(construct=c, status="ok", full=full, drops=drops,
                           stable=not any(x.recommended_changed or x.verdict_changed for x in drops),
                           statistic=statistic))
    return out


def exchangeability_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                            groups: Mapping[str, list[str]], transfer: TransferSection,
                            config: AuditConfig) -> list[ExchangeabilityRow]:
    """Per construct with transfer statistics: the cluster-shuffling permutation of dataset assignment."""
    out = []
    ok = transfer.ok
    for c, datasets in sorted(groups.items()):
        if c not in ok:
            continue
        stats = ok[c][1]
        metrics = stats.metrics
        r = np.concatenate([rows[d] for d in datasets])
        ds = np.concatenate([np.full(rows[d].size, j) for j, d in enumerate(datasets)])
        keys = np.array([f"{j}\x1f{table.groups[i]}" for j, i in zip(ds, r)], dtype=object)
        uniq, row_cluster = np.unique(keys.astype(str), return_inverse=True)
        cluster_ds = np.array([int(u.split("\x1f", 1)[0]) for u in uniq])
        res = exchangeability_test(np.vstack([scores[m].scores[r] for m in metrics]), table.labels[r], row_cluster,
                                   cluster_ds, config.n_perm,
                                   slice_rng(config.seed, f"sensitivity:exchangeability:{c}"))
        out.append(ExchangeabilityRow(construct=c, datasets=datasets, metrics=metrics, test=res,
                                      p_interaction_residual=stats.decomposition.p_interaction,
                                      caveat=EXCHANGEABILITY_CAVEAT))
    return out


# ---- the section ----

NOTES = ("every bootstrap replays the audit's draws for the slice, so differences are paired with its CIs",
         f"length = evidence words; bins are the {N_LENGTH_BINS}-quantiles of the pooled word counts of a "
         "construct's datasets, so its datasets are compared at matched length; a bin names a best metric "
         f"for a dataset only with at least {MIN_PER_CLASS} rows of each label there",
         "verdicts are `select`'s recommendation (lowest-regret metric) and the portable metrics")


def sensitivity_section(table: PairTable, keys: Sequence[str], scores: Mapping[str, ScoreBatch],
                        boots: Mapping[str, SliceBoot],
                        slices: Sequence[SliceRow], transfer: TransferSection, config: AuditConfig,
                        window: WindowRescore | None = None,
                        words: np.ndarray | None = None,
                        graded: Mapping[str, StatisticBoot] | None = None) -> SensitivitySection:
    """The `sensitivity` block of results.json; `window` is the audit's rescoring at another token window; `words`:
    evidence_words of every row, when the caller counted them already; `graded`: slice → StatisticBoot under a
    graded `--statistic`, which the leave-one-dataset-out verdicts then use (the other parts stay AUROC-based)."""
    groups, _ = construct_groups(slices)
    key_arr = np.asarray(keys, dtype=object)
    rows = {s.slice: np.flatnonzero(key_arr == s.slice) for s in slices if s.slice in boots}
    words = evidence_words(table.evidences) if words is None else words
    pairs = chunk_pairs(list(scores))
    by_statistic = config.statistic != "auroc" and graded is not None
    return SensitivitySection(
        level=LEVEL, notes=list(NOTES) + ([graded_note(config.statistic)] if by_statistic else []),
        window=window_section(table, rows, scores, window, groups, config) if window is not None else None,
        chunking=chunk_section(table, rows, scores, boots, groups, pairs, config) if pairs else None,
        length=length_section(table, rows, scores, groups, words, config),
        length_spearman=spearman_rows(table, rows, scores, words),
        statistic=config.statistic if by_statistic else None,
        lodo=(statistic_lodo_section(slices, list(scores), graded or {}, config.statistic) if by_statistic
              else lodo_section(groups, list(scores), {d: b.boot for d, b in boots.items()})),
        exchangeability=[] if by_statistic else exchangeability_section(table, rows, scores, groups, transfer, config))


def graded_note(statistic: str) -> str:
    """Which parts of the section a graded `--statistic` changes, and which stay AUROC-based."""
    label = STATISTIC_LABELS.get(statistic, statistic)
    return (f"the leave-one-dataset-out verdicts compare the metrics by their {label}, as the transfer section does; "
            "window, chunking, matched length and the length correlation compare AUROCs of the binary label (where "
            "there is one); the exchangeability permutation is defined on AUROCs and is not run under --statistic "
            f"{statistic} (the transfer section's residual permutation tests the interaction on the statistic)")
