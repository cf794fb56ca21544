"""Threshold-free and thresholded companions of AUROC: average precision, balanced accuracy.

A threshold is only ever chosen on data other than the slice it is applied to: the
caller passes training and test arrays separately, so tuning on the test set cannot happen here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attrib_audit.stats.auroc import _check


def _counts_by_threshold(s: np.ndarray, y: np.ndarray,
                         w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores (descending) with (weighted) true/false positives when predicting score ≥ that value."""
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    w_sorted = np.ones(s.size) if w is None else np.asarray(w, dtype=np.float64)[order]
    last = np.r_[np.flatnonzero(np.diff(s_sorted)), s_sorted.size - 1]  # last index of each tie block
    tps = np.cumsum(y_sorted * w_sorted)[last]
    fps = np.cumsum(w_sorted)[last] - tps
    return s_sorted[last], tps.astype(np.float64), fps.astype(np.float64)


def average_precision(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None) -> float:
    """AP = Σ (R_k − R_{k−1}) P_k over distinct thresholds, as sklearn.metrics.average_precision_score.

    The chance level is the positive share. `weights` (a sample's 1/inclusion probability) make it the
    Horvitz–Thompson estimate for the pool, as sklearn's `sample_weight`.

    Args:
        scores: 1-D scores without NaN.
        labels: 0/1 labels (1 = supported, the positive class).
        weights: Optional positive weight per row.

    Returns:
        AP in [0, 1], NaN when the slice has no positive.

    Examples:
        >>> round(average_precision([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]), 4)
        0.8333
    """
    s, y = _check(scores, labels)
    if not y.any():
        return float("nan")
    _, tps, fps = _counts_by_threshold(s, y, weights)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def balanced_accuracy(scores: np.ndarray, labels: np.ndarray, threshold: float) -> float:
    """(TPR + TNR) / 2 when predicting 1 for score ≥ threshold.

    Args:
        scores: 1-D scores without NaN.
        labels: 0/1 labels.
        threshold: Predict 1 (supported) at scores ≥ it.

    Returns:
        The balanced accuracy, NaN if a class is absent.
    """
    s, y = _check(scores, labels)
    if y.all() or not y.any():
        return float("nan")
    pred = s >= threshold
    return float(0.5 * ((pred & y).sum() / y.sum() + (~pred & ~y).sum() / (~y).sum()))


def best_threshold(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(threshold, balanced accuracy) maximising balanced accuracy on these rows; all candidates at once.

    Candidates are the distinct scores (predict 1 for score ≥ t); ties go to the highest threshold.

    Args:
        scores: 1-D training scores without NaN.
        labels: 0/1 training labels.

    Returns:
        The threshold and its balanced accuracy on these rows (in-sample: apply it elsewhere).

    Raises:
        ValueError: One class only.

    Examples:
        >>> best_threshold([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        (0.8, 0.75)
    """
    s, y = _check(scores, labels)
    if y.all() or not y.any():
        raise ValueError("choosing a threshold needs both classes in the training rows")
    values, tps, fps = _counts_by_threshold(s, y)
    ba = 0.5 * (tps / y.sum() + 1.0 - fps / (~y).sum())
    k = int(np.argmax(ba))
    return float(values[k]), float(ba[k])


@dataclass(frozen=True, kw_only=True)
class TransferredThreshold:
    """A threshold chosen on training rows (other datasets) and its balanced accuracy on the test slice."""

    threshold: float
    train_balanced_accuracy: float
    test_balanced_accuracy: float
    n_train: int
    n_test: int



def transferred_balanced_accuracy(train_scores: np.ndarray, train_labels: np.ndarray, test_scores: np.ndarray,
                                  test_labels: np.ndarray) -> TransferredThreshold:
    """Choose the balanced-accuracy threshold on train rows, then score the held-out test rows with it.

    Args:
        train_scores: Scores the threshold is chosen on (other datasets).
        train_labels: Their 0/1 labels (both classes needed).
        test_scores: Scores of the slice judged.
        test_labels: Their 0/1 labels.

    Returns:
        The threshold with its train and test balanced accuracy.

    Raises:
        ValueError: The training rows hold one class only.
    """
    t, ba_train = best_threshold(train_scores, train_labels)
    return TransferredThreshold(threshold=t, train_balanced_accuracy=ba_train,
                                test_balanced_accuracy=balanced_accuracy(test_scores, test_labels, t),
                                n_train=int(np.size(train_scores)), n_test=int(np.size(test_scores)))
