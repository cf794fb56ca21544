"""Which metric to use on a new dataset to use on a new dataset of a construct, and how far to trust it.

The recommendation is the metric with the lowest mean regret over the audited datasets.
How much that choice can be trusted on an unseen dataset is measured by the
leave-one-dataset-out selector (the same rule, learned without the held-out dataset), so
the caveat quotes that out-of-sample regret, not the optimistic in-sample one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

import numpy as np

from attrib_audit.audit.config import DEFAULT_EPS, STATISTIC_LABELS
from attrib_audit.audit.correlations import StatisticBoot, statistic_boot
from attrib_audit.audit.results import AuditResults, read_results, results_path
from attrib_audit.audit.transfer import LEVEL, RowsUsed, build_matrix, construct_groups
from attrib_audit.data.errors import DataError
from attrib_audit.errors import UsageError
from attrib_audit.stats.bootstrap import BootstrapAUROC, bootstrap_aurocs, percentile_ci, replay_rng
from attrib_audit.stats.chance import CHANCE_TEST, chance_pvalues, holm
from attrib_audit.stats.transfer import AurocMatrix, best_per_dataset, lodo_regret, portability


@dataclass(frozen=True)
class Recommendation:
    construct: str
    datasets: list[str]
    candidates: list[str]
    metric: str | None
    # transfers | near-best-unproven | does-not-transfer | best-on-target | tied-on-target | no-better-than-chance
    # | no-recommendation
    verdict: str
    in_sample_regret: float | None
    in_sample_regret_ci: tuple[float, float] | None
    worst_regret: float | None
    worst_dataset: str | None
    held_out_regret: float | None  # leave-one-dataset-out: the honest estimate for a new dataset
    held_out_regret_ci: tuple[float, float] | None
    folds_agreeing: int | None
    portable_metrics: list[str]
    caveat: str
    # per dataset: rows used, rows each candidate's failures removed
    rows: dict[str, RowsUsed] = field(default_factory=dict)
    statistic: str = "auroc"  # what the candidates were compared by (the audit's --statistic)
    # per candidate and dataset: one-sided p of AUROC > 0.5 (Holm-adjusted over the datasets), beats chance or not
    chance: dict[str, dict[str, dict]] = field(default_factory=dict)
    chance_test: str = CHANCE_TEST



def chance_table(mat: AurocMatrix, level: float = LEVEL, null: float = 0.5) -> dict[str, dict[str, dict]]:
    """Per metric and dataset of `mat`: the one-sided chance p-value, Holm-adjusted over the datasets, and the flag.

    Args:
        mat: point AUROCs and replicates (metrics × datasets).
        level: the CI level; the test runs at α = (1 − level) / 2.
        null: no skill: 0.5 for AUROC, 0 for a correlation.

    Returns:
        {metric: {dataset: {"p": raw, "p_holm": adjusted, "beats_chance": bool}}}.
    """
    out: dict[str, dict[str, dict]] = {}
    for i, m in enumerate(mat.metrics):
        raw = chance_pvalues(mat.point[i], mat.replicates[i], null)
        adj = holm(raw)
        out[m] = {d: {"p": float(raw[k]), "p_holm": float(adj[k]), "beats_chance": bool(adj[k] < (1 - level) / 2)}
                  for k, d in enumerate(mat.datasets)}
    return out


def recommend(construct: str, mat: AurocMatrix, eps: float = DEFAULT_EPS, rows: dict[str, RowsUsed] | None = None,
              unit: str = "AUROC") -> Recommendation:
    """Pick the lowest-regret metric and phrase the caveat its leave-one-dataset-out regret implies."""
    d = len(mat.datasets)
    lodo = lodo_regret(mat, LEVEL)
    port = {p.metric: p for p in portability(mat, LEVEL)}
    m = lodo.lowest_regret_metric
    fixed = next(f for f in lodo.fixed if f.metric == m)
    sel = lodo.selector
    agree = sum(p == m for p in sel.picks.values())
    portable = [p.metric for p in port.values() if p.portable]
    worst_sel = max(sel.per_dataset, key=lambda d: sel.per_dataset[d])
    width = float(np.mean([b.ci_high - b.ci_low for b in best_per_dataset(mat, LEVEL)]))
    held_out = (f"choosing the best-on-average metric from the other datasets cost {sel.mean:.3f} {unit} "
                "on the held-out "
                f"dataset on average (95% CI [{sel.ci_low:.3f}, {sel.ci_high:.3f}]; "
                f"worst {sel.per_dataset[worst_sel]:.3f} "
                f"on {worst_sel}); the rule picked {m} in {agree} of {d} folds")
    committed = (f"always using {m} cost {fixed.mean:.3f} [{fixed.ci_low:.3f}, {fixed.ci_high:.3f}] "
                 "against the per-dataset "
                 f"best, up to {fixed.max:.3f} on {fixed.worst_dataset}")
    few = " Only two datasets: each fold learns from a single dataset." if d == 2 else ""
    if port[m].portable and port[m].paired_portable and sel.ci_high <= eps:
        verdict = "transfers"
        caveat = (f"{m} stayed within the best metric's 95% CI on all {d} datasets of '{construct}', and {held_out}, "
                  f"within ε = {eps:g}. Confirm on a labelled sample of the new dataset if you can.")
    elif port[m].portable:
        verdict = "near-best-unproven"
        caveat = (f"{m} is within the best metric's 95% CI on every audited dataset of '{construct}' (those CIs are "
                  f"{width:.2f} {unit} wide on average, so this screen is only as sharp as they are), but {held_out}. "
                  f"That CI does not rule out a regret above ε = {eps:g}; {committed}. "
                  f"Use {m} as a provisional default "
                  "and validate it on labelled pairs of the new dataset.")
    else:
        verdict = "does-not-transfer"
        lead = (f"No audited metric is portable across the {d} datasets of '{construct}'" if not portable else
                f"{m} has the lowest mean regret but is not portable (breaks on {', '.join(port[m].breaks_on)}); "
                f"portable: {', '.join(portable)}")
        caveat = (f"{lead}. {held_out[0].upper() + held_out[1:]}; {committed}. "
                  f"{m} is only a provisional default: label a "
                  "sample of the new dataset and audit it before trusting any metric.")
    chance = chance_table(mat, null=0.5 if unit == "AUROC" else 0.0)
    weak = [d for d, c in chance[m].items() if not c["beats_chance"]]
    if len(weak) == d and not any(c["beats_chance"] for per in chance.values() for c in per.values()):
        return no_recommendation(construct, list(mat.datasets), "no candidate is better than chance on any dataset "
                                 f"of '{construct}' ({CHANCE_TEST}): none is recommended", chance)
    if weak:
        caveat = (f"{m} is not better than chance on {', '.join(weak)} (Holm-adjusted one-sided p "
                  + ", ".join(f"{chance[m][x]['p_holm']:.3g}" for x in weak) + "). " + caveat)
    return Recommendation(construct=construct, datasets=list(mat.datasets), candidates=list(mat.metrics), metric=m,
                          verdict=verdict, in_sample_regret=fixed.mean,
                          in_sample_regret_ci=(fixed.ci_low, fixed.ci_high), worst_regret=fixed.max,
                          worst_dataset=fixed.worst_dataset, held_out_regret=sel.mean,
                          held_out_regret_ci=(sel.ci_low, sel.ci_high), folds_agreeing=agree, portable_metrics=portable,
                          caveat=caveat + few, rows=rows or {}, chance=chance)


def no_recommendation(construct: str, datasets: list[str], reason: str,
                      chance: dict[str, dict[str, dict]] | None = None) -> Recommendation:
    """A construct with no recommended metric, and why (no candidate better than chance when `chance` is given)."""
    verdict = "no-better-than-chance" if chance else "no-recommendation"
    return Recommendation(construct=construct, datasets=datasets, candidates=list(chance or []), metric=None,
                          verdict=verdict, in_sample_regret=None, in_sample_regret_ci=None,
                          worst_regret=None, worst_dataset=None, held_out_regret=None, held_out_regret_ci=None,
                          folds_agreeing=None, portable_metrics=[], caveat=reason, chance=chance or {})


def on_target(construct: str, dataset: str, names: list[str], boot: BootstrapAUROC | StatisticBoot,
              unit: str = "AUROC") -> Recommendation:
    """One audited dataset: if it is the target (e.g. a labelled sample of it), the metric to use is its best one;
    the paired bootstrap says which others it cannot be told apart from. Nothing here speaks for other datasets.

    Candidates are compared on the rows every one of them scored (`boot.aligned`)."""
    ok = [j for j in range(len(names)) if np.isfinite(boot.point[j])]
    if len(ok) < 2:
        return no_recommendation(construct, [dataset], f"fewer than two candidate metrics have a {unit} on {dataset}: "
                                                       "nothing to choose between")
    al = boot.aligned(ok)
    rows = {dataset: RowsUsed(n=boot.n_rows, n_used=al.n,
                              dropped_by={names[j]: int(k) for j, k in zip(ok, al.dropped)})}
    if not np.isfinite(al.point).all():
        return no_recommendation(construct, [dataset],
                                 f"the rows every candidate scored on {dataset} leave {unit} undefined: "
                                 "compare fewer candidates (--scorers)")
    p = chance_pvalues(al.point, al.replicates, 0.5 if unit == "AUROC" else 0.0)
    alpha = (1 - LEVEL) / 2
    chance = {names[j]: {dataset: {"p": float(p[i]), "p_holm": float(p[i]), "beats_chance": bool(p[i] < alpha)}}
              for i, j in enumerate(ok)}
    good = [i for i in range(len(ok)) if chance[names[ok[i]]][dataset]["beats_chance"]]
    if not good:
        t = int(al.point.argmax())
        lo, hi, _ = percentile_ci(al.replicates[t], LEVEL)
        rec = no_recommendation(construct, [dataset], (
            f"no candidate is better than chance on {dataset} (best: {names[ok[t]]}, AUROC {al.point[t]:.3f} "
            f"[{lo:.3f}, {hi:.3f}], one-sided p = {p[t]:.3g} in a Wald z test of AUROC > 0.5 with the "
            f"clustered-bootstrap standard error, at α = {alpha:g}). None is recommended: a better metric, "
            "or more labels (`attrib-audit plan`), is needed before any of them can be trusted here."), chance)
        return replace(rec, rows=rows)
    b = max(good, key=lambda i: al.point[i])
    best, point = ok[b], al.point[b]
    tied = [names[ok[i]] for i in good if i != b and percentile_ci(al.replicates[b] - al.replicates[i], LEVEL)[0] <= 0]
    weak = [names[j] for i, j in enumerate(ok) if i not in good]
    also = f" Not better than chance (never a choice): {', '.join(weak)}." if weak else ""
    if tied:
        verdict = "tied-on-target"
        caveat = (f"{names[best]} has the highest {unit} on {dataset} ({point:.3f}) among the candidates better than "
                  f"chance, but the paired 95% CI does not separate it from {', '.join(tied)}: any of these will do "
                  "here (choose the cheapest), or label more pairs (`attrib-audit plan --detect`). This holds for this "
                  "dataset only.")
    else:
        verdict = "best-on-target"
        rivals = "every other candidate" if len(ok) == len(good) else "every other candidate better than chance"
        caveat = (f"{names[best]} beats {rivals} on {dataset} ({unit} {point:.3f}, better than chance: one-sided p = "
                  f"{p[b]:.3g}; each paired 95% CI excludes zero). This holds for this dataset only; a dataset that "
                  "was not audited needs its own labels.")
    return Recommendation(construct=construct, datasets=[dataset], candidates=[names[j] for j in ok],
                          metric=names[best], verdict=verdict, in_sample_regret=None, in_sample_regret_ci=None,
                          worst_regret=None, worst_dataset=None, held_out_regret=None, held_out_regret_ci=None,
                          folds_agreeing=None, portable_metrics=[], caveat=caveat + also, rows=rows, chance=chance)


@dataclass(frozen=True)
class AuditInputs:
    """What an audit folder holds for `select`: results.json and each slice's bootstrap inputs (bootstrap.npz)."""

    results: AuditResults
    scorers: list[str]
    slices: list[str]
    n_boot: int
    rng_states: list[dict]
    row_slice: np.ndarray
    labels: np.ndarray
    groups: np.ndarray
    scores: np.ndarray  # (scorers, rows)
    weights: np.ndarray  # (rows,) Horvitz–Thompson row weights (ones where a slice is unweighted)
    weighted: np.ndarray  # (slices,) whether the slice was weighted
    graded: Mapping[str, np.ndarray] = field(default_factory=dict)  # results.graded_arrays, when `--statistic` was one

    def graded_boots(self, datasets: list[str], idx: list[int]) -> dict[str, StatisticBoot]:
        """Each dataset's correlation bootstrap of scorers `idx` (the audit's draws: seeded by slice name)."""
        g = self.graded
        names = g["graded_slices"].tolist()
        out = {}
        for d in datasets:
            i = names.index(d)
            r = g["graded_row_slice"] == i
            out[d] = statistic_boot(str(g["graded_statistic"]), d, rating=g["graded_rating"][r],
                                    scores=g["graded_scores"][np.ix_(np.asarray(idx), np.flatnonzero(r))],
                                    items=g["graded_items"][r].tolist(),
                                    systems=g["graded_systems"][r].tolist() if g["graded_named"][i] else None,
                                    n_boot=int(g["graded_n_boot"]), seed=int(g["graded_seed"]))
        return out

    def boots(self, datasets: list[str], idx: list[int]) -> dict[str, BootstrapAUROC]:
        """The audit's bootstrap of scorers `idx` on each dataset, replaying its recorded draws."""
        out = {}
        for d in datasets:
            i = self.slices.index(d)
            r = self.row_slice == i
            out[d] = bootstrap_aurocs(self.scores[np.ix_(np.asarray(idx), np.flatnonzero(r))],
                                      self.labels[r], self.groups[r],
                                      n_boot=self.n_boot, rng=replay_rng(self.rng_states[i]),
                                      weights=self.weights[r] if self.weighted[i] else None)
        return out


