"""How good a probability of a binary label is: accuracy at 0.5, AUC, log-loss, Brier score,
expected calibration error and the reliability table behind it.

Conventions as :mod:`reproduction.evaluation.metrics`: labels are booleans, True = specific; a
probability is P(label is True).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

BINS = 10  # equal-width bins of the probability on [0, 1] for the ECE and the reliability diagram


def _checked(probabilities: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(probabilities, dtype=np.float64).ravel()
    y = np.asarray(labels, dtype=bool).ravel()
    if p.shape != y.shape or p.size == 0:
        raise ValueError("need as many probabilities as labels, at least one")
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("probabilities must lie in [0, 1] (no NaN)")
    return p, y


def accuracy_at_half(probabilities: ArrayLike, labels: ArrayLike) -> float:
    """Share of sentences where "specific iff P > 0.5" is right."""
    p, y = _checked(probabilities, labels)
    return float(np.mean((p > 0.5) == y))


def auc(probabilities: ArrayLike, labels: ArrayLike) -> float:
    """Area under the ROC curve: the chance that a random positive gets a higher probability
    than a random negative, ties counted half (the Mann-Whitney U statistic over n+ x n-); NaN
    if either class is absent."""
    p, y = _checked(probabilities, labels)
    positives, negatives = int(y.sum()), int((~y).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = stats.rankdata(p)  # average ranks for ties
    u = ranks[y].sum() - positives * (positives + 1) / 2.0
    return float(u / (positives * negatives))


def log_loss(probabilities: ArrayLike, labels: ArrayLike, floor: float = 1e-15) -> float:
    """Mean of -log P(the true label) (natural log), each probability kept within
    [floor, 1 - floor] so that one certain mistake costs -log(floor) (34.5), not infinity."""
    p, y = _checked(probabilities, labels)
    p = np.clip(p, floor, 1.0 - floor)
    return float(-np.mean(np.where(y, np.log(p), np.log1p(-p))))


def brier(probabilities: ArrayLike, labels: ArrayLike) -> float:
    """Mean squared difference between the probability and the label (1 or 0)."""
    p, y = _checked(probabilities, labels)
    return float(np.mean((p - y) ** 2))


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of the reliability table: probabilities in [low, high) (the last bin includes 1)."""

    low: float
    high: float
    count: int
    mean_probability: float  # NaN for an empty bin
    share_positive: float  # NaN for an empty bin


def reliability(probabilities: ArrayLike, labels: ArrayLike, bins: int = BINS) -> list[ReliabilityBin]:
    """The reliability table: ``bins`` equal-width bins of the probability on [0, 1], each with
    its count, mean probability and share of positives."""
    p, y = _checked(probabilities, labels)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        inside = which == b
        count = int(inside.sum())
        out.append(ReliabilityBin(b / bins, (b + 1) / bins, count,
                                  float(p[inside].mean()) if count else float("nan"),
                                  float(y[inside].mean()) if count else float("nan")))
    return out


def expected_calibration_error(probabilities: ArrayLike, labels: ArrayLike, bins: int = BINS) -> float:
    """ECE: over the bins of :func:`reliability`, |mean probability - share of positives|,
    weighted by the bin's share of the sentences."""
    table = reliability(probabilities, labels, bins)
    total = sum(b.count for b in table)
    return float(sum(b.count * abs(b.mean_probability - b.share_positive) for b in table if b.count) / total)


def probability_measures(probabilities: ArrayLike, labels: ArrayLike) -> dict[str, float]:
    """Every measure of this module, and the range of the probabilities, by name."""
    p, y = _checked(probabilities, labels)
    return {"accuracy": 100.0 * accuracy_at_half(p, y), "auc": auc(p, y), "log_loss": log_loss(p, y),
            "brier": brier(p, y), "ece": expected_calibration_error(p, y), "min": float(p.min()),
            "max": float(p.max()), "n": int(p.size)}
