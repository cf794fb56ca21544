import numpy as np

from attrib_audit.audit.select import recommend
from attrib_audit.stats.transfer import AurocMatrix


def mat(point, noise=0.01, b=300):
    rng = np.random.default_rng(0)
    point = np.asarray(point, dtype=float)
    m, d = point.shape
    reps = point[:, :, None] + rng.normal(0, noise, (1, d, b)) + rng.normal(0, noise / 4, (m, d, b))
    return AurocMatrix(tuple("abc")[:m], tuple("WXYZ")[:d], point, reps)


def test_a_metric_best_everywhere_transfers():
    r = recommend("attribution", mat([[0.9, 0.85, 0.8], [0.7, 0.6, 0.65], [0.6, 0.6, 0.6]]))
    assert r.metric == "a" and r.verdict == "transfers" and r.selector_regret == 0.0 and r.folds_agreeing == 3


def test_a_crossover_does_not_transfer_and_says_so():
    r = recommend("attribution", mat([[0.9, 0.55, 0.9], [0.55, 0.9, 0.6], [0.6, 0.6, 0.6]]))
    assert r.metric == "a" and r.verdict == "does-not-transfer"
    assert r.portable_metrics == [] and "No audited metric is portable" in r.caveat
    assert r.selector_regret > 0.1 and "label a sample of the new dataset" in r.caveat


def test_two_datasets_are_flagged():
    r = recommend("c", mat([[0.9, 0.8], [0.7, 0.6]]))
    assert "Only two datasets" in r.caveat
