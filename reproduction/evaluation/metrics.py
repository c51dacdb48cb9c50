"""Evaluation metrics: correlations (from ``scipy.stats``), accuracy/F1, threshold tuning,
length-normalized accuracy.

Conventions: binary labels are booleans with True = specific; a scorer's score is higher for
more specific sentences, and a sentence is predicted specific iff ``score > threshold``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

# Pearson and the tuned threshold are the product's public measures (training's model selection
# reads them): written once there, re-exported here for the harness.
from probsent.training import accuracy_at_tuned_threshold, pearson, predict_specific, tune_threshold  # noqa: F401


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"length mismatch: {a.size} vs {b.size}")
    if a.size < 2:
        raise ValueError("a correlation needs at least two values")
    return a, b


def _constant(values: np.ndarray) -> bool:
    return bool(np.all(values == values[0]))


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman rank correlation (``scipy.stats.spearmanr``: average ranks for ties); NaN if
    either input is constant."""
    a, b = _pair(x, y)
    if _constant(a) or _constant(b):
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def accuracy(predicted: ArrayLike, gold: ArrayLike) -> float:
    """Fraction of predictions equal to the gold labels."""
    p, g = np.asarray(predicted).ravel(), np.asarray(gold).ravel()
    if p.shape != g.shape or p.size == 0:
        raise ValueError("accuracy needs two non-empty arrays of equal length")
    return float(np.mean(p == g))


def f1_score(predicted: ArrayLike, gold: ArrayLike) -> float:
    """F1 of the positive (True = specific) class; 0 when there are no true positives."""
    p, g = np.asarray(predicted, dtype=bool).ravel(), np.asarray(gold, dtype=bool).ravel()
    if p.shape != g.shape:
        raise ValueError("f1 needs two arrays of equal length")
    true_positive = int(np.sum(p & g))
    if true_positive == 0:
        return 0.0
    return 2.0 * true_positive / (int(p.sum()) + int(g.sum()))


@dataclass(frozen=True)
class LengthNormalizedResult:
    """Outcome of :func:`length_normalized_accuracy` (accuracies are fractions)."""

    accuracy: float  # pooled over every tested sentence
    majority_floor: float  # same protocol, predicting the tuning group's majority class
    tested_group_majority: float  # best constant prediction per tested group (an oracle)
    pool_size: int
    n_tested: int
    n_untested: int  # sentences in a length group with no group one token longer
    n_groups_tested: int


def length_normalized_accuracy(lengths: Sequence[int], scores: ArrayLike, specific: ArrayLike) -> LengthNormalizedResult:
    """Accuracy when sentence length carries no information (Chen & Gimpel 2020, Table 3).

    Sentences are grouped by token count. For every length ``k`` present, the threshold is
    tuned (:func:`tune_threshold`) on the group of length ``k`` and applied to the group of
    length ``k - 1``. A group with no group one token longer is not tested (counted in
    ``n_untested``); a single-class tuning group simply yields an all-one-class threshold.
    The majority floor applies the tuning group's majority class (ties: specific, as the
    lowest-threshold rule gives for a constant score) to the tested group: it is what a
    length-only scorer achieves.
    """
    n = np.asarray(lengths, dtype=np.int64).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    y = np.asarray(specific, dtype=bool).ravel()
    if not (n.shape == s.shape == y.shape) or n.size == 0:
        raise ValueError("lengths, scores and labels must be non-empty and of equal length")
    groups = {int(k): np.flatnonzero(n == k) for k in np.unique(n)}
    correct = floor_correct = oracle_correct = tested = groups_tested = 0
    for k, test_rows in groups.items():
        tune_rows = groups.get(k + 1)
        if tune_rows is None:
            continue
        threshold = tune_threshold(s[tune_rows], y[tune_rows])
        gold = y[test_rows]
        correct += int(np.sum(predict_specific(s[test_rows], threshold) == gold))
        tune_majority_specific = 2 * int(y[tune_rows].sum()) >= tune_rows.size
        floor_correct += int(np.sum(gold == tune_majority_specific))
        oracle_correct += max(int(gold.sum()), int((~gold).sum()))
        tested += test_rows.size
        groups_tested += 1
    if tested == 0:
        raise ValueError("no length group has a group one token longer to tune on")
    return LengthNormalizedResult(
        accuracy=correct / tested,
        majority_floor=floor_correct / tested,
        tested_group_majority=oracle_correct / tested,
        pool_size=int(n.size),
        n_tested=tested,
        n_untested=int(n.size) - tested,
        n_groups_tested=groups_tested,
    )