def load_audit(folder: Path) -> AuditInputs:
    """An audit folder's results.json and bootstrap.npz, checked to be one run's pair in the layout audit writes."""
    npz_path = results_path(folder, "select").with_name("bootstrap.npz")
    if not npz_path.exists():
        raise UsageError(f"{npz_path} not found; run `attrib-audit audit --out {folder}` first")
    results = read_results(folder, "select", DataError)
    try:
        with np.load(npz_path, allow_pickle=False) as z:
            if "rng_states" not in z:
                raise UsageError(f"{npz_path} predates row-aligned comparisons (no bootstrap inputs); rerun the audit")
            audit = AuditInputs(results=results, scorers=z["scorers"].tolist(), slices=z["slices"].tolist(),
                                n_boot=int(z["n_boot"]), rng_states=[json.loads(x) for x in z["rng_states"].tolist()],
                                row_slice=z["row_slice"], labels=z["labels"], groups=z["groups"], scores=z["scores"],
                                weights=z["weights"], weighted=z["weighted"],
                                graded={k: z[k] for k in z.files if k.startswith("graded_")})
            run_id = str(z["run_id"]) if "run_id" in z.files else None
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - zip, pickle, key and shape errors all mean: not our bootstrap.npz
        raise UsageError(f"{npz_path} is not a bootstrap.npz written by `attrib-audit audit` "
                         f"({type(exc).__name__}: {' '.join(str(exc).split())[:160]})") from None
    recorded = results.run_id
    if recorded and run_id != recorded:
        raise UsageError(f"{npz_path} is from run {run_id or '(none recorded)'}, results.json from run {recorded}: "
                         "rerun the audit into this folder")
    return audit


