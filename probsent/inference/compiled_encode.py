"""The closed forms of :mod:`probsent.inference.closed_form` compiled: each sentence in one pass, no padding.

:func:`compiled_encoding` computes, for every sentence ``ids[offsets[k]:offsets[k + 1]]``, what
:func:`~probsent.inference.closed_form.wlo_encoding` and
:func:`~probsent.inference.closed_form.pooled_encoding` compute for a padded batch, in float64,
with the same formulas in the same order (WLO's log-variance: the running log-scales S_j; its
mean: the same log-space sums for a sentence whose products of scales come near float64's
limits, else the plain recurrence z_j = A_j (z_{j-1} + B_j) in float64, equal to the log-space
sums within float64's rounding and without an exponential per word; Wordavg/Wordsum: the running
sum, bit for bit), on all cores (one sentence per task). No [width, batch, dim] work arrays and no
Python per batch, so ``model.encode`` runs at the speed of the tokenizer.
``tests/test_compiled_encode.py`` holds it to the NumPy reference (to 1e-12, relative, for
WLO's mean; bit for bit otherwise).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from probsent.gaussian import log_abs_scale
from probsent.inference.arrays import ArrayEncoding

__all__ = ["compiled_encoding", "scale_tables"]


# Every running sum S_j of a sentence within +-SAFE_LOG: every product of its scales A_i ... A_j
# is within e^+-(2 SAFE_LOG), and times a shift (float32: below e^89) and summed over at most
# 10,000 words, within float64's range (e^709) and far above its smallest normal numbers.
SAFE_LOG = 250.0


@njit(cache=True, inline="always")
def _recurrence_is_safe(lowest: np.ndarray, highest: np.ndarray) -> bool:  # pragma: no cover (compiled)
    """Whether every running sum S_j of the sentence lies within +-SAFE_LOG (see SAFE_LOG)."""
    for d in range(len(lowest)):
        if lowest[d] < -SAFE_LOG or highest[d] > SAFE_LOG:
            return False
    return True


@njit(cache=True, parallel=True)
def _wlo(ids: np.ndarray, offsets: np.ndarray, log_abs_scale: np.ndarray, scale_sign: np.ndarray,
         scale: np.ndarray, shift: np.ndarray, log_start: float, mean: np.ndarray, logvar: np.ndarray,
         log_abs_mean: np.ndarray) -> None:  # pragma: no cover (compiled)
    """WLO's final Gaussian of every sentence (closed_form.wlo_encoding's steps, per dimension),
    from each word's log max(|A|, SCALE_FLOOR) and sign (+-1.0): the log-variance exactly as the
    reference sums it; the mean by the plain recurrence z_j = A_j (z_{j-1} + B_j) in float64 (two
    operations a word and dimension, no exponential; equal to the log-space sums within float64's
    rounding) where no product of scales comes near float64's limits (:func:`_recurrence_is_safe`),
    else by the reference's log-space sums. The recurrence runs in the same pass over the words
    as the running sums (``mean`` starts at zero), and is replaced where it is not safe."""
    dim = log_abs_scale.shape[1]
    for k in prange(len(offsets) - 1):
        first, last = offsets[k], offsets[k + 1]
        cum = np.zeros(dim)  # S_j, then S_n
        lowest = np.full(dim, np.inf)  # the smallest S_j - log|A_j| (S_{j-1}, written as the reference does)
        highest = np.zeros(dim)  # the largest S_j (S_0 = 0 included)
        for j in range(first, last):
            w = ids[j]
            for d in range(dim):
                log_abs = log_abs_scale[w, d]
                cum[d] += log_abs
                lowest[d] = min(lowest[d], cum[d] - log_abs)
                highest[d] = max(highest[d], cum[d])
                mean[k, d] = np.float64(scale[w, d]) * (mean[k, d] + np.float64(shift[w, d]))
        # the largest exponent S_n - S_{j-1} is S_n minus the smallest S_{j-1} (rounding is
        # monotonic); 0 where the sentence has no words (the reference's where)
        peak = cum - lowest
        for d in range(dim):
            if math.isinf(peak[d]):
                peak[d] = 0.0
        if _recurrence_is_safe(lowest, highest):
            for d in range(dim):
                log_abs_mean[k, d] = math.log(abs(mean[k, d])) if mean[k, d] != 0.0 else -np.inf
                logvar[k, d] = 2.0 * cum[d] + log_start
            continue
        before = np.zeros(dim)  # S_j again
        sign = np.ones(dim)  # s_{j-1}: the reference's where(A_j < 0, -s_j, s_j)
        total = np.zeros(dim)
        for j in range(first, last):
            w = ids[j]
            for d in range(dim):
                log_abs = log_abs_scale[w, d]
                before[d] += log_abs
                total[d] += math.exp(cum[d] - (before[d] - log_abs) - peak[d]) * sign[d] * np.float64(shift[w, d])
                sign[d] *= scale_sign[w, d]
        for d in range(dim):
            partial = sign[d] * total[d]  # s_n times the sum
            mean[k, d] = partial * math.exp(peak[d])
            log_abs_mean[k, d] = (math.log(abs(partial)) if partial != 0.0 else -np.inf) + peak[d]
            logvar[k, d] = 2.0 * cum[d] + log_start


@njit(cache=True, parallel=True)
def _pooled(ids: np.ndarray, offsets: np.ndarray, vectors: np.ndarray, average: bool,
            out: np.ndarray) -> None:  # pragma: no cover (compiled)
    """Wordsum (or, with ``average``, Wordavg) of every sentence."""
    dim = vectors.shape[1]
    for k in prange(len(offsets) - 1):
        for j in range(offsets[k], offsets[k + 1]):
            for d in range(dim):
                out[k, d] += np.float64(vectors[ids[j], d])
        if average:
            count = max(offsets[k + 1] - offsets[k], 1)
            for d in range(dim):
                out[k, d] /= count


def scale_tables(scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log max(|A|, SCALE_FLOOR) in float64, sign(A) as +-1.0) of every word's scales: what the WLO kernel
    reads (made once per model: :func:`probsent.gaussian.log_abs_scale`)."""
    wide = scale.astype(np.float64)
    return np.ascontiguousarray(log_abs_scale(wide)), np.where(wide < 0, -1.0, 1.0)


def compiled_encoding(type_name: str, weights: dict[str, np.ndarray], ids: np.ndarray, offsets: np.ndarray,
                      start_variance: float = 1.0,
                      tables: tuple[np.ndarray, np.ndarray] | None = None) -> ArrayEncoding:
    """The float64 encodings of the sentences ``ids[offsets[k]:offsets[k + 1]]`` by a WLO,
    Wordavg or Wordsum model's weights (``weights``: its tables, [vocab, dim] each; a WLO's
    :func:`scale_tables`, where made already, in ``tables``)."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    count = len(offsets) - 1
    if type_name == "wlo":
        log_abs, signs = tables if tables is not None else scale_tables(weights["scale.weight"])
        dim = log_abs.shape[1]
        mean, logvar, log_abs_mean = np.zeros((count, dim)), np.zeros((count, dim)), np.zeros((count, dim))
        _wlo(ids, offsets, log_abs, signs, weights["scale.weight"], weights["shift.weight"], math.log(start_variance),
             mean, logvar, log_abs_mean)
        return ArrayEncoding(mean, logvar, log_abs_mean)
    vectors = weights["embedding.weight"]
    mean = np.zeros((count, vectors.shape[1]))
    _pooled(ids, offsets, vectors, type_name == "wordavg", mean)
    return ArrayEncoding(mean)
