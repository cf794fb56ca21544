import numpy as np
import pytest
from sklearn.metrics import average_precision_score, balanced_accuracy_score

from attrib_audit.stats.classification import (
    average_precision,
    balanced_accuracy,
    best_threshold,
    transferred_balanced_accuracy,
)


def test_average_precision_matches_sklearn_with_and_without_ties_and_weights():
    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(2, 80))
        y = rng.integers(0, 2, n)
        y[0] = 1
        s = rng.random(n)
        if trial % 2:
            s = np.round(s * 4)
        assert average_precision(s, y) == pytest.approx(average_precision_score(y, s))
        w = rng.uniform(0.2, 5.0, n)
        assert average_precision(s, y, w) == pytest.approx(average_precision_score(y, s, sample_weight=w))
        k = rng.integers(1, 4, n)  # integer weights: the same as repeating each row k times
        assert average_precision(s, y, k) == pytest.approx(average_precision(np.repeat(s, k), np.repeat(y, k)))


def test_average_precision_known_answers():
    assert average_precision([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert average_precision([0.5, 0.5, 0.5, 0.5], [1, 0, 1, 0]) == 0.5  # all tied: AP = prevalence
    assert np.isnan(average_precision([0.1, 0.2], [0, 0]))


def test_best_threshold_is_the_brute_force_maximum():
    rng = np.random.default_rng(1)
    for trial in range(100):
        n = int(rng.integers(4, 50))
        y = rng.integers(0, 2, n)
        y[:2] = (0, 1)
        s = np.round(rng.random(n) * 5) if trial % 2 else rng.random(n)
        t, ba = best_threshold(s, y)
        brute = max(balanced_accuracy_score(y, (s >= v).astype(int)) for v in np.unique(s))
        assert ba == pytest.approx(brute)
        assert balanced_accuracy(s, y, t) == pytest.approx(balanced_accuracy_score(y, (s >= t).astype(int)))


def test_threshold_is_chosen_on_training_rows_only():
    train_s, train_y = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9]), np.array([0, 0, 0, 1, 1, 1])
    test_s = np.array([0.4, 0.5, 0.6, 0.65])
    a = transferred_balanced_accuracy(train_s, train_y, test_s, np.array([0, 0, 1, 1]))
    b = transferred_balanced_accuracy(train_s, train_y, test_s, np.array([1, 1, 0, 0]))
    assert a.threshold == b.threshold == 0.7  # test labels cannot move the threshold
    assert a.train_balanced_accuracy == 1.0 and a.test_balanced_accuracy == 0.5 and b.test_balanced_accuracy == 0.5
    with pytest.raises(ValueError, match="both classes"):
        best_threshold(np.array([0.1, 0.2]), np.array([1, 1]))
