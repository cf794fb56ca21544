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
from attrib_audit.audit.recommend import Recommendation, no_recommendation, on_target, recommend
from attrib_audit.audit.results import AuditResults, results_path
from attrib_audit.audit.saved import read_results
from attrib_audit.audit.transfer import build_matrix, construct_groups
from attrib_audit.data.errors import DataError
from attrib_audit.errors import UsageError
from attrib_audit.stats.bootstrap import BootstrapAUROC, bootstrap_aurocs, replay_rng


@dataclass(frozen=True, kw_only=True)
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
