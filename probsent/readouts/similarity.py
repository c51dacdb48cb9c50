"""The read-outs ``similarity()`` offers, in float64 NumPy (no torch).

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
(``reproduction/experiments/similarity_readout.py``; reproduction/docs/RESULTS.md shows its record). A zero vector has
cosine 0 with everything, itself included.

The expected inner product is :func:`probsent.gaussian.expected_inner_product`, with the mean
difference taken in log space from each encoding's log|mean| (exact however far a mean is
beyond its dtype's range) and no floor on the variances (training's similarity,
:mod:`probsent.models.training_similarity`, floors them); a matrix of many pairs goes to its
compiled twin :mod:`probsent.gaussian_matrix`.
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from probsent.errors import InvalidValueError
from probsent.gaussian import expected_inner_product, log_abs_difference
from probsent.inference.arrays import ArrayEncoding

MEASURES = ("cosine", "cosine_concat", "kernel", "expected_inner_product")
GAUSSIAN_ONLY = ("cosine_concat", "kernel", "expected_inner_product")  # need a variance
DEFAULT_PROBABILISTIC = "cosine"  # the pre-registered rule's choice (reproduction/results/similarity-readout/dev.json)
DEFAULT_DETERMINISTIC = "cosine"
# Matrices of at least this many pairs go to the compiled kernel: a smaller one is done in NumPy
# before numba's import and cached kernels (a few tenths of a second) would pay off.
COMPILED_PAIRS = 4096


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


def _log_abs_mean(e: ArrayEncoding) -> np.ndarray:
    if e.log_abs_mean is not None:
        return e.log_abs_mean
    with np.errstate(divide="ignore"):
        return np.log(np.abs(np.asarray(e.mean, dtype=np.float64)))


def paired_expected_inner_product(a: ArrayEncoding, b: ArrayEncoding) -> np.ndarray:
    """log N(0; mu_a,i - mu_b,i, S_a,i + S_b,i) for every row i (rows broadcast as NumPy does), float64:
    :func:`probsent.gaussian.expected_inner_product` with the mean difference in log space."""
    log_a, log_b = _log_abs_mean(a), _log_abs_mean(b)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_abs_diff = log_abs_difference(np.sign(a.mean), log_a, np.sign(b.mean), log_b)
        return expected_inner_product(None, np.asarray(a.logvar, np.float64), None,
                                      np.asarray(b.logvar, np.float64), log_abs_diff)


def expected_inner_product_blocks(a: ArrayEncoding, b: ArrayEncoding, max_cells: int,
                                  compiled: bool = True) -> Iterator[tuple[slice, slice, np.ndarray]]:
    """The expected inner product of every a_i with every b_j, as (rows, columns, block), float64; each block's work holds at
    most about ``max_cells`` numbers (or one row by one column). Each value is exactly
    :func:`paired_expected_inner_product` of its pair, except where the compiled kernel
    (:mod:`probsent.gaussian_matrix`, numba; for at least COMPILED_PAIRS pairs, unless
    ``compiled`` is False) applies: the same formula, summed in its order, about 15x faster."""
    n, m = len(a), len(b)
    kernel = _compiled_blocks(a, b, max_cells) if compiled and n * m >= COMPILED_PAIRS else None
    if kernel is not None:
        yield from kernel
        return
    width = a.mean.shape[-1]
    rows = min(n, max(1, math.isqrt(max(1, max_cells // width))))
    columns = min(m, max(1, max_cells // (width * max(rows, 1))))
    for i in range(0, n, max(rows, 1)):
        r = slice(i, min(i + rows, n))
        for j in range(0, m, max(columns, 1)):
            c = slice(j, min(j + columns, m))
            yield r, c, paired_expected_inner_product(a.rows((r, None)), b.rows((None, c)))


def _compiled_blocks(a: ArrayEncoding, b: ArrayEncoding,
                     max_cells: int) -> Iterator[tuple[slice, slice, np.ndarray]] | None:
    """Blocks of every column from the compiled kernel; None where numba is not installed or a
    mean or log-variance is beyond its domain."""
    try:
        from probsent.gaussian_matrix import expected_inner_product_matrix, in_domain
    except ImportError:  # no numba: NumPy
        return None

    def means(e: ArrayEncoding) -> np.ndarray:  # float64 means, from their logarithms where known
        wide = np.asarray(e.mean, dtype=np.float64)
        return wide if e.log_abs_mean is None else np.sign(wide) * np.exp(e.log_abs_mean)

    with np.errstate(over="ignore"):
        mean_a, mean_b = means(a), means(b)
    logvar_a, logvar_b = np.asarray(a.logvar, np.float64), np.asarray(b.logvar, np.float64)
    if not (in_domain(mean_a, logvar_a) and in_domain(mean_b, logvar_b)):
        return None
    var_a, var_b = np.exp(logvar_a), np.exp(logvar_b)
    rows = max(1, max_cells // max(1, len(mean_b)))

    def blocks() -> Iterator[tuple[slice, slice, np.ndarray]]:
        for i in range(0, len(mean_a), rows):
            r = slice(i, min(i + rows, len(mean_a)))
            out = np.empty((r.stop - r.start, len(mean_b)))
            expected_inner_product_matrix(mean_a[r], var_a[r], mean_b, var_b, out)
            yield r, slice(0, len(mean_b)), out
    return blocks()
