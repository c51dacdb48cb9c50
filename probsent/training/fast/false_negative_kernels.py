"""Compiled :func:`probsent.training.false_negatives.remine` for Gaussians (numba).

The reference builds a dense matrix of similarities for the flagged rows; here one thread per
flagged row walks every candidate once: the expected inner product in float64 (a candidate
above the row's similarity ceiling is skipped),
with one log per eight dimensions (a product of eight
variances sums, each within [2e^-80, 2e^88], stays inside float64's range).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from probsent.gaussian_constants import LOG_2PI, VARIANCE_FLOOR_LOG
from probsent.models.base import Encoding
from probsent.training.false_negatives import above_ceilings


@njit(parallel=True, cache=True)
def _remine_rows(mean, var, partner, ceiling, rows, out):  # pragma: no cover - compiled
    n, dim = mean.shape
    for k in prange(len(rows)):
        i = rows[k]
        best, best_j = -np.inf, -1
        for j in range(n):
            if j == i or j == partner[i]:
                continue
            total, product = 0.0, 1.0
            for d in range(dim):
                v = var[i, d] + var[j, d]
                diff = mean[i, d] - mean[j, d]
                total += diff * diff / v
                product *= v
                if d % 8 == 7:
                    total += math.log(product)
                    product = 1.0
            value = -0.5 * (total + math.log(product) + dim * LOG_2PI)
            if value > ceiling[i]:
                continue
            if value > best:
                best, best_j = value, j
        out[k] = best_j


def remine_fast(encoded: Encoding, partner: np.ndarray, negative: np.ndarray,
                ceiling: np.ndarray) -> np.ndarray | None:
    """:func:`probsent.training.false_negatives.remine` for Gaussians, or None where it does
    not apply (vectors, or a variance beyond float32's range: the reference then runs)."""
    if encoded.logvar is None:
        return None
    logvar = encoded.logvar.detach().cpu().double().numpy()
    if not np.isfinite(logvar).all() or logvar.max() > 88.0:
        return None
    negative = negative.copy()
    flagged = np.flatnonzero(above_ceilings(encoded, negative, ceiling))
    if not len(flagged):
        return negative
    found = np.empty(len(flagged), np.int64)
    _remine_rows(np.ascontiguousarray(encoded.mean.detach().cpu().double().numpy()),
                 np.exp(np.maximum(logvar, VARIANCE_FLOOR_LOG)), partner.astype(np.int64),
                 np.ascontiguousarray(ceiling, dtype=np.float64), flagged.astype(np.int64), found)
    usable = found >= 0
    negative[flagged[usable]] = found[usable]
    return negative
