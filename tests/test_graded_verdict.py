"""The one-dataset headline under a graded --statistic reads the correlation block: best correlation above 0 by its
CI, ties from the paired differences (either order), the partial statistic from the partial rows."""
from __future__ import annotations

from types import SimpleNamespace as NS

from attrib_audit.report.verdict import on_slice_graded, one_dataset, statistic_chance_warning
from results_records import ROW, results

# the verdicts read only these fields of the correlation records (audit.correlations.CorrelationSection)


def _corr(metric, statistic, grouping, est, lo, hi):
    return NS(metric=metric, statistic=statistic, grouping=grouping, estimate=est, ci_low=lo, ci_high=hi)


def _diff(a, b, statistic, grouping, d, lo, hi):
    return NS(metric_a=a, metric_b=b, statistic=statistic, grouping=grouping, difference=d, ci_low=lo, ci_high=hi)


def _block(slices):
    return NS(slices=[NS(slice=sl, correlations=c, differences=d) for sl, c, d in slices])


BLOCK = _block([("s", [
    _corr("a", "spearman", "none", 0.30, 0.20, 0.40), _corr("b", "spearman", "none", 0.28, 0.15, 0.38),
    _corr("c", "spearman", "none", 0.05, -0.05, 0.15), _corr("d", "spearman", "none", 0.10, 0.02, 0.18),
    _corr("a", "spearman", "partial", 0.01, -0.04, 0.06), _corr("b", "spearman", "partial", 0.09, 0.03, 0.15),
    _corr("a", "pearson", "none", 0.9, 0.8, 0.95)],
    [_diff("a", "b", "spearman", "none", 0.02, -0.01, 0.05),
     _diff("c", "a", "spearman", "none", -0.25, -0.35, -0.15),
     _diff("d", "a", "spearman", "none", -0.20, -0.30, -0.10),
     _diff("a", "b", "pearson", "none", 0.5, 0.4, 0.6)])])


def test_best_above_zero_with_ties_from_the_paired_differences():
    v = on_slice_graded("k", "s", BLOCK, "spearman")
    assert (v.metric, v.verdict, v.tied, v.at_chance) == ("a", "tied", ["b"], ["c"])
    assert "by Spearman ρ" in v.text and "c −0.250" not in v.text and "c +0.250 [+0.150, +0.350]" in v.text


def test_partial_statistic_and_nothing_above_zero():
    v = on_slice_graded("k", "s", BLOCK, "partial-spearman")
    assert (v.metric, v.verdict, v.at_chance) == ("b", "best", ["a"])
    none = on_slice_graded("k", "s", BLOCK, "kendall")
    assert none.metric is None and none.verdict == "undefined"


def test_one_dataset_follows_the_transfer_statistic():
    auroc = results(auroc=[{"slice": "s", "scorer": "c", "auroc": 0.9, "ci_low": 0.8, "ci_high": 0.95,
                            "p_chance": 0.001, "p_chance_holm": 0.001, "beats_chance": True, **ROW}]).auroc
    assert one_dataset("k", "s", statistic="spearman", auroc=auroc, paired=[], correlations=BLOCK).metric == "a"
    assert one_dataset("k", "s", statistic="auroc", auroc=auroc, paired=[], correlations=BLOCK).metric == "c"


def test_chance_caution_follows_the_transfer_statistic():
    block = _block([(d, [_corr("a", "spearman", "none", est, lo, hi)], [])
                    for d, est, lo, hi in (("x", 0.3, 0.2, 0.4), ("y", 0.05, -0.02, 0.12))])
    auroc = results(auroc=[{"slice": d, "scorer": "a", "auroc": 0.55, "ci_low": 0.45, "ci_high": 0.65,
                            "beats_chance": False, "p_chance": 0.3, "p_chance_holm": 0.3, **ROW}
                           for d in ("x", "y")]).auroc
    text = statistic_chance_warning("a", ["x", "y"], statistic="spearman", auroc=auroc, correlations=block)
    assert text == "a's Spearman ρ is not above 0 by its 95% CI (y: Spearman ρ 0.050 [-0.020, 0.120])"
    assert "not better than chance on any dataset" in statistic_chance_warning(
        "a", ["x", "y"], statistic="auroc", auroc=auroc, correlations=block)
