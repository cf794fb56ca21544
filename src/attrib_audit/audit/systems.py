"""The system-level section of an audit: per slice, does each metric rank the systems (generators) the way the
human labels do?

Everything statistical is `stats.systems`; this module decides what goes in: which slices (those whose rows
name two or more systems), which pass threshold each metric gets (chosen on the OTHER slices, never the slice
itself), one generator per slice derived from the seed and the slice name (so `audit --check` and
`systems --results` give the same numbers), and the item-level AUROC beside each system-level τ with a note
where the two disagree. `pick_ranker` is the one rule that names the metric to rank systems with: `select
--level system`, the terminal and the report all state it. `systems_from_results` recomputes the section from
an audit folder's saved scores, without rescoring. Nothing here prints.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from attrib_audit.audit.results import (
    AuditResults,
    AurocRow,
    ItemVsSystem,
    SystemsBlock,
    SystemsSlice,
    TransferredThreshold,
    results_path,
)
from attrib_audit.audit.saved import read_results
from attrib_audit.audit.spec import StatsSpec
from attrib_audit.errors import SpecError, UsageError, saved_layout
from attrib_audit.files.outdir import run_id_of
from attrib_audit.files.records import from_record, to_record
from attrib_audit.stats.bootstrap import slice_rng
from attrib_audit.stats.classification import best_threshold
from attrib_audit.stats.systems import (
    DEFAULT_MIN_SHARED,
    RankAgreement,
    SystemLevel,
    summarise_systems,
    system_bootstrap,
)
from attrib_audit.stats.types import Estimate

WEIGHTED = ("the sample is weighted (inclusion probabilities differ) and the system-level statistics have no weighted "
            "(Horvitz–Thompson) form: unweighted ones would describe the sample, not the pool")


def is_weighted(weights: np.ndarray | None) -> bool:
    """Whether rows weigh differently (1/π differs): equal weights give the unweighted statistics exactly."""
    return weights is not None and weights.size > 0 and bool(np.ptp(np.asarray(weights, dtype=np.float64)) > 0)


def refuse_weighted(weights: np.ndarray | None, where: str) -> None:
    """The `systems` command on a weighted sample: one line, not numbers that ignore the weights.

    Raises:
        UsageError: the rows weigh differently.
    """
    if is_weighted(weights):
        raise UsageError(f"{where}: {WEIGHTED}; rank systems on an equal-probability sample or the whole pool")


THRESHOLD_RULE = ("a metric's pass rate counts score ≥ t, with t the threshold that maximises the metric's balanced "
                  "accuracy on the pooled rows of the OTHER slices of this audit (never the slice itself); "
                  "a slice with "
                  "no other slice holding both classes gets no pass rate")
ESTIMAND = ("agreement (τ-b, pairwise accuracy, acc_eq, Pearson r) is stated as measured with these inputs: systems "
            "within each other's label noise pull it below 1 even for a perfect ranker, so each slice also gives the "
            "ceiling, what a metric ranking systems exactly by their true human pass rates would show with these "
            "labels")
PAIRWISE = ("pairwise accuracy counts the system pairs the human rates order (pairs humans tie are left out); a metric "
            "tie on such a pair counts ½")


@dataclass(frozen=True, kw_only=True)
class SystemSettings:
    """How the section resamples: recorded in it, so `systems --results` and `audit --check` rerun it alike."""

    n_boot: int
    seed: int
    level: float
    resample: tuple[str, ...] = ("inputs",)
    min_shared: int = DEFAULT_MIN_SHARED

    @classmethod
    def checked(cls, raw: Mapping[str, Any], where: str) -> "SystemSettings":
        """Settings read from a file (untrusted): checked as a run spec's statistics settings are."""
        try:
            s = StatsSpec(n_boot=raw["n_boot"], seed=raw["seed"], level=raw["level"],
                          system_resample=tuple(raw["resample"]))
        except (SpecError, TypeError) as exc:
            raise UsageError(f"{where}: the system-level settings are not valid ({exc})") from None
        m = raw.get("min_shared", DEFAULT_MIN_SHARED)
        if not isinstance(m, int) or isinstance(m, bool) or m < 1:
            raise UsageError(f"{where}: systems.min_shared must be an integer >= 1, got {m!r}")
        return cls(n_boot=s.n_boot, seed=s.seed, level=float(s.level), resample=s.system_resample, min_shared=m)


def _rng_name(sl: str) -> str:
    return f"systems:{sl}"


