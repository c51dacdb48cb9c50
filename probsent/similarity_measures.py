"""The read-outs ``similarity()`` offers, bounded ones in NumPy.

A user reads a similarity as "1 = the same, lower = less alike". Three read-outs of the
Gaussians behave that way (each is at most its value for a sentence with itself, by
construction); the model's training similarity does not and stays available by name:

============================  =========  =====================================================
measure                       range      what it is
============================  =========  =====================================================
``cosine``                    [-1, 1]    cosine of the means (of the vectors: deterministic)
``cosine_concat``             [-1, 1]    cosine of concat(mean, variance): the paper's STS read-out
``kernel``                    (0, 1]     the normalized expected likelihood kernel per dimension,
                                         exp((E(a, b) - E(a, a) / 2 - E(b, b) / 2) / k), which is
                                         1 exactly for equal Gaussians (Cauchy-Schwarz)
``expected_inner_product``    any real   E(a, b) = log N(0; mu_a - mu_b, S_a + S_b), what
                                         training maximizes; grows with specificity, so a
                                         sentence can be closer to another than to itself
============================  =========  =====================================================

Per dimension d, with s = S_a,d + S_b,d, the kernel's exponent is
-1/2 [log(s / (2 sqrt(S_a,d S_b,d))) + (mu_a,d - mu_b,d)^2 / s]: both parts are >= 0, and 0
only when the two Gaussians agree in that dimension.

Which one is the default was chosen on development sets by a rule committed first
(``experiments/similarity_readout.py``; docs/RESULTS.md shows its record). A zero vector has
cosine 0 with everything, itself included.
"""
from __future__ import annotations

import numpy as np

from probsent.errors import InvalidValueError

MEASURES = ("cosine", "cosine_concat", "kernel", "expected_inner_product")
GAUSSIAN_ONLY = ("cosine_concat", "kernel", "expected_inner_product")  # need a variance
DEFAULT_PROBABILISTIC = "cosine"  # the pre-registered rule's choice (results/similarity-readout/dev.json)
DEFAULT_DETERMINISTIC = "cosine"


def check_measure(measure: str | None, probabilistic: bool) -> str:
    """``measure``, or the default for the model's kind when None; a one-line error for a name
    that is not a measure or that needs variances the model does not have."""
    if measure is None:
        return DEFAULT_PROBABILISTIC if probabilistic else DEFAULT_DETERMINISTIC
    if measure not in MEASURES:
        raise InvalidValueError(f"measure must be one of {', '.join(MEASURES)}, not {measure!r}")
    if measure in GAUSSIAN_ONLY and not probabilistic:
        raise InvalidValueError(f"measure {measure!r} needs Gaussians (mean and variance); "
                                f"this model gives vectors: use 'cosine'")
    return measure


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its length (a zero row stays zero), scaled first by its largest
    magnitude so that no square overflows."""
    top = np.abs(vectors).max(axis=-1, keepdims=True) if vectors.shape[-1] else np.zeros(vectors.shape[:-1] + (1,))
    scaled = np.divide(vectors, top, out=np.zeros_like(vectors), where=top > 0)
    norms = np.linalg.norm(scaled, axis=-1, keepdims=True)
    return np.divide(scaled, norms, out=np.zeros_like(scaled), where=norms > 0)


def _concat(mean: np.ndarray, logvar: np.ndarray) -> np.ndarray:
    """concat(mean, variance) of each row, divided by a per-row factor (the cosine does not
    see it) that keeps every variance finite however large its log."""
    top = np.maximum(logvar.max(axis=-1, keepdims=True), np.log(np.maximum(np.abs(mean).max(axis=-1, keepdims=True),
                                                                            np.finfo(np.float64).tiny)))
    return np.concatenate([mean * np.exp(-top), np.exp(logvar - top)], axis=-1)


def _unit_operands(measure: str, mean: np.ndarray, logvar: np.ndarray | None) -> np.ndarray:
    """The unit vectors whose dot products are the cosine measures."""
    return _unit_rows(mean if measure == "cosine" else _concat(mean, logvar))


def _log_kernel(mean_a, logvar_a, mean_b, logvar_b) -> np.ndarray:
    """The normalized kernel's exponent averaged over dimensions (<= 0), broadcasting."""
    log_sum = np.logaddexp(logvar_a, logvar_b)
    spread = log_sum - np.log(2.0) - 0.5 * (logvar_a + logvar_b)  # log(s / (2 sqrt(S_a S_b))) >= 0
    with np.errstate(over="ignore", divide="ignore"):  # (mu_a - mu_b)^2 / s in log space: 0 / tiny is 0, not NaN
        gap = np.exp(2.0 * np.log(np.abs(mean_a - mean_b)) - log_sum)
    return -0.5 * np.mean(np.maximum(spread, 0.0) + gap, axis=-1)


def measure_pairs(measure: str, a: tuple[np.ndarray, np.ndarray | None],
                  b: tuple[np.ndarray, np.ndarray | None]) -> np.ndarray:
    """The bounded ``measure`` of a[i] with b[i] for every row i; a and b are (mean, log-variance)
    float64 arrays (log-variance None for vectors)."""
    if measure == "kernel":
        return np.exp(_log_kernel(a[0], a[1], b[0], b[1]))
    return _dot(_unit_operands(measure, *a), _unit_operands(measure, *b))


def _dot(unit_a: np.ndarray, unit_b: np.ndarray) -> np.ndarray:
    """Dot products of unit vectors summed along the contiguous last axis, so that a value never
    depends on the block or batch it is computed in (a matrix product's order can), clipped to
    [-1, 1]."""
    return np.clip((unit_a * unit_b).sum(-1), -1.0, 1.0)


def measure_matrix(measure: str, a: tuple[np.ndarray, np.ndarray | None], b: tuple[np.ndarray, np.ndarray | None],
                   max_cells: int) -> np.ndarray:
    """The bounded ``measure`` of every a[i] with every b[j], an (N, M) float64 array, its work
    in blocks of at most about ``max_cells`` numbers."""
    n, m = len(a[0]), len(b[0])
    out = np.empty((n, m))
    rows = max(1, max_cells // max(1, m * a[0].shape[-1]))
    if measure != "kernel":
        unit_a, unit_b = _unit_operands(measure, *a), _unit_operands(measure, *b)
    for start in range(0, n, rows):
        r = slice(start, min(start + rows, n))
        if measure == "kernel":
            out[r] = np.exp(_log_kernel(a[0][r, None], a[1][r, None], b[0][None], b[1][None]))
        else:
            out[r] = _dot(unit_a[r, None], unit_b[None])
    return out
