"""The Gaussians' log expected inner product at inference (``similarity(...,
measure="expected_inner_product")``), in float64 NumPy (no torch): the formula of
:func:`probsent.gaussian.expected_inner_product`, with the mean difference taken in log space
from each encoding's log|mean| (exact however far a mean is beyond its dtype's range) and no
floor on the variances; a matrix of many pairs by its compiled twin :mod:`probsent.gaussian_matrix`.
The bounded read-outs (the cosines, the kernel) are :mod:`probsent.similarity_measures`.
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np

from probsent.gaussian import expected_inner_product, log_abs_difference
from probsent.inference.arrays import ArrayEncoding

# Matrices of at least this many pairs go to the compiled kernel: a smaller one is done in NumPy
# before numba's import and cached kernels (a few tenths of a second) would pay off.
COMPILED_PAIRS = 4096


def _log_abs_mean(e: ArrayEncoding) -> np.ndarray:
    if e.log_abs_mean is not None:
        return e.log_abs_mean
    with np.errstate(divide="ignore"):
        return np.log(np.abs(np.asarray(e.mean, dtype=np.float64)))


def paired_similarity(a: ArrayEncoding, b: ArrayEncoding) -> np.ndarray:
    """log N(0; mu_a,i - mu_b,i, S_a,i + S_b,i) for every row i (rows broadcast as NumPy does), float64:
    :func:`probsent.gaussian.expected_inner_product` with the mean difference in log space."""
    log_a, log_b = _log_abs_mean(a), _log_abs_mean(b)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_abs_diff = log_abs_difference(np.sign(a.mean), log_a, np.sign(b.mean), log_b)
        return expected_inner_product(None, np.asarray(a.logvar, np.float64), None,
                                      np.asarray(b.logvar, np.float64), log_abs_diff)


def similarity_blocks(a: ArrayEncoding, b: ArrayEncoding, max_cells: int,
                      compiled: bool = True) -> Iterator[tuple[slice, slice, np.ndarray]]:
    """The expected inner product of every a_i with every b_j, as (rows, columns, block), float64; each block's work holds at
    most about ``max_cells`` numbers (or one row by one column). Each value is exactly
    :func:`paired_similarity` of its pair, except where the compiled kernel
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
            yield r, c, paired_similarity(a.rows((r, None)), b.rows((None, c)))


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