def transferred_thresholds(keys: np.ndarray, labels: np.ndarray, scores: Mapping[str, np.ndarray],
                           sl: str) -> dict[str, TransferredThreshold]:
    """Per metric, the balanced-accuracy threshold on the pooled finite rows of every slice but `sl`."""
    train = keys != sl
    others = sorted(set(keys[train].tolist()))
    out: dict[str, TransferredThreshold] = {}
    for name, x in scores.items():
        ok = train & np.isfinite(x)
        y = labels[ok]
        if not others:
            out[name] = TransferredThreshold(threshold=None,
                                             reason="no other slice in this audit to choose a threshold on")
        elif y.all() or not y.any():
            out[name] = TransferredThreshold(
                threshold=None, from_slices=others,
                reason="the other slices' scored rows hold one class: no threshold can be chosen")
        else:
            t, ba = best_threshold(x[ok], y)
            out[name] = TransferredThreshold(threshold=t, from_slices=others, n_train=int(ok.sum()),
                                             train_balanced_accuracy=ba)
    return out


def _defined(x: float | None) -> bool:
    """A saved statistic that has a value: None and NaN (how results.json's null reads back) have none."""
    return x is not None and math.isfinite(x)


def _side(lo: float | None, hi: float | None, null: float) -> str:
    """Where a CI sits against the null: above / holds / below; undefined without an interval."""
    if lo is None or hi is None:
        return "undefined"
    return "above" if lo > null else "below" if hi < null else "holds"


_ITEM = {"above": "separates supported from unsupported pairs (AUROC CI above 0.5)",
         "holds": "is not distinguishable from chance per pair (AUROC CI holds 0.5)",
         "below": "scores unsupported pairs higher (AUROC CI below 0.5)"}
_SYSTEM = {"above": "ranks the systems like the humans (τ-b CI above 0)",
           "holds": "ranks the systems no better than chance (τ-b CI holds 0)",
           "below": "ranks the systems against the humans (τ-b CI below 0)"}


def item_vs_system(auroc_rows: Sequence[AurocRow], agreement: Sequence[RankAgreement]) -> tuple[
        list[ItemVsSystem], list[str]]:
    """Per metric its AUROC [CI] beside its τ-b [CI] (mean score), a note where the two levels disagree, and a
    slice note when the best metric per pair is not the best for ranking systems."""
    auroc = {r.scorer: r for r in auroc_rows}
    rows: list[ItemVsSystem] = []
    notes: list[str] = []
    for a in agreement:
        if a.summary != "mean":
            continue
        m, tau = a.metric, a.tau
        r = auroc.get(m)
        est, lo, hi = (r.auroc, r.ci_low, r.ci_high) if r is not None else (None, None, None)
        item = _side(lo, hi, 0.5) if est is not None else "undefined"
        system = (_side(tau.ci_low if _defined(tau.ci_low) else None, tau.ci_high if _defined(tau.ci_high) else None,
                        0.0) if _defined(tau.estimate) else "undefined")
        agree = item == system or "undefined" in (item, system)
        rows.append(ItemVsSystem(metric=m, auroc=est, auroc_ci_low=lo, auroc_ci_high=hi, tau=tau,
                                 pairwise_accuracy=a.pairwise_accuracy, item=item, system=system, disagree=not agree,
                                 note=None if agree else f"{m} {_ITEM[item]} but {_SYSTEM[system]}"))
    by_auroc = [(x, x.auroc) for x in rows if x.auroc is not None]
    by_tau = [x for x in rows if _defined(x.tau.estimate)]
    if by_auroc and by_tau:
        best_item, best_auroc = max(by_auroc, key=lambda x: x[1])
        best_sys = max(by_tau, key=lambda x: x.tau.estimate)
        if best_item.metric != best_sys.metric:
            notes.append(f"the metric with the highest AUROC ({best_item.metric}, {best_auroc:.3f}) is not "
                         f"the one with the highest τ-b ({best_sys.metric}, {best_sys.tau.estimate:.3f}): "
                         "the best metric per pair is not the best for ranking systems here (compare the CIs)")
    return rows, notes


