"""The audit pipeline: score a PairTable with several scorers, then per slice AUROC with clustered CIs and
paired differences, then the transfer and sensitivity sections; `run_spec` runs it from a run spec.

Each step is a function a user can call from Python; the CLI is a thin layer over `run_spec`. Scoring
(including the window-sensitivity rescoring) happens here and in the engine; the sections below receive
scores and only compute statistics.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Mapping, Sequence

import numpy as np

from attrib_audit.audit.config import AuditConfig
from attrib_audit.audit.correlations import correlation_section, cut_sensitivity, graded_boots
from attrib_audit.audit.results import (
    AuditResult,
    AuditResults,
    AurocRow,
    ChanceTest,
    ConfigRecord,
    FailureRow,
    HandedSource,
    PairedRow,
    SliceBoot,
    SliceRow,
    SystemsBlock,
    TruncationRow,
    Unavailable,
    tool_info,
)
from attrib_audit.audit.saved import normalised
from attrib_audit.audit.sensitivity import SkippedScorer, WindowRescore, WindowScorer, sensitivity_section
from attrib_audit.audit.spec import Local, RunSpec, audit_config
from attrib_audit.audit.systems import SystemSettings, refuse_weighted, systems_section
from attrib_audit.audit.transfer import evidence_counts, transfer_section
from attrib_audit.data.errors import DataError
from attrib_audit.data.origin import PairsFile
from attrib_audit.data.records import PairTable
from attrib_audit.data.sources import load_data
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.runner import RunStats
from attrib_audit.engine.table import build_scorers, no_scorer_ran, score_table
from attrib_audit.errors import UsageError
from attrib_audit.external.precomputed import Precomputed
from attrib_audit.external.sources import ScoreSource, precomputed_scores
from attrib_audit.files.outdir import new_run_id
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerUnavailable
from attrib_audit.scorers.catalog import get_scorer
from attrib_audit.scorers.judge.http import public_options
from attrib_audit.stats.bootstrap import bootstrap_aurocs, paired_difference, percentile_ci, slice_rng
from attrib_audit.stats.chance import CHANCE_TEST, chance_pvalues, holm


@dataclass(frozen=True, kw_only=True)
class SliceStatistics:
    """Every slice's rows of results.json (slices, auroc, paired, truncation, failures) and the bootstraps behind
    them."""

    slices: list[SliceRow]
    auroc: list[AurocRow]
    paired: list[PairedRow]
    truncation: list[TruncationRow]
    failures: list[FailureRow]
    boots: dict[str, SliceBoot]


def slice_statistics(table: PairTable, keys: list[str], scores: dict[str, ScoreBatch],
                     config: AuditConfig) -> SliceStatistics:
    """Per-slice AUROC with clustered CIs and all paired differences, from shared resamples."""
    names = list(scores)
    key_arr = np.asarray(keys, dtype=object)
    slices: list[SliceRow] = []
    auroc_rows: list[AurocRow] = []
    paired_rows: list[PairedRow] = []
    trunc_rows: list[TruncationRow] = []
    fail_rows: list[FailureRow] = []
    boots: dict[str, SliceBoot] = {}
    for sl in sorted(set(keys)):
        rows = np.flatnonzero(key_arr == sl)
        y = table.labels[rows].astype(np.int64)
        groups = [table.groups[i] for i in rows]
        constructs = sorted({table.constructs[i] or "unspecified" for i in rows})
        n_pos = int((y == 1).sum())
        labelled = bool(table.labelled[rows].all())
        status = ("ok" if 0 < n_pos < rows.size else "one_class") if labelled else "no_label"
        weights = None if table.weights is None else table.weights[rows]  # a sample's 1/π: Horvitz–Thompson
        weighted = weights is not None and status == "ok" and bool(names)
        slices.append(SliceRow(
            slice=sl, n=int(rows.size), n_pos=n_pos, n_groups=len(set(groups)),
            construct=constructs[0] if len(constructs) == 1 else "mixed:" + "+".join(constructs), status=status,
            weighting="horvitz-thompson: each pair weighs 1/inclusion_prob" if weighted else None,
            # the pool the sample stands for (in expectation)
            pool_size=float(weights.sum()) if weighted and weights is not None else None))
        for name in names:
            b = scores[name].take(rows)
            n_trunc = int((b.truncated_tokens > 0).sum())
            tok_in = int(b.input_tokens.sum())
            trunc_rows.append(TruncationRow(
                scorer=name, slice=sl, n=int(rows.size), pairs_truncated=n_trunc,
                tokens_truncated=int(b.truncated_tokens.sum()), input_tokens=tok_in,
                share_tokens_cut=float(b.truncated_tokens.sum() / tok_in) if tok_in else 0.0,
                mean_chunks=float(b.chunks.mean()) if rows.size else 0.0))
            failed = [f for f in b.failures if f is not None]
            fail_rows.append(FailureRow(scorer=name, slice=sl, n=int(rows.size), n_failed=len(failed),
                                        n_clamped=sum(bool(c) for c in b.extras.get("clamped", [])),
                                        examples=failed[:3]))
        if status != "ok" or not names:
            for name in names:
                auroc_rows.append(AurocRow(
                    scorer=name, slice=sl, auroc=None, ci_low=None, ci_high=None, n=int(rows.size), n_pos=n_pos,
                    n_groups=len(set(groups)),
                    note=NO_LABEL_NOTE if status == "no_label" else "one class in slice: AUROC undefined"))
            continue
        matrix = np.vstack([scores[n].scores[rows] for n in names])
        boot = bootstrap_aurocs(matrix, y, groups, n_boot=config.n_boot, rng=slice_rng(config.seed, sl),
                                weights=weights)
        boots[sl] = SliceBoot(names, boot, rows, [str(g) for g in groups])
        p_chance = chance_pvalues(boot.point, boot.replicates)
        for j, name in enumerate(names):
            lo, hi, dropped = percentile_ci(boot.replicates[j], config.level)
            finite = np.isfinite(matrix[j])
            auroc_rows.append(AurocRow(
                scorer=name, slice=sl, auroc=float(boot.point[j]), ci_low=lo, ci_high=hi, n=int(finite.sum()),
                n_pos=int(y[finite].sum()), n_groups=len({groups[i] for i in np.flatnonzero(finite)}),
                n_failed=int((~finite).sum()), n_boot=config.n_boot, n_boot_dropped=dropped,
                chance=ChanceTest(p_chance=float(p_chance[j]))))
        for ja, jb in combinations(range(len(names)), 2):
            d = paired_difference(boot, ja, jb, config.level)
            paired_rows.append(PairedRow(
                scorer_a=names[ja], scorer_b=names[jb], slice=sl, diff=d.estimate, ci_low=d.ci_low,
                ci_high=d.ci_high, n=d.n,
                n_dropped={names[ja]: int(rows.size - boot.n[ja]), names[jb]: int(rows.size - boot.n[jb])},
                n_boot_dropped=d.n_boot_dropped, excludes_zero=bool(d.ci_low > 0 or d.ci_high < 0)))
    auroc_rows = chance_family(auroc_rows, config.level, {s.slice: s.construct for s in slices})
    return SliceStatistics(slices=slices, auroc=auroc_rows, paired=paired_rows, truncation=trunc_rows,
                           failures=fail_rows, boots=boots)


NO_LABEL_NOTE = ("no binary label (a graded rating only): AUROC undefined; the correlations section compares the "
                 "metrics (--label-from-rating CUT derives a label)")


def check_texts(table: PairTable, scorers: Sequence[str]) -> None:
    """A file without claim/evidence columns holds scores only: a scorer that reads text is refused, naming the
    column it lacks, before anything is scored."""
    if not scorers:
        return
    for o in table.origin:
        missing = o.text_columns_missing if isinstance(o, PairsFile) else ()
        if missing:
            raise DataError(f"missing column {missing[0]!r}: scorer {scorers[0]!r} reads the text; this file holds "
                            "scores only (audit them with --scorers none --score-col NAME=COL)",
                            path=o.path, field=missing[0])


def chance_family(auroc_rows: list[AurocRow], level: float, construct_of: dict[str, str]) -> list[AurocRow]:
    """Holm-adjust each scorer's chance p-values over the slices of one construct, and flag `beats_chance`.

    The family is the one `select` and the verdicts read: a scorer on the datasets of a construct.

    Args:
        auroc_rows: the per-slice AUROC rows; those with a chance test get its Holm-adjusted p and verdict.
        level: the CI level; the one-sided test runs at α = (1 − level) / 2.
        construct_of: slice → its construct.

    Returns:
        The rows in the same order, the chance tests completed.
    """
    alpha = (1.0 - level) / 2.0
    out = list(auroc_rows)
    for name, c in dict.fromkeys((r.scorer, construct_of.get(r.slice)) for r in auroc_rows):
        at = [i for i, r in enumerate(out) if r.scorer == name and construct_of.get(r.slice) == c and r.chance]
        tests = [out[i].chance for i in at]
        adjusted = holm(np.array([np.nan if t is None or t.p_chance is None else t.p_chance for t in tests]))
        for i, t, p in zip(at, tests, adjusted):
            assert t is not None  # rows without a chance test are not in `at`
            done = ChanceTest(p_chance=t.p_chance, p_chance_holm=float(p) if np.isfinite(p) else None,
                              beats_chance=bool(np.isfinite(p) and p < alpha))
            out[i] = dataclasses.replace(out[i], chance=done)
    return out


@dataclass(frozen=True, kw_only=True)
class Scored:
    """A labelled table scored: the scorers built, the scores by name, each scorer's run stats, the precomputed
    sources joined and the scorers that could not run here (with why)."""

    scorers: dict[str, Scorer]
    scores: dict[str, ScoreBatch]
    run_stats: list[RunStats]
    external: dict[str, Precomputed]
    unavailable: list[Unavailable]


def score_all(table: PairTable, config: AuditConfig, log: Callable[[str], None] = print) -> Scored:
    """The config's scorers through the engine and its precomputed metrics joined, as every command that scores a
    labelled table needs."""
    check_texts(table, list(config.scorers))
    clash = sorted(set(config.precomputed) & set(config.scorers))
    if clash:
        raise DataError(f"precomputed scorer {clash[0]!r} has the name of a scorer in `scorers`; rename it")
    external = precomputed_scores(table, config.precomputed, on_error=config.on_error, log=log)
    scorers, unavailable = build_scorers(config, log)
    scores, run_stats = score_table(table, scorers, config)
    for name, p in external.items():  # cache-free: the scores are given, only the statistics run
        scores[name] = p.batch()
        run_stats.append(p.run_stats())
    return Scored(scorers=scorers, scores=scores, run_stats=run_stats, external=external, unavailable=unavailable)


def run_audit(table: PairTable, config: AuditConfig | None = None, log: Callable[[str], None] = print, *,
              spec: RunSpec | None = None, command: Sequence[str] | None = None) -> AuditResult:
    """Score `table`, compute every section (AUROC, paired, transfer, sensitivity, system level), return the results.

    Args:
        table: The labelled pairs (`data.load_pairs`, `data.load_data`).
        config: Scorers, statistics settings and this machine's settings (None: the command line's defaults).
        log: Where progress lines go (`config.quiet` silences most).
        spec: The run spec this run realises, recorded in the results with each file's format and sha256.
        command: The command line that reruns it, recorded when given.

    Returns:
        The results (results.json's records, equal to what `read_results` gives for the saved file), the scores,
        the slices' bootstraps and the table; `save(folder)` writes results.json, scores.parquet and bootstrap.npz.

    Raises:
        UsageError: No requested scorer could run here (each named with why).
        DataError: A precomputed metric has the name of a scorer in `config.scorers`.

    Examples:
        >>> from attrib_audit.data import demo_paths, load_pairs
        >>> table = load_pairs([demo_paths()[0]], construct="attribution")
        >>> config = AuditConfig(scorers=("lexical",), n_boot=50, n_perm=100, cache_path=":memory:", quiet=True)
        >>> row = run_audit(table, config, log=lambda _line: None).results.auroc[0]
        >>> row.slice, row.scorer, row.n, [round(x, 3) for x in (row.auroc, row.ci_low, row.ci_high)]
        ('attributionbench', 'lexical', 200, [0.706, 0.574, 0.801])
    """
    config = config or AuditConfig()
    t0 = time.time()
    scored = score_all(table, config, log)
    scorers, scores, run_stats, external, unavailable = (scored.scorers, scored.scores, scored.run_stats,
                                                         scored.external, scored.unavailable)
    if not scores and unavailable:  # results.json without one AUROC would pass for a finished audit
        raise no_scorer_ran(unavailable)
    if config.statistic != "auroc" and table.ratings is None:
        raise UsageError(f"--statistic {config.statistic} correlates the metrics with a graded rating: name its "
                         "column with --rating-col")
    keys = table.slice_keys(config.slice_by)
    stats = slice_statistics(table, keys, scores, config)
    slices, auroc_rows, boots = stats.slices, stats.auroc, stats.boots
    key_arr = np.asarray(keys, dtype=object)
    with ScoreCache(config.cache_path) as cache:  # counted once for the transfer and the sensitivity sections
        counts = evidence_counts(table.evidences, cache)
    graded, graded_missing = ({}, {}) if config.statistic == "auroc" else graded_boots(
        table, keys, {n: b.scores for n, b in scores.items()}, config.statistic, n_boot=config.n_boot, seed=config.seed)
    transfer = transfer_section(
        slices, boots, list(scores), {s.slice: np.flatnonzero(key_arr == s.slice) for s in slices},
        table.labels.astype(np.int64), table.evidences, {n: b.scores for n, b in scores.items()},
        seed=config.seed, n_perm=config.n_perm, weights=table.weights, counts=counts, statistic=config.statistic,
        graded=graded, graded_missing=graded_missing)
    window = rescore_at_window(table, scorers, scores, config, log) if config.window_sensitivity else None
    sensitivity = sensitivity_section(table, keys, scores, boots, slices, transfer, config, window, counts[0],
                                      graded=graded)
    systems = system_level(table, keys, scores, auroc_rows, config, log) if table.labelled.all() else None
    correlations = correlation_section(table, keys, {n: b.scores for n, b in scores.items()}, n_boot=config.n_boot,
                                       level=config.level, seed=config.seed, n_perm=config.n_perm)
    cuts = cut_sensitivity(table, keys, {n: b.scores for n, b in scores.items()}, n_boot=config.n_boot,
                           level=config.level, seed=config.seed)
    results = AuditResults(
        run_id=new_run_id(),
        tool=tool_info(),
        config=ConfigRecord(
            scorers=list(config.scorers), slice_by=config.slice_by, n_boot=config.n_boot, statistic=config.statistic,
            seed=config.seed, ci=f"{config.level:.0%} percentile, clustered bootstrap over `group`",
            level=config.level, chance_test=CHANCE_TEST, device=config.device, n_perm=config.n_perm,
            window_sensitivity=config.window_sensitivity, scorer_options=public_options(config.scorer_options),
            batch_size=config.batch_size, engine=config.engine, cache=config.cache_path, on_error=config.on_error,
            precomputed={n: v if isinstance(v, ScoreSource) else HandedSource(name=n, source=p.source)
                         for (n, v), p in zip(config.precomputed.items(), external.values())}),
        data=table.origin,
        skipped=[s for o in table.origin for s in o.skipped],
        scorers=run_stats,
        unavailable=unavailable,
        precomputed=[p.record(table.ids) for p in external.values()],
        slices=slices,
        auroc=auroc_rows,
        paired=stats.paired,
        truncation=stats.truncation,
        failures=stats.failures,
        transfer=transfer,
        sensitivity=sensitivity,
        systems=systems,
        correlations=correlations,
        cut_sensitivity=cuts,
        elapsed_s=round(time.time() - t0, 3),
        spec=None if spec is None else dataclasses.replace(spec, data=spec.data.resolved(table.origin)),
        command=None if command is None else list(command),
    )
    return AuditResult(results=normalised(results), scores=scores, boots=boots, table=table, slice_keys=keys,
                       graded=graded)


# ---- the system level: when rows name the system that generated them -----------------------------------------

def system_level(table: PairTable, keys: list[str], scores: Mapping[str, ScoreBatch],
                 auroc_rows: Sequence[AurocRow], config: AuditConfig,
                 log: Callable[[str], None] = print) -> SystemsBlock | None:
    """The system-level section (audit.systems), or None when no row names a system; says how long it took."""
    if not table.has_systems:
        return None
    t0 = time.perf_counter()
    section = systems_section(keys, table.labels, table.groups, table.systems or [],
                              {n: b.scores for n, b in scores.items()},
                              auroc_rows, SystemSettings(n_boot=config.n_boot, seed=config.seed, level=config.level,
                                                         resample=tuple(config.system_resample)),
                              weights=table.weights)
    if section is None:
        return None
    if not config.quiet:
        log(f"system-level statistics: {time.perf_counter() - t0:.2f} s for {len(section.slices)} slice(s)")
    return section


def run_systems(spec: RunSpec, local: Local, log: Callable[[str], None] = print) -> SystemsBlock | None:
    """`attrib-audit systems DATA`: score the spec's data (through the cache), then only the per-slice AUROC (for the
    item-vs-system comparison) and the system-level section."""
    table = load_data(spec.data, log=None if local.quiet else log)
    refuse_weighted(table.weights, ", ".join(o.path for o in table.origin or []) or "the data")
    if not table.has_systems:
        raise UsageError("no row names the system that generated it: map that column with --system-col NAME")
    config = audit_config(spec, local)
    scores = score_all(table, config, log).scores
    keys = table.slice_keys(config.slice_by)
    auroc_rows = slice_statistics(table, keys, scores, config).auroc
    return system_level(table, keys, scores, auroc_rows, config, log)


def run_spec(spec: RunSpec, local: Local, log: Callable[[str], None] = print,
             command: Sequence[str] | None = None) -> AuditResult:
    """Load the spec's data and run the audit it describes on this machine's settings (`local`).

    Args:
        spec: What to run: data, scorers with options, statistics, engine.
        local: This machine's settings (caches, endpoints, model paths), never taken from a file.
        log: Where progress lines go.
        command: The command line that reruns it, recorded when given.

    Returns:
        As `run_audit`, with the spec recorded.

    Raises:
        InputError: The data cannot be read (one line naming file, row and field).
        UsageError: No requested scorer could run here.
    """
    table = load_data(spec.data, log=None if local.quiet else log)
    return run_audit(table, audit_config(spec, local), log=log, spec=spec, command=command)


# ---- window sensitivity: rescoring is pipeline work; the sensitivity section gets the scores ----------------

def _token_window(scorer: Scorer) -> int | None:
    w = getattr(scorer, "window", None)
    return int(w) if isinstance(w, (int, np.integer)) else None


def window_variants(scorers: Mapping[str, Scorer], config: AuditConfig, window: int,
                    log: Callable[[str], None] = print
                    ) -> tuple[dict[str, Scorer], list[WindowScorer], list[SkippedScorer]]:
    """Build every scorer with a token window at `window`; the others are listed with the reason."""
    built: dict[str, Scorer] = {}
    info: list[WindowScorer] = []
    skipped: list[SkippedScorer] = []
    for name, scorer in scorers.items():
        base = _token_window(scorer)
        if base is None:
            skipped.append(SkippedScorer(scorer=name, reason="no token window"))
            continue
        if base == window:
            skipped.append(SkippedScorer(scorer=name, reason=f"already runs at {window} tokens"))
            continue
        try:
            alt = get_scorer(name, **{**config.factory_options(name), "window": window})
        except (ValueError, ScorerUnavailable) as exc:
            skipped.append(SkippedScorer(scorer=name, reason=str(exc)))
            log(f"[skip] window sensitivity {name}@{window}: {exc}")
            continue
        if alt.signature == scorer.signature:
            skipped.append(SkippedScorer(scorer=name, reason="its window option changes nothing (same signature)"))
            continue
        built[name] = alt
        info.append(WindowScorer(scorer=name, window=base, window_alt=_token_window(alt), signature_alt=alt.signature))
    return built, info, skipped


def rescore_at_window(table: PairTable, scorers: Mapping[str, Scorer], scores: Mapping[str, ScoreBatch],
                      config: AuditConfig, log: Callable[[str], None] = print) -> WindowRescore:
    """Every scorer with a token window rescored at `config.window_sensitivity` tokens (through the cache)."""
    if config.window_sensitivity is None:
        raise ValueError("rescore_at_window needs config.window_sensitivity")
    window = int(config.window_sensitivity)
    built, info, skipped = window_variants(scorers, config, window, log)
    skipped += [SkippedScorer(scorer=n, reason="precomputed scores: nothing to rescore")
                for n in scores if n not in scorers]
    alt_scores: dict[str, ScoreBatch] = {}
    run_stats: list[RunStats] = []
    if built:
        opts = {n: {**config.scorer_options.get(n, {}), "window": window} for n in built}
        alt_config = dataclasses.replace(config, scorer_options={**config.scorer_options, **opts})
        alt_scores, run_stats = score_table(table, built, alt_config)
    return WindowRescore(window=window, scores=alt_scores, scorers=info, skipped=skipped, scoring=run_stats)
