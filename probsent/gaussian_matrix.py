"""A compiled kernel for the expected inner product of every pair of two sets of diagonal
Gaussians (the similarity matrix of probabilistic models), in float64.

Imported only when a matrix is asked for (numba compiles it once per machine, cached).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from probsent.gaussian import LOG_2PI

# The kernel's domain: log-variances within +-LOGVAR_LIMIT and means within +-MEAN_LIMIT keep
# every intermediate finite (see the loop); anything beyond takes the log-space torch path.
LOGVAR_LIMIT = 300.0
MEAN_LIMIT = 1e150


def in_domain(mean: np.ndarray, logvar: np.ndarray) -> bool:
    """Whether :func:`expected_inner_product_matrix` is exact for these (float64) Gaussians."""
    return bool(np.all(np.abs(logvar) <= LOGVAR_LIMIT) and np.all(np.abs(mean) <= MEAN_LIMIT))


@numba.njit(parallel=True, cache=True)
def expected_inner_product_matrix(mean1: np.ndarray, var1: np.ndarray, mean2: np.ndarray,
                                  var2: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover (compiled)
    """out[i, j] = log N(0; mu1_i - mu2_j, S1_i + S2_j)
    = -1/2 sum_d [log 2 pi + log t_d + (mu1_id - mu2_jd)^2 / t_d], t_d = s1_id + s2_jd.

    sum_d log t_d is taken as the log of a running product (one log per pair, not per
    dimension), folded into the sum whenever it leaves [1e-150, 1e150]: with t within
    [e^-300, 2 e^300] the product never leaves float64's range, and its rounding (a few ulps
    per dimension) stays far below float32's.
    """
    rows, dim = mean1.shape
    columns = mean2.shape[0]
    constant = dim * LOG_2PI
    for i in numba.prange(rows):
        for j in range(columns):
            quad = 0.0
            logs = 0.0
            product = 1.0
            for d in range(dim):
                t = var1[i, d] + var2[j, d]
                diff = mean1[i, d] - mean2[j, d]
                quad += diff * diff / t
                product *= t
                if product > 1e150 or product < 1e-150:
                    logs += math.log(product)
                    product = 1.0
            out[i, j] = -0.5 * (constant + logs + math.log(product) + quad)