def select_from_results(folder: str | Path, *, construct: str | None = None, scorers: list[str] | None = None,
                        eps: float = DEFAULT_EPS) -> list[Recommendation]:
    """One recommendation per construct of an audit folder (or the named one), among `scorers` if given.

    Each construct's statistics use, per dataset, the rows every candidate scored (the audit's draws
    replayed on them), so a candidate's failures cannot flatter it.

    Args:
        folder: An `attrib-audit audit --out` folder (results.json and bootstrap.npz of one run).
        construct: Only this construct (None: every one).
        scorers: The candidates (None: every audited scorer).
        eps: AUROC within which a metric counts as tied with the best.

    Returns:
        One recommendation per construct: the metric, its verdict (transfers, near-best-unproven,
        does-not-transfer, best-on-target, tied-on-target or no-recommendation), the regrets with CIs
        and the caveat in words.

    Raises:
        UsageError: An unknown construct or scorer, or results.json and bootstrap.npz from different runs.
        InputError: The folder's files are missing or unreadable.

    Examples:
        >>> import tempfile
        >>> from attrib_audit.audit import AuditConfig, run_audit
        >>> from attrib_audit.data import demo_paths, load_pairs
        >>> table = load_pairs([demo_paths()[0]], construct="attribution")
        >>> length = np.array([len(e) for e in table.evidences], dtype=float)  # a second metric, computed elsewhere
        >>> config = AuditConfig(scorers=("lexical",), slice_by="source", n_boot=100, n_perm=100, cache_path=":memory:",
        ...                      quiet=True, precomputed={"length": length})
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     _ = run_audit(table, config, log=lambda _line: None).save(folder)
        ...     rec = select_from_results(folder)[0]
        >>> rec.construct, rec.metric, rec.verdict, len(rec.datasets)
        ('attribution', 'lexical', 'near-best-unproven', 4)
    """
    audit = load_audit(Path(folder))
    statistic = audit.results.config.statistic
    unit = STATISTIC_LABELS.get(statistic, statistic)
    graded = statistic != "auroc"
    names = audit.graded["graded_scorers"].tolist() if graded and audit.graded else audit.scorers
    held = audit.graded["graded_slices"].tolist() if graded and audit.graded else audit.slices
    slices = audit.results.slices
    usable = {s.slice: "" if s.slice in held else "no graded rating in slice" for s in slices} if graded else None
    groups, _ = construct_groups(slices, usable)
    declared = sorted({s.construct for s in slices})
    missing = sorted(map(str, {d for ds in groups.values() for d in ds} - set(held)))
    if missing:
        raise UsageError(f"{Path(folder) / 'results.json'} names slices that bootstrap.npz does not hold "
                         f"({', '.join(missing[:3])}): the two files do not belong together")
    if construct is not None and construct not in groups:
        raise UsageError(f"construct {construct!r} has no usable slice in {folder} (constructs there: "
                         f"{', '.join(declared)})")
    unknown = sorted(set(scorers or []) - set(names))
    if unknown:
        raise UsageError(f"scorer(s) {', '.join(unknown)} not in this audit ({', '.join(names)})")
    pick = [n for n in names if not scorers or n in scorers]
    out = []
    for c, datasets in sorted(groups.items()):
        if construct is not None and c != construct:
            continue
        idx = [names.index(n) for n in pick]
        boots: Mapping[str, BootstrapAUROC | StatisticBoot] = (audit.graded_boots(datasets, idx) if graded
                                                                else audit.boots(datasets, idx))
        if len(datasets) < 2:
            out.append(on_target(c, datasets[0], pick, boots[datasets[0]], unit))
            continue
        mat, dropped, rows = build_matrix(datasets, pick, boots, unit=unit)
        if mat is None or len(mat.metrics) < 2:
            why = "; ".join(f"{x.scorer}: {x.reason}" for x in dropped)
            out.append(no_recommendation(c, datasets,
                                         "fewer than two candidate metrics are defined on every dataset (regret is "
                                         "measured against the best candidate, so one alone says nothing)"
                                         + (f" ({why})" if why else "")))
            continue
        out.append(recommend(c, mat, eps, rows, unit))
    if graded:
        out = [replace(r, statistic=statistic) for r in out]
    return out
