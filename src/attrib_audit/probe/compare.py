"""Compare two systems' answers on the same ASQA-style examples: metric deltas beside rewrite statistics.

The question this answers: did the text change while the answer-level metrics did not move?
Means and the paired differences come from one clustered bootstrap over examples (shared draws),
and rewrite detection says how much of the text was altered.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.origin import FileRef
from attrib_audit.files.jsonfile import sealed_json
from attrib_audit.files.outdir import check_out_dir, new_run_id, output_file, write_text_atomic
from attrib_audit.files.records import to_record
from attrib_audit.probe.metrics import answer_metrics
from attrib_audit.probe.records import AsqaExample
from attrib_audit.probe.reward import TERMS, RewardConfig, SupportFn, grounding_rewards
from attrib_audit.probe.train import prompt_rows
from attrib_audit.stats.bootstrap import DEFAULT_B, slice_rng
from attrib_audit.stats.means import bootstrap_means, mean_estimate
from attrib_audit.stats.types import Estimate
from attrib_audit.text.tokenize import jaccard

REWRITE_JACCARD = 0.9  # below this token Jaccard a paired answer counts as heavily rewritten


@dataclass(kw_only=True)
class CompareConfig:
    n_boot: int = DEFAULT_B
    seed: int = 0
    level: float = 0.95
    reward: RewardConfig | None = None  # None: no grounding-reward terms
    reward_scorer: str | None = None


@dataclass(frozen=True)
class MeanCI:
    """A mean over the compared examples with its clustered-bootstrap CI."""

    mean: float
    ci_low: float
    ci_high: float
    n: int


@dataclass(frozen=True)
class DiffCI(MeanCI):
    """tuned − base with its paired CI, and whether that CI excludes 0."""

    excludes_zero: bool = False


@dataclass(frozen=True)
class MetricRow:
    """One answer-level metric: both systems' means and their paired difference."""

    metric: str
    base: MeanCI
    tuned: MeanCI
    diff: DiffCI


@dataclass(frozen=True, kw_only=True)
class Coverage:
    """Which examples were compared; the first few ids of each left-out kind (only kinds that occur)."""

    n_compared: int
    n_only_base: int
    n_only_tuned: int
    n_unanswered: int
    examples: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class RewardSettings:
    """The grounding-reward settings the reward terms were computed with."""

    support_threshold: float
    counterfactual: str
    weights: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class CompareSettings:
    """What the comparison was run with, as saved in probe.json."""

    n_boot: int
    seed: int
    level: float
    ci: str
    rewrite_jaccard_threshold: float
    reward_scorer: str | None = None
    reward: RewardSettings | None = None


@dataclass(frozen=True, kw_only=True)
class ProbeComparison:
    """probe.json: the per-metric table, the rewrite statistics and the one-line verdict."""

    config: CompareSettings
    data: dict[str, FileRef]
    coverage: Coverage
    metrics: tuple[MetricRow, ...]
    rewrite: dict[str, MeanCI]
    verdict: str
    run_id: str = field(default="", metadata={"skip_default": True})


@dataclass(frozen=True)
class ProbeResult:
    """A comparison and its per-example metrics; the comparison gets its run id when the result is built."""

    results: ProbeComparison
    per_example: dict[str, np.ndarray] = field(default_factory=dict)  # a column per metric (and `ids`)

    def __post_init__(self) -> None:
        if not self.results.run_id:
            object.__setattr__(self, "results", replace(self.results, run_id=new_run_id()))

    def save(self, out: str | Path) -> Path:
        """probe.json (the comparison) and per_example.csv (every example's metrics, to see which moved)."""
        out = check_out_dir(out, names=("probe.json", "per_example.csv"))
        path = out / "probe.json"
        if self.per_example:
            import pandas as pd

            with output_file(out / "per_example.csv") as tmp:
                pd.DataFrame(self.per_example).to_csv(tmp, index=False)
        write_text_atomic(path, sealed_json(to_record(self.results)))
        return path


def align(base: Mapping[str, str], tuned: Mapping[str, str], examples: Mapping[str, AsqaExample],
          base_path: str = "base", tuned_path: str = "tuned") -> tuple[list[str], Coverage]:
    """Ids both systems answered, in data order; unknown ids are an error, one-sided ids are counted."""
    for path, outs in ((base_path, base), (tuned_path, tuned)):
        unknown = [i for i in outs if i not in examples]
        if unknown:
            raise DataError(f"{len(unknown)} output ids are not in the data (first: {unknown[0]!r})", path=path,
                            field="id")
    ids = [i for i in examples if i in base and i in tuned]
    if not ids:
        raise DataError("the two systems share no example id", path=f"{base_path}, {tuned_path}", field="id")
    skipped = {"only_base": sorted(set(base) - set(tuned)), "only_tuned": sorted(set(tuned) - set(base)),
               "unanswered": sorted(set(examples) - set(base) - set(tuned))}
    return ids, Coverage(n_compared=len(ids), n_only_base=len(skipped["only_base"]),
                         n_only_tuned=len(skipped["only_tuned"]), n_unanswered=len(skipped["unanswered"]),
                         examples={k: v[:5] for k, v in skipped.items() if v})