def slice_section(sl: str, rows: np.ndarray, n_without: int, labels: np.ndarray, groups: Sequence[str],
                  systems: Sequence[str | None], scores: Mapping[str, np.ndarray],
                  thresholds: dict[str, TransferredThreshold],
                  auroc_rows: Sequence[AurocRow], settings: SystemSettings) -> SystemsSlice:
    """The system-level statistics of one slice (`rows` are its rows that name a system)."""
    names = sorted({systems[i] for i in rows})
    if len(names) < 2:
        return SystemsSlice(slice=sl, n_rows=int(rows.size), n_without_system=int(n_without), n_systems=len(names),
                            thresholds=thresholds, status="skipped",
                            reason=f"{len(names)} system named in this slice: ranking needs two or more")
    res = system_bootstrap(labels[rows], {m: x[rows] for m, x in scores.items()}, [systems[i] for i in rows],
                           [groups[i] for i in rows],
                           thresholds={m: t.threshold for m, t in thresholds.items() if t.threshold is not None},
                           resample=settings.resample, n_boot=settings.n_boot,
                           rng=slice_rng(settings.seed, _rng_name(sl)), min_shared=settings.min_shared)
    level = summarise_systems(res, settings.level)
    side, notes = item_vs_system(auroc_rows, level.agreement)
    d = level.design
    if d.paired:
        used = (f"{d.n_used} inputs answered by every system are used and resampled jointly across systems"
                + (f"; {d.rows_dropped} rows on the other {d.n_inputs - d.n_used} inputs are left out"
                   if d.rows_dropped else ""))
    else:
        used = str(d.caveat)
    notes = [used] + ([f"{n_without} rows name no system and are left out"] if n_without else []) + notes
    lacking = {m: str(t.reason) for m, t in thresholds.items() if t.threshold is None}
    for reason in dict.fromkeys(lacking.values()):
        notes.append(f"no pass rate for {', '.join(m for m, r in lacking.items() if r == reason)}: {reason}")
    return SystemsSlice(slice=sl, n_rows=int(rows.size), n_without_system=int(n_without), n_systems=len(names),
                        thresholds=thresholds, status="ok", statistics=level, item_vs_system=side, notes=notes)


def systems_section(keys: Sequence[str], labels: np.ndarray, groups: Sequence[str], systems: Sequence[str | None],
                    scores: Mapping[str, np.ndarray], auroc_rows: Sequence[AurocRow],
                    settings: SystemSettings, weights: np.ndarray | None = None) -> SystemsBlock | None:
    """The system-level section of every slice whose rows name a system; None when no row names one. A slice whose
    rows weigh differently (`weights`, 1/π) is skipped with the reason: these statistics have no weighted form."""
    named = np.array([s is not None for s in systems], dtype=bool)
    if not named.any():
        return None
    key_arr = np.asarray(keys, dtype=object)
    y = np.asarray(labels, dtype=np.int64)
    x = {m: np.asarray(v, dtype=np.float64) for m, v in scores.items()}
    out = []
    for sl in sorted(set(key_arr[named].tolist())):
        in_slice = key_arr == sl
        rows = np.flatnonzero(in_slice & named)
        if weights is not None and is_weighted(np.asarray(weights)[rows]):
            out.append(SystemsSlice(slice=sl, n_rows=int(rows.size), n_without_system=int((in_slice & ~named).sum()),
                                    n_systems=len({systems[i] for i in rows.tolist()}), thresholds={},
                                    status="skipped", reason=WEIGHTED))
            continue
        out.append(slice_section(sl, rows, int((in_slice & ~named).sum()), y, groups, systems, x,
                                 transferred_thresholds(key_arr, y, x, sl),
                                 [r for r in auroc_rows if r.slice == sl], settings))
    return SystemsBlock(level=settings.level, n_boot=settings.n_boot, seed=settings.seed,
                        resample=list(settings.resample), min_shared=settings.min_shared, threshold_rule=THRESHOLD_RULE,
                        estimand=ESTIMAND, pairwise_accuracy=PAIRWISE, slices=out)


# ---- which metric to rank systems with -------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class RankerPick:
    """The metric to rank systems with on one slice, read from its saved system-level statistics."""

    slice: str
    metric: str | None
    verdict: str  # best-for-ranking | tied-for-ranking | only-candidate | no-recommendation
    candidates: list[str]
    tau: Estimate | None  # the pick's τ-b (mean score)
    pairwise_accuracy: Estimate | None
    tied_with: list[str]  # candidates whose paired τ difference CI with the pick holds 0
    reaches_ceiling: bool | None  # the pick's τ CI reaches the label ceiling's τ CI
    ceiling: dict[str, Estimate] | None
    n_reversals: int | None
    reversals: dict[str, int]  # per candidate: its reversals (mean score)
    caveat: str


