"""Compiled (numba) kernels of WLO training: encoding a mega-batch and whole runs of steps.

They compute what :class:`probsent.models.wlo.WLO` trained by the torch loop of
:mod:`probsent.training.trainer` (the reference) computes, tested against it in
tests/test_fast_engine.py, without per-operation overhead. The recurrence mu_i = A_i (mu_{i-1} + B_i),
sigma^2_i = A_i^2 sigma^2_{i-1} runs position by position (float64 when encoding a mega-batch,
float32 as the reference's tensors in the steps); where a variance leaves the float range, its log
is recomputed as 2 sum log|A| (the case of the reference's log-space path). A step's backward pass
is the adjoint of the recurrence, then lazy Adam (``torch.optim.SparseAdam``'s update) moves the
rows the step touched. Only :func:`encode_final` runs on several threads, on independent rows,
so no result depends on the thread count.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from probsent.gaussian import LOG_2PI, SCALE_FLOOR, VARIANCE_FLOOR_LOG

LOG_FLOAT32_MAX = math.log(float(np.finfo(np.float32).max))

# the working precision of the per-token loops (float32, as the reference's tensors);
# sentence-level quantities (final distributions, similarities, the loss) use float64
REAL = np.float32

_jit = dict(cache=True, error_model="numpy", nogil=True)


@njit(parallel=True, **_jit)
def encode_final(ids, starts, lengths, scale, shift):
    """Final mean and log-variance (float32 [n, dim]) of the sentences ``ids[starts[k]:starts[k] + lengths[k]]``
    (mining's input), in float64: log-variance is the log of the product of the A^2, or 2 sum log|A|
    where that product leaves float64's range."""
    n, dim = len(starts), scale.shape[1]
    mean_out = np.empty((n, dim), np.float32)
    logvar_out = np.empty((n, dim), np.float32)
    for k in prange(n):
        mean = np.zeros(dim)
        var = np.ones(dim)
        for p in range(starts[k], starts[k] + lengths[k]):
            a_row, b_row = scale[ids[p]], shift[ids[p]]
            for d in range(dim):
                a = np.float64(a_row[d])
                mean[d] = a * (mean[d] + b_row[d])
                var[d] *= a * a
        for d in range(dim):
            mean_out[k, d] = mean[d]
            if 1e-300 < var[d] < 1e300:
                logvar_out[k, d] = math.log(var[d])
            else:
                total = 0.0
                for p in range(starts[k], starts[k] + lengths[k]):
                    total += math.log(max(abs(np.float64(scale[ids[p], d])), SCALE_FLOOR))
                logvar_out[k, d] = 2.0 * total
    return mean_out, logvar_out


@njit(**_jit)
def _sum_log_abs(row) -> float:
    """sum_d log max(|row_d|, 1e-30): one log of the product, or one per element where the product
    leaves float64's normal range (never, for scales of realistic size)."""
    product = 1.0
    for value in row:
        product *= max(abs(np.float64(value)), SCALE_FLOOR)
    if 1e-300 < product < 1e300:
        return math.log(product)
    total = 0.0
    for value in row:
        total += math.log(max(abs(np.float64(value)), SCALE_FLOOR))
    return total


@njit(**_jit)
def _assign_slots(tokens, slot_of, touched, count, slots) -> int:
    """Give every word of ``tokens`` a slot (``slots``, same positions): a word met for the
    first time in the step gets the next one (``touched[slot]`` = the word). Returns the count."""
    for p in range(len(tokens)):
        w = tokens[p]
        if slot_of[w] < 0:
            slot_of[w] = count
            touched[count] = w
            count += 1
        slots[p] = slot_of[w]
    return count


@njit(**_jit)
def _load_rows(touched, first, end, scale, shift, a, b, inv_a, log_a_sum, grad_a, grad_b):
    """The rows of slots first..end-1: A, B, 1/A (0 below the clamp), sum_d log|A_d|, zeroed gradients."""
    for slot in range(first, end):
        w = touched[slot]
        log_a_sum[slot] = _sum_log_abs(scale[w])
        scale_row, shift_row = scale[w], shift[w]
        a_row, b_row, inv_row, grad_a_row, grad_b_row = a[slot], b[slot], inv_a[slot], grad_a[slot], grad_b[slot]
        for d in range(len(a_row)):
            a_row[d] = scale_row[d]
            b_row[d] = shift_row[d]
            inv_row[d] = REAL(1.0) / scale_row[d]
            grad_a_row[d] = 0.0
            grad_b_row[d] = 0.0
        for d in range(len(a_row)):
            if not abs(a_row[d]) >= SCALE_FLOOR:  # log|A| is clamped there: no gradient
                inv_row[d] = 0.0


@njit(**_jit)
def _forward(slots, a, b, means, variances, buffers) -> float:
    """mu_i and sigma^2_i of every prefix of one sentence into rows i of ``means`` and ``variances``;
    returns the sum over prefixes and dimensions of 1/2 (sigma^2 + mu^2 - 1), the KL terms but -S
    (which the caller adds per word). ``buffers`` [5, dim] is scratch. The rows indexed by position
    are copied in a loop of their own: mixed with the slot-indexed loops, the loops do not vectorize."""
    half, one = REAL(0.5), REAL(1.0)  # no float64 in the loops
    mean, var, kl = buffers[0], buffers[1], buffers[2]
    for d in range(len(mean)):
        mean[d], var[d], kl[d] = 0.0, 1.0, 0.0
    for i in range(len(slots)):
        a_row, b_row = a[slots[i]], b[slots[i]]
        for d in range(len(mean)):
            mean[d] = a_row[d] * (mean[d] + b_row[d])
            var[d] *= a_row[d] * a_row[d]
        for d in range(len(mean)):
            kl[d] += half * (var[d] + mean[d] * mean[d] - one)
        for d in range(len(mean)):
            means[i, d], variances[i, d] = mean[d], var[d]
    total = 0.0
    for d in range(len(mean)):
        total += kl[d]
    return total


@njit(**_jit)
def _final(slots, a, means, variances, mean, var, cum) -> bool:
    """A sentence's final ``mean`` and ``var`` in float64 (N(0, I) for no word); where the variance left
    float32's normal range, also S = log-variance / 2 = sum log|A| in ``cum`` (read only where a sum
    of two variances leaves float64's range). Returns whether all is finite in float32, as the reference's must be."""
    n, finite = len(slots), True
    for d in range(len(mean)):
        mean[d] = means[n - 1, d] if n else 0.0
        var[d] = variances[n - 1, d] if n else 1.0
        if not 1e-37 < var[d] < 1e37:
            cum[d] = 0.0
            for slot in slots:
                cum[d] += math.log(max(abs(np.float64(a[slot, d])), SCALE_FLOOR))
            var[d] = math.exp(2.0 * cum[d])
            if 2.0 * cum[d] > LOG_FLOAT32_MAX:
                finite = False
        if not abs(mean[d]) <= 3.4e38:
            finite = False
    return finite


@njit(**_jit)
def _similarity(mean1, var1, cum1, mean2, var2, cum2, terms) -> float:
    """d = log N(0; mu1 - mu2, S1 + S2), as :func:`probsent.gaussian.expected_inner_product` (the quadratic
    term divides by max(s1 + s2, e^-80)). Keeps in ``terms`` [5, dim] what the gradient needs: u = mu1 - mu2,
    1 / max(s1 + s2, e^-80), dd/dlog(s1 + s2) and the shares s_j / (s1 + s2) (= d log(s1 + s2) / d log s_j)."""
    total = 0.0
    for d in range(mean1.shape[0]):
        t = var1[d] + var2[d]
        if 1e-300 < t < 1e300:
            log_sum = math.log(t)
            share1, share2 = var1[d] / t, var2[d] / t
        else:  # beyond float64's range: from the log-variances (logaddexp)
            x1, x2 = 2.0 * cum1[d], 2.0 * cum2[d]
            log_sum = max(x1, x2) + math.log1p(math.exp(-abs(x1 - x2)))
            share1, share2 = math.exp(x1 - log_sum), math.exp(x2 - log_sum)
        floored = log_sum <= VARIANCE_FLOOR_LOG
        inv = math.exp(-max(log_sum, VARIANCE_FLOOR_LOG)) if floored or not 1e-300 < t < 1e300 else 1.0 / t
        u = mean1[d] - mean2[d]
        quad = u * u * inv
        total += LOG_2PI + log_sum + quad
        terms[0, d] = u
        terms[1, d] = inv
        terms[2, d] = -0.5 * (1.0 - (0.0 if floored else quad))  # inv has no gradient below the floor
        terms[3, d] = share1
        terms[4, d] = share2
    return -0.5 * total


@njit(**_jit)
def _add_similarity_gradient(weight, terms, g_mean1, g_cum1, g_mean2, g_cum2):
    """Add ``weight`` times the gradient of the d whose ``terms`` :func:`_similarity` kept,
    with respect to both means and both S = log-variance / 2 (d log s / dS = 2)."""
    for d in range(g_mean1.shape[0]):
        g_u = -weight * terms[0, d] * terms[1, d]
        g_mean1[d] += g_u
        g_mean2[d] -= g_u
        g_log_sum = weight * terms[2, d]
        g_cum1[d] += 2.0 * g_log_sum * terms[3, d]
        g_cum2[d] += 2.0 * g_log_sum * terms[4, d]


@njit(**_jit)
def _backward(slots, a, b, inv_a, means, variances, g_mean, g_cum, kl_weight, buffers,
              grad_a, grad_b):
    """Adjoint sweep of one sentence (prefixes as :func:`_forward` wrote them), adding to its words' gradient rows.
    With lambda the adjoint of mu_i and sigma that of S_i, from the last word back: lambda += g_kl mu_i,
    sigma += g_kl (sigma^2_i - 1) (the prefix's KL), then dL/dB_i = A_i lambda,
    dL/dA_i = lambda (mu_{i-1} + B_i) + sigma / A_i, lambda <- A_i lambda."""
    one, weight = REAL(1.0), REAL(kl_weight)
    var, adjoint_mean, adjoint_cum = buffers[1], buffers[3], buffers[4]
    dim, n = len(var), len(slots)
    for d in range(dim):
        adjoint_mean[d], adjoint_cum[d] = g_mean[d], g_cum[d]
        buffers[2 * (n & 1), d] = means[n - 1, d] if n else 0.0  # buffers 0 and 2 take turns: mu_i, mu_{i-1}
    for i in range(n - 1, -1, -1):  # row i holds the docstring's prefix i + 1
        mean, mean_before = buffers[2 * ((i + 1) & 1)], buffers[2 * (i & 1)]
        for d in range(dim):
            var[d] = variances[i, d]
            mean_before[d] = means[i - 1, d] if i > 0 else 0.0
        slot = slots[i]
        a_row, b_row, inv_row, grad_a_row, grad_b_row = a[slot], b[slot], inv_a[slot], grad_a[slot], grad_b[slot]
        for d in range(dim):
            adjoint_mean[d] += weight * mean[d]
            adjoint_cum[d] += weight * (var[d] - one)
            grad_b_row[d] += a_row[d] * adjoint_mean[d]
            grad_a_row[d] += adjoint_mean[d] * (mean_before[d] + b_row[d]) + adjoint_cum[d] * inv_row[d]
            adjoint_mean[d] *= a_row[d]


@njit(**_jit)
def _lazy_adam(table, exp_avg, exp_avg_sq, grads, touched, count, step_size, beta1, beta2, eps):
    """SparseAdam's update of the rows ``touched[:count]``, in float32 as the reference:
    m <- m + (1 - b1)(g - m), v <- v + (1 - b2)(g^2 - v), w <- w - step_size m / (sqrt(v) + eps)."""
    one_minus_beta1, one_minus_beta2 = np.float32(1.0 - beta1), np.float32(1.0 - beta2)
    step32, eps32 = np.float32(step_size), np.float32(eps)
    for slot in range(count):
        row, m_row, v_row, g_row = table[touched[slot]], exp_avg[touched[slot]], exp_avg_sq[touched[slot]], grads[slot]
        for d in range(len(row)):
            g = np.float32(g_row[d])
            m = m_row[d] + one_minus_beta1 * (g - m_row[d])
            v = v_row[d] + one_minus_beta2 * (g * g - v_row[d])
            m_row[d] = m
            v_row[d] = v
            row[d] -= step32 * (m / (np.sqrt(v) + eps32))


@njit(**_jit)
def train_steps(ids, starts, lengths, step_pairs, scale, shift, scale_avg, scale_avg_sq,
                shift_avg, shift_avg_sq, first_step, lr, beta1, beta2, eps, margin, prior_weight,
                slot_of, anchor_weight, anchor_targets):
    """Run consecutive WLO training steps, updating weights and Adam moments in place.

    Step k trains on ``step_pairs[k]`` = r pairs, whose 4r scrambled sentences (s1, s2, n1, n2 rows)
    follow the previous step's in ``starts`` / ``lengths``, with the reference's loss:
    mean over rows of [max(0, m - d(s1,s2) + d(s1,n1)) + max(0, m - d(s1,s2) + d(s2,n2))]
    + prior_weight / r * (sum over the 4r sentences and their prefixes of KL to N(0, I))
    + anchor_weight / r * sum over the step's distinct words w of 1/2 (T_w - anchor_targets[w])^2,
    T_w = sum_d log|A_w,d| (``--rarity-anchor``; 0: off, and ``anchor_targets`` may be empty).
    ``first_step`` is the optimizer's step count before (Adam's bias correction); ``slot_of`` is
    scratch, -1 everywhere (and left so). Returns (losses, their parts: margin, prior and anchor a row,
    steps done): a step whose loss, or a final mean or variance in float32, is not finite stops the
    run before its update. One thread: a step is
    a few milliseconds, and parallel regions that short stall whenever the other core is busy
    (measured: 5 to 10 times slower, against 20% faster when idle).
    """
    dim = scale.shape[1]
    steps = len(step_pairs)
    losses = np.zeros(steps)
    parts = np.zeros((steps, 3))
    widest = 4 * max(step_pairs.max(), 1) if steps else 4
    tokens_max = 1  # the most tokens (and so distinct words) a step has
    first = 0
    for k in range(steps):
        tokens_max = max(tokens_max, lengths[first:first + 4 * step_pairs[k]].sum())
        first += 4 * step_pairs[k]
    rows_max = min(tokens_max, scale.shape[0])
    # per sentence: the final distribution (float64), its gradient, whether it is finite
    mean, var, cum = np.zeros((widest, dim)), np.zeros((widest, dim)), np.zeros((widest, dim))
    g_mean, g_cum = np.zeros((widest, dim), REAL), np.zeros((widest, dim), REAL)
    finite = np.ones(widest, np.bool_)
    # per word of the step: A, B, 1/A, sum_d log|A| and the gradients
    a, b, inv_a = np.zeros((rows_max, dim), REAL), np.zeros((rows_max, dim), REAL), np.zeros((rows_max, dim), REAL)
    grad_a, grad_b = np.zeros((rows_max, dim), REAL), np.zeros((rows_max, dim), REAL)
    log_a_sum = np.zeros(rows_max)
    touched = np.zeros(rows_max, np.int64)
    # per token of the step: its word's slot, and the prefix's mean and variance
    slots = np.zeros(tokens_max, np.int64)
    means, variances = np.zeros((tokens_max, dim), REAL), np.zeros((tokens_max, dim), REAL)
    offset = np.zeros(widest + 1, np.int64)  # sentence s owns tokens offset[s]:offset[s + 1]
    terms = np.zeros((3, 5, dim))  # of d(s1,s2) and d(anchor,negative) for both anchors
    buffers = np.zeros((5, dim), REAL)
    first = 0
    for k in range(steps):
        r = step_pairs[k]
        size = 4 * r
        # the step's words, one slot each, and their rows
        count = 0
        for s in range(size):
            start, length = starts[first + s], lengths[first + s]
            offset[s + 1] = offset[s] + length
            count = _assign_slots(ids[start:start + length], slot_of, touched, count,
                                  slots[offset[s]:offset[s + 1]])
        _load_rows(touched, 0, count, scale, shift, a, b, inv_a, log_a_sum, grad_a, grad_b)
        # forward: every prefix, the prior (1/2 (sigma^2 + mu^2 - 1) - S per prefix and
        # dimension; S's part is, per word, log|A| times the prefixes that contain it)
        prior = 0.0
        for s in range(size):
            here = slice(offset[s], offset[s + 1])
            prior += _forward(slots[here], a, b, means[here], variances[here], buffers)
            finite[s] = _final(slots[here], a, means[here], variances[here], mean[s], var[s], cum[s])
            for p in range(offset[s], offset[s + 1]):
                prior -= (offset[s + 1] - p) * log_a_sum[slots[p]]
        # --rarity-anchor: 1/2 (T_w - t_w)^2 per distinct word
        pulled = 0.0
        if anchor_weight > 0.0:
            for slot in range(count):
                gap = log_a_sum[slot] - anchor_targets[touched[slot]]
                pulled += 0.5 * gap * gap
        # the margin loss and its gradient with respect to the final distributions
        g_mean[:size] = 0.0
        g_cum[:size] = 0.0
        hinge = 0.0
        for row in range(r):
            s1, s2 = row, r + row
            positive = _similarity(mean[s1], var[s1], cum[s1], mean[s2], var[s2], cum[s2], terms[0])
            active = 0
            for side in range(2):
                anchor, negative = (s1, 2 * r + row) if side == 0 else (s2, 3 * r + row)
                value = margin - positive + _similarity(mean[anchor], var[anchor], cum[anchor],
                                                        mean[negative], var[negative], cum[negative],
                                                        terms[1 + side])
                if value > 0.0:  # relu'(0) = 0, as torch
                    hinge += value
                    active += 1
                    _add_similarity_gradient(1.0 / r, terms[1 + side], g_mean[anchor], g_cum[anchor],
                                             g_mean[negative], g_cum[negative])
            if active:
                _add_similarity_gradient(-active / r, terms[0], g_mean[s1], g_cum[s1], g_mean[s2], g_cum[s2])
        parts[k, 0], parts[k, 1], parts[k, 2] = hinge / r, prior_weight * prior / r, anchor_weight * pulled / r
        loss = parts[k, 0] + parts[k, 1] + parts[k, 2]
        losses[k] = loss
        if not finite[:size].all() or not abs(prior) <= 3.4e38 or not math.isfinite(loss):  # as float32
            slot_of[touched[:count]] = -1
            return losses, parts, k
        # backward, then lazy Adam on the touched rows
        for s in range(size):
            here = slice(offset[s], offset[s + 1])
            _backward(slots[here], a, b, inv_a, means[here], variances[here], g_mean[s], g_cum[s],
                      prior_weight / r, buffers, grad_a, grad_b)
        if anchor_weight > 0.0:  # d/dA_w,d of the anchor: weight / r (T_w - t_w) / A_w,d
            for slot in range(count):
                pull = REAL(anchor_weight / r * (log_a_sum[slot] - anchor_targets[touched[slot]]))
                for d in range(dim):
                    grad_a[slot, d] += pull * inv_a[slot, d]
        step = first_step + k + 1
        step_size = lr * math.sqrt(1.0 - beta2 ** step) / (1.0 - beta1 ** step)
        _lazy_adam(scale, scale_avg, scale_avg_sq, grad_a, touched, count, step_size, beta1, beta2, eps)
        _lazy_adam(shift, shift_avg, shift_avg_sq, grad_b, touched, count, step_size, beta1, beta2, eps)
        slot_of[touched[:count]] = -1
        first += size
    return losses, parts, steps


@njit(**_jit)
def pack_scrambled(ids, offsets, sentences, batch_rows, widths, uniforms, probability):
    """(tokens, starts): the tokens of the training ``sentences`` (sentence k: ``ids[offsets[k]:offsets[k + 1]]``)
    one after the other, each in the order :func:`probsent.training.trainer.scramble` gives. They come in
    padded batches of ``batch_rows`` rows and ``widths`` columns; per batch, scramble draws ``rows``
    uniforms (a row is shuffled where its one is below ``probability``), then ``rows x width`` keys
    (a shuffled row's words sorted by the first ``length`` keys of its padded row). ``uniforms`` holds
    every batch's draws in that order (empty when ``probability`` <= 0: nothing is shuffled).
    """
    n = len(sentences)
    starts = np.zeros(n, np.int64)
    total = 0
    for r in range(n):
        starts[r] = total
        total += offsets[sentences[r] + 1] - offsets[sentences[r]]
    tokens = np.empty(total, np.int64)
    row, drawn = 0, 0
    for batch in range(len(batch_rows)):
        rows, width = batch_rows[batch], widths[batch]
        keys = drawn + rows  # this batch's keys follow its row draws
        for k in range(rows):
            first = offsets[sentences[row]]
            length = offsets[sentences[row] + 1] - first
            out = tokens[starts[row]:starts[row] + length]
            if probability > 0 and uniforms[drawn + k] < probability:
                order = np.argsort(uniforms[keys + k * width:keys + k * width + length], kind="mergesort")
                for p in range(length):
                    out[p] = ids[first + order[p]]
            else:
                for p in range(length):
                    out[p] = ids[first + p]
            row += 1
        if probability > 0:
            drawn = keys + rows * width
    return tokens, starts