def rewrite_values(base: list[str], tuned: list[str]) -> dict[str, np.ndarray]:
    """Per pair: altered (text differs after whitespace normalisation), token Jaccard, Jaccard < 0.9."""
    same = np.array([" ".join(a.split()) == " ".join(b.split()) for a, b in zip(base, tuned)])
    jac = np.array([1.0 if s else jaccard(a, b) for s, a, b in zip(same, base, tuned)], dtype=np.float64)
    return {"altered": (~same).astype(np.float64), "token_jaccard": jac,
            "heavy_rewrite": (jac < REWRITE_JACCARD).astype(np.float64)}


def reward_values(outputs: Mapping[str, str], examples: Mapping[str, AsqaExample], ids: list[str],
                  support: SupportFn, config: RewardConfig) -> dict[str, np.ndarray]:
    """Per-example grounding-reward terms (and total) of one system's answers."""
    rows = prompt_rows([examples[i] for i in ids], max_docs=None)
    terms = grounding_rewards([outputs[i] for i in ids], [r["passages"] for r in rows], support, config,
                              answerable=[r["answerable"] for r in rows], unrelated=[r["unrelated"] for r in rows])
    return {f"reward_{k}": np.array([getattr(t, k) for t in terms]) for k in (*TERMS, "total")}


def _est(e: Estimate) -> MeanCI:
    return MeanCI(mean=float(e.estimate), ci_low=float(e.ci_low), ci_high=float(e.ci_high), n=int(e.n))


def compare_systems(base: Mapping[str, str], tuned: Mapping[str, str], examples: Mapping[str, AsqaExample],
                    config: CompareConfig | None = None, *, support: SupportFn | None = None,
                    origin: Mapping[str, FileRef] | None = None) -> ProbeResult:
    """Means of each metric for both systems, the paired bootstrap CI of tuned − base, and rewrite stats."""
    config = config or CompareConfig()
    names = (origin["base"].path, origin["tuned"].path) if origin else ("base", "tuned")
    ids, coverage = align(base, tuned, examples, *names)
    per = {"base": answer_metrics(base, examples, ids), "tuned": answer_metrics(tuned, examples, ids)}
    if config.reward is not None:
        if support is None:
            raise ValueError("a reward config needs a support function")
        for name, outs in (("base", base), ("tuned", tuned)):
            per[name].update(reward_values(outs, examples, ids, support, config.reward))
    metrics = list(per["base"])
    rewrite = rewrite_values([base[i] for i in ids], [tuned[i] for i in ids])
    rows = [per["base"][m] for m in metrics] + [per["tuned"][m] for m in metrics] \
        + [per["tuned"][m] - per["base"][m] for m in metrics] + list(rewrite.values())
    boot = bootstrap_means(np.vstack(rows), ids, n_boot=config.n_boot, rng=slice_rng(config.seed, "probe-compare"))
    k = len(metrics)
    table: list[MetricRow] = []
    for j, m in enumerate(metrics):
        d = mean_estimate(boot, 2 * k + j, config.level, "paired-clustered-bootstrap-percentile")
        diff = _est(d)
        table.append(MetricRow(metric=m, base=_est(mean_estimate(boot, j, config.level)),
                               tuned=_est(mean_estimate(boot, k + j, config.level)),
                               diff=DiffCI(mean=diff.mean, ci_low=diff.ci_low, ci_high=diff.ci_high, n=diff.n,
                                           excludes_zero=bool(d.ci_low > 0 or d.ci_high < 0))))
    rw = {name: _est(mean_estimate(boot, 3 * k + j, config.level)) for j, name in enumerate(rewrite)}
    moved = [r.metric for r in table if r.diff.excludes_zero]
    reward = None if config.reward is None else RewardSettings(
        support_threshold=config.reward.support_threshold, counterfactual=config.reward.counterfactual,
        weights=dict(vars(config.reward.weights)))
    results = ProbeComparison(
        config=CompareSettings(n_boot=config.n_boot, seed=config.seed, level=config.level,
                               ci="percentile, clustered bootstrap over examples; differences paired (tuned − base)",
                               rewrite_jaccard_threshold=REWRITE_JACCARD, reward_scorer=config.reward_scorer,
                               reward=reward),
        data=dict(origin or {}),
        coverage=coverage,
        metrics=tuple(table),
        rewrite=rw,
        verdict=verdict(rw, moved, [r.metric for r in table]),
    )
    per_example = {"ids": np.asarray(ids, dtype=object), **{f"{s}:{m}": per[s][m] for s in per for m in metrics},
                   **{f"rewrite:{m}": v for m, v in rewrite.items()}}
    return ProbeResult(results, per_example)


def verdict(rewrite: Mapping[str, MeanCI], moved: list[str], metrics: list[str]) -> str:
    """One line a reader can act on: large rewrite with flat metrics is the case the probe exists for."""
    heavy, jac = rewrite["heavy_rewrite"].mean, rewrite["token_jaccard"].mean
    text = f"{heavy:.0%} of answers heavily rewritten (token Jaccard < {REWRITE_JACCARD}), mean Jaccard {jac:.2f}; "
    if not moved:
        return text + "no metric's difference CI excludes 0: the metrics did not notice the change."
    flat = [m for m in metrics if m not in moved]
    return text + f"CI excludes 0 for {', '.join(moved)}" + (f"; flat: {', '.join(flat)}." if flat else ".")
