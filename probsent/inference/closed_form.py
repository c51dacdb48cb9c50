"""The reference of inference without torch: each model's final encoding of padded batches,
in float64 NumPy.

WLO (probsent/models/wlo.py): z_i = A_i (z_{i-1} + B_i), z_0 ~ N(0, s_0 I), so after n words

    mean     = sum_j (A_j A_{j+1} ... A_n) B_j      (each translation times its own and every later scale)
    variance = s_0 prod_j A_j^2,   log-variance = log s_0 + 2 sum_j log|A_j|   (exact for any length)

The products are taken in log space with their signs apart: word j's factor is
s e^{S_n - S_{j-1}} with S_i = sum_{l<=i} log|A_l|; dividing every factor by the sentence's
largest, e^M, keeps each in (0, 1], so the sum never overflows, and log|mean| = M + log|sum|
is exact even where the mean itself is beyond float64's range (the mean is then +-inf, and
0 * inf = NaN where the sum is exactly 0; :func:`probsent.inference.arrays.saturated` reads
both as torch's path does).

Wordavg and Wordsum: the average or the sum of the word vectors.

Padding (positions at or beyond a sentence's length) never changes a result.
"""
from __future__ import annotations

import math

import numpy as np

from probsent.gaussian import log_abs_scale
from probsent.inference.arrays import ArrayEncoding


def wlo_word_terms(scale: np.ndarray) -> np.ndarray:
    """WLO's per-word terms sum_d log|A_w,d| of a sentence's entropy, in float64, from its scales
    [vocab, dim] (as the torch module computes them: float32 weights, |A| floored at 1e-30)."""
    wide = scale.astype(np.float32).astype(np.float64)
    return log_abs_scale(wide).sum(-1)


def real_positions(lengths: np.ndarray, width: int) -> np.ndarray:
    """[width, batch, 1] bool, True at the positions before each sentence's length."""
    return (np.arange(width)[:, None] < np.asarray(lengths)[None, :])[:, :, None]


def wlo_encoding(scale: np.ndarray, shift: np.ndarray, lengths: np.ndarray, start_variance: float) -> ArrayEncoding:
    """The final Gaussians of a padded batch, position-major: ``scale`` and ``shift`` hold each
    position's A and B, [width, batch, dim] (any float dtype; computed in float64), ``lengths`` [batch]."""
    real = real_positions(lengths, scale.shape[0])
    a = np.where(real, scale, 1.0).astype(np.float64)  # padding: A = 1, B = 0
    log_abs_a = log_abs_scale(a)
    cum_log = np.cumsum(log_abs_a, axis=0)  # S_i
    negative = a < 0
    sign = 1.0 - 2.0 * (np.cumsum(negative, axis=0, dtype=np.int32) & 1)  # s_i = sign(A_1 ... A_i)
    total_log, total_sign = cum_log[-1], sign[-1]  # S_n, s_n
    # word j's factor A_j ... A_n = s_n s_{j-1} e^{S_n - S_{j-1}}; S_{j-1} = S_j - log|A_j|, s_{j-1} = s_j sign(A_j)
    exponent = total_log - (cum_log - log_abs_a)
    top = np.where(real, exponent, -np.inf).max(axis=0, initial=-np.inf)
    top = np.where(np.isinf(top), 0.0, top)  # a sentence of no words keeps mean 0
    factor = np.exp(exponent - top)
    factor *= np.where(negative, -sign, sign)
    factor *= np.where(real, shift, 0.0)
    partial = total_sign * factor.sum(axis=0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        mean = partial * np.exp(top)
        log_abs_mean = np.log(np.abs(partial)) + top
    logvar = 2.0 * total_log + math.log(start_variance)
    return ArrayEncoding(mean, logvar, log_abs_mean)


def pooled_encoding(vectors: np.ndarray, lengths: np.ndarray, average: bool) -> ArrayEncoding:
    """Wordavg (``average``) or Wordsum of a padded batch of word vectors, position-major
    [width, batch, dim]."""
    total = np.where(real_positions(lengths, vectors.shape[0]), vectors, 0.0).astype(np.float64).sum(axis=0)
    if average:
        total = total / np.maximum(np.asarray(lengths), 1)[:, None]
    return ArrayEncoding(total)