def _difference(level: SystemLevel, a: str, b: str) -> tuple[float | None, float | None] | None:
    """The CI of τ(a) − τ(b) (mean score) from the saved paired differences, either way round (None: no bound)."""
    for d in level.differences:
        if d.summary != "mean":
            continue
        lo = d.tau.ci_low if _defined(d.tau.ci_low) else None
        hi = d.tau.ci_high if _defined(d.tau.ci_high) else None
        if (d.metric_a, d.metric_b) == (a, b):
            return lo, hi
        if (d.metric_a, d.metric_b) == (b, a):
            return (None if hi is None else -hi), (None if lo is None else -lo)
    return None


def pick_ranker(entry: SystemsSlice, metrics: Sequence[str] | None = None) -> RankerPick:
    """The candidate with the highest τ-b of its mean score against the human pass rates, the candidates its
    paired τ difference cannot separate from it, and whether it reaches what these labels can show at all.

    Args:
        entry: One slice of the system-level section (computed, or read back from results.json).
        metrics: The candidates (default: every metric of the slice).

    Returns:
        The pick, with its verdict and a caveat that says what the τ-b covers.
    """
    sl = entry.slice
    level = entry.statistics
    if entry.status != "ok" or level is None:
        return RankerPick(slice=sl, metric=None, verdict="no-recommendation", candidates=[], tau=None,
                          pairwise_accuracy=None, tied_with=[], reaches_ceiling=None, ceiling=None, n_reversals=None,
                          reversals={}, caveat=str(entry.reason))
    rows = [a for a in level.agreement if a.summary == "mean" and (metrics is None or a.metric in metrics)]
    cands = [a.metric for a in rows]
    revs = {m: sum(1 for r in level.reversals if r.metric == m and r.summary == "mean") for m in cands}
    ok = [a for a in rows if _defined(a.tau.estimate)]
    if not ok:
        return RankerPick(slice=sl, metric=None, verdict="no-recommendation", candidates=cands, tau=None,
                          pairwise_accuracy=None, tied_with=[], reaches_ceiling=None, ceiling=level.ceiling,
                          n_reversals=None, reversals=revs,
                          caveat="no candidate has a defined τ-b here (the human pass rates or the metric means tie "
                                 "for every system)")
    order = {a.metric: q for q, a in enumerate(ok)}  # a full tie goes to the candidate listed first
    best = max(ok, key=lambda a: (a.tau.estimate,
                                  a.pairwise_accuracy.estimate if _defined(a.pairwise_accuracy.estimate) else 0.0,
                                  -order[a.metric]))
    m = best.metric
    equal = [a.metric for a in ok if a.metric != m and a.tau.estimate == best.tau.estimate]
    tied = []
    for a in ok:
        ci = _difference(level, m, a.metric) if a.metric != m else None
        if ci is not None and (ci[0] is None or ci[0] <= 0):
            tied.append(a.metric)
    ceiling = level.ceiling["tau"]
    tau = best.tau
    reaches = _defined(tau.ci_high) and _defined(ceiling.ci_low) and tau.ci_high >= ceiling.ci_low
    t = f"{tau.estimate:.3f} [{tau.ci_low:.3f}, {tau.ci_high:.3f}]"
    if len(ok) == 1:
        verdict, lead = "only-candidate", f"{m} is the only candidate with a defined τ-b ({t})"
    elif tied:
        verdict = "tied-for-ranking"
        lead = (f"{m} has the highest τ-b ({t}" + (f", equal to {', '.join(equal)}'s" if equal else "")
                + f"), but the paired CI of the τ difference does not separate it from {', '.join(tied)}: any of "
                "them ranks these systems about as well (choose the cheapest)")
    else:
        verdict = "best-for-ranking"
        lead = f"{m} ranks these systems best (τ-b {t}; every paired CI of the τ difference excludes 0)"
    ceil = (f"a metric ranking by the true human rates would show τ-b {ceiling.estimate:.3f} "
            f"[{ceiling.ci_low:.3f}, {ceiling.ci_high:.3f}] with these labels, and {m}'s CI "
            + ("reaches it" if reaches else "stays below it: there is room for a better ranker"))
    n_rev = revs[m]
    rev = (f"{n_rev} system pair{'s' if n_rev != 1 else ''} where the labels significantly prefer one system and "
           f"{m} the other" if n_rev else f"no reversal (no pair where the labels and {m} significantly disagree)")
    caveat = (f"{lead}; {ceil}; {rev}. τ-b is stated as measured with these inputs; it holds for these systems "
              f"and inputs only.")
    if level.design.caveat:
        caveat += f" Caveat: {level.design.caveat}."
    return RankerPick(slice=sl, metric=m, verdict=verdict, candidates=cands, tau=tau,
                      pairwise_accuracy=best.pairwise_accuracy, tied_with=tied, reaches_ceiling=reaches,
                      ceiling=level.ceiling, n_reversals=n_rev, reversals=revs, caveat=caveat)


