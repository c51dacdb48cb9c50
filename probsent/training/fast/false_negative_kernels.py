"""Compiled :func:`probsent.training.false_negatives.remine` for Gaussians (numba).

The reference builds a dense matrix of shared-word counts and of similarities for the
flagged rows; here one thread per flagged row walks every candidate once: the shared words by
merging two sorted id lists, then (only for candidates that are not false negatives) the
expected inner product in float64 (a candidate above the row's similarity ceiling is skipped),
with one log per eight dimensions (a product of eight
variances sums, each within [2e^-80, 2e^88], stays inside float64's range).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from probsent.gaussian_constants import LOG_2PI, VARIANCE_FLOOR_LOG
from probsent.models.base import Encoding
from probsent.training.false_negatives import banned_negatives, false_negative_limits



@njit(parallel=True, cache=True)
def _remine_rows(mean, var, word_ptr, word_ids, partner, threshold, ceiling, rows, out):  # pragma: no cover - compiled
    n, dim = mean.shape
    for k in prange(len(rows)):
        i = rows[k]
        best, best_j = -np.inf, -1
        for j in range(n):
            if j == i or j == partner[i]:
                continue
            a, a_end, b, b_end = word_ptr[i], word_ptr[i + 1], word_ptr[j], word_ptr[j + 1]
            shared = 0
            while a < a_end and b < b_end:
                if word_ids[a] == word_ids[b]:
                    shared += 1
                    a += 1
                    b += 1
                elif word_ids[a] < word_ids[b]:
                    a += 1
                else:
                    b += 1
            if shared >= threshold[i]:
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
                words: sp.csr_matrix | None = None, ceiling: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`probsent.training.false_negatives.remine` for Gaussians, or None where it does
    not apply (vectors, or a variance beyond float32's range: the reference then runs)."""
    if encoded.logvar is None:
        return None
    logvar = encoded.logvar.detach().cpu().double().numpy()
    if not np.isfinite(logvar).all() or logvar.max() > 88.0:
        return None
    count = len(partner)
    negative = negative.copy()
    threshold = false_negative_limits(words, partner) if words is not None else None
    flagged = np.flatnonzero(banned_negatives(encoded, partner, negative, words, ceiling, threshold))
    if not len(flagged):
        return negative
    if words is None:  # no word rule: no sentence shares a word, none reaches the limit of 1
        words, threshold = sp.csr_matrix((count, 1), dtype=np.int32), np.ones(count, np.int64)
    else:
        words = words.copy()
        words.sum_duplicates()
        words.sort_indices()
    ceiling = np.full(count, np.inf) if ceiling is None else ceiling
    found = np.empty(len(flagged), np.int64)
    _remine_rows(np.ascontiguousarray(encoded.mean.detach().cpu().double().numpy()),
                 np.exp(np.maximum(logvar, VARIANCE_FLOOR_LOG)), words.indptr.astype(np.int64),
                 words.indices.astype(np.int64), partner.astype(np.int64), threshold.astype(np.int64),
                 np.ascontiguousarray(ceiling, dtype=np.float64), flagged.astype(np.int64), found)
    usable = found >= 0
    negative[flagged[usable]] = found[usable]
    return negative