# ---- from an audit folder's saved scores -----------------------------------------------------------------------

def _settings(results: AuditResults, folder: Path) -> SystemSettings:
    """The settings the audit's section recorded (else its run spec's statistics), checked: the file is untrusted."""
    where = folder / "results.json"
    block = results.systems
    if block is not None:
        raw: dict[str, Any] = {"n_boot": block.n_boot, "seed": block.seed, "level": block.level,
                               "resample": block.resample, "min_shared": block.min_shared}
    else:
        stats = results.spec.stats if results.spec is not None else StatsSpec()  # none recorded: the defaults
        raw = {"n_boot": stats.n_boot, "seed": stats.seed, "level": stats.level,
               "resample": list(stats.system_resample)}
    return SystemSettings.checked(raw, str(where))


def systems_from_results(folder: str | Path, overrides: Mapping[str, Any] | None = None) -> SystemsBlock:
    """The system-level section recomputed from FOLDER's scores.parquet (no rescoring), with the settings the audit
    recorded; `overrides` (n_boot, seed, level, resample) change them. AUROCs come from its results.json."""
    import pandas as pd

    folder = Path(folder)
    results = read_results(folder, "systems --results", UsageError)
    path = results_path(folder, "systems --results").with_name("scores.parquet")
    if not path.is_file():
        raise UsageError(f"{path} not found; run `attrib-audit audit ... --out {folder}` first")
    recorded, run_id = results.run_id, run_id_of(path)
    if recorded and run_id != recorded:
        raise UsageError(f"{path} is from run {run_id or '(none recorded)'}, results.json from run {recorded}: "
                         "rerun the audit into this folder")
    settings = _settings(results, folder)
    if overrides:
        settings = SystemSettings.checked({**to_record(settings),
                                           **{k: v for k, v in overrides.items() if v is not None}},
                                          "systems")
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable scores file ({' '.join(str(exc).split())[:200]})") from None
    names, auroc = results.scorer_names, results.auroc
    missing = [c for c in ("slice", "label", "group", *names) if c not in frame.columns]
    if missing:
        raise UsageError(f"{path} lacks the column(s) {', '.join(missing)} that results.json names")
    if "system" not in frame.columns or frame["system"].isna().all():
        raise UsageError(f"{path}: no row names a system, so there is nothing to rank; map the generator with "
                         "--system-col COLUMN and audit again")
    refuse_weighted(frame["weight"].to_numpy(np.float64) if "weight" in frame.columns else None, str(path))
    systems = [None if v is None or v != v else str(v) for v in frame["system"].tolist()]
    block = systems_section(frame["slice"].astype(str).tolist(), frame["label"].to_numpy(np.int64),
                            frame["group"].astype(str).tolist(), systems,
                            {n: frame[n].to_numpy(np.float64) for n in names}, auroc, settings)
    assert block is not None  # some row names a system
    return block


def rankers_from_results(folder: str | Path, metrics: Sequence[str] | None = None) -> list[RankerPick]:
    """`select --level system`: per slice of an audit's saved system-level section, the metric to rank systems with."""
    folder = Path(folder)
    results = read_results(folder, "select", UsageError)
    where = folder / "results.json"
    if results.systems is None:
        raise UsageError(f"{where} has no system-level section: no row of its data names a system (map the "
                         "generator with --system-col COLUMN and audit again)")
    slices = results.systems.slices
    known = sorted({a.metric for e in slices if e.status == "ok" and e.statistics is not None
                    for a in e.statistics.agreement})
    unknown = sorted(set(metrics or []) - set(known))
    if unknown:
        raise UsageError(f"scorer(s) {', '.join(unknown)} not in this audit's system-level section "
                         f"({', '.join(known)})")
    with saved_layout(where, "select --level system"):  # a ceiling without its τ-b (the dict is untrusted)
        return [pick_ranker(e, metrics) for e in slices]


def saved_systems(block: Any, where: str | Path) -> SystemsBlock:
    """results.json's system-level section as its records, every value checked against them: a value of the wrong
    type is one line naming the file and key (``results.json: key 'systems.slices[0].design': expected an object,
    got null``)."""
    return from_record(SystemsBlock, block, where=str(where), key="systems", error=UsageError)
