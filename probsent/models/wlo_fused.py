"""The fast path of WLO's training forward (with the prior on every prefix): the same numbers
as :meth:`probsent.models.wlo.WLO.trajectory` plus ``kl_to_standard_normal``, in fewer
operations, with a hand-written backward (:class:`_FinalAndPrior`); and a training step's
batches regrouped into groups of rows cut for speed. ``tests/test_wlo.py`` checks it against
the reference (``models/wlo.py``) to the last bit, values and gradients.

It knows WLO's word tables, not the model: :class:`probsent.models.wlo.WLO` calls it (where it
starts from N(0, I)) with its tables A (``scale``) and B (``shift``), and this module imports
nothing of ``wlo.py``. What it gains: docs/PERFORMANCE.md (``benchmarks/bench_wlo_fused.py``).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.autograd.function import once_differentiable

from probsent.gaussian import SCALE_FLOOR, log_abs_scale
from probsent.models.base import Encoding, lookup_real, padding_mask

# Below this bound on |log(A_1 ... A_i)| the mean is computed from the products themselves;
# above it, in log space (and the fused path is not taken).
DIRECT_RANGE = 30.0
# What a group of rows costs beyond its padded cells, in cells (rows x positions), when
# training's batches are regrouped (see fused_encode_batches): measured, it only sets the speed.
GROUP_OVERHEAD = 300


def fused_forward_with_prior(scale: nn.Embedding, shift: nn.Embedding, ids: Tensor,
                             lengths: Tensor) -> Encoding | None:
    """A WLO's ``forward(ids, lengths, with_kl=True)`` from N(0, I) (the paper's prior, on the
    whole distribution) with word tables ``scale`` (A) and ``shift`` (B), in one fused step, or
    None where a sentence leaves the direct range (the reference path then runs)."""
    if not ids.shape[1]:
        return None
    mask = padding_mask(ids, lengths)
    a = lookup_real(scale, ids, mask, 1.0)
    with torch.no_grad():
        cum_log = log_abs_scale(a).cumsum(1)
    if float(cum_log.abs().max()) > DIRECT_RANGE:
        return None
    b = lookup_real(shift, ids, mask, 0.0)
    mean, logvar, kl = _FinalAndPrior.apply(a, b, cum_log, mask)
    return Encoding(mean, logvar, kl.sum(1))


def fused_encode_batches(scale: nn.Embedding, shift: nn.Embedding,
                         batches: list[tuple[Tensor, Tensor]]) -> list[Encoding] | None:
    """A WLO's encodings from N(0, I) (word tables ``scale`` and ``shift``) with the paper's prior
    (training; on the whole distribution): batches whose rows are sorted by length, as
    :func:`probsent.models.batching.encode_by_length` makes them, are computed in groups of rows
    cut for speed (little padding, tensors that fit in cache) instead of batch by batch
    (on the CPU; elsewhere batch by batch).

    Every result is the same to the last bit as the reference's on each batch: a row's
    values do not depend on the other rows or on its padding (A = 1, B = 0 change
    nothing), the word tables are looked up batch by batch as the reference does (the same
    sparse gradients, accumulated in the same order), each KL is summed over its own
    batch's width, and a batch beyond the direct range takes the reference's path.

    Returns None where it does not apply (the caller then encodes batch by batch).
    """
    lengths = torch.cat([rows for _, rows in batches]) if batches else torch.zeros(0, dtype=torch.long)
    if (not len(lengths) or lengths.device.type != "cpu"
            or any(ids.shape[1] == 0 for ids, _ in batches)
            or bool((lengths.diff() < 0).any())):
        return None
    groups, largest = _regrouped(scale, shift, batches, lengths)
    sizes = [len(rows) for _, rows in batches]
    if not all(float(top.max()) <= DIRECT_RANGE for top in largest.split(sizes)):
        return None  # as the reference routes each batch
    outputs = [_FinalAndPrior.apply(*group) for group in groups]
    mean = torch.cat([out[0] for out in outputs]).split(sizes)
    logvar = torch.cat([out[1] for out in outputs]).split(sizes)
    # per-position KL terms, zero beyond each row's length, summed over the batch's width
    # (a sum's rounding depends on how many terms it has)
    width = max(ids.shape[1] for ids, _ in batches)
    kl = torch.cat([F.pad(out[2], (0, width - out[2].shape[1])) for out in outputs]).split(sizes)
    return [Encoding(m, v, k[:, :ids.shape[1]].sum(1))
            for m, v, k, (ids, _) in zip(mean, logvar, kl, batches)]


def _regrouped(scale_table: nn.Embedding, shift_table: nn.Embedding, batches: list[tuple[Tensor, Tensor]],
               lengths: Tensor) -> tuple[list[tuple], Tensor]:
    """_FinalAndPrior's inputs for groups of consecutive rows of ``batches`` (``lengths``:
    all their rows' lengths, sorted), and every row's largest |S_i|."""
    real = [padding_mask(ids, rows) for ids, rows in batches]
    scale = torch.cat([scale_table(ids[mask]) for (ids, _), mask in zip(batches, real)])
    shift = torch.cat([shift_table(ids[mask]) for (ids, _), mask in zip(batches, real)])
    # where each row's batch had padding after it (see _FinalAndPrior's inject)
    padded = np.concatenate([rows.numpy() < ids.shape[1] for ids, rows in batches])
    counts = lengths.numpy()
    bounds = _split_sorted(counts, GROUP_OVERHEAD)
    words = np.add.reduceat(counts, bounds[:-1]).tolist()  # tokens per group
    groups, largest = [], []
    for first, end, scale_words, shift_words in zip(bounds[:-1], bounds[1:], scale.split(words),
                                                    shift.split(words)):
        rows, row_padded = counts[first:end], padded[first:end]
        width = max(int(rows[-1]) + int(row_padded[rows == rows[-1]].any()), 1)  # a padding slot
        mask = padding_mask(torch.empty(0, width), lengths[first:end])
        inject = torch.from_numpy(np.where(row_padded, width - 1, rows - 1))
        a = torch.full((*mask.shape, scale_table.embedding_dim), 1.0, dtype=scale.dtype)
        a[mask] = scale_words  # as lookup_real: padding A = 1, B = 0
        b = torch.zeros_like(a)
        b[mask] = shift_words
        with torch.no_grad():
            cum_log = log_abs_scale(a).cumsum(1)
        groups.append((a, b, cum_log, mask, inject))
        largest.append(cum_log.abs().amax((1, 2)))
    return groups, torch.cat(largest)


class _FinalAndPrior(torch.autograd.Function):
    """(final mean, final log-variance, KL to N(0, I) at every position, 0 at padding) in the
    direct range, with a hand-written backward: the same values as
    ``WLO.trajectory`` + ``kl_to_standard_normal``, in fewer (and cheaper) operations than
    autograd records for them.

    Backward, with c_i = dL/dmu_i from the outputs directly (the KL term g_kl mu_i, and g_mean
    at the last position, which padding carries from the last word), the adjoint of
    mu_i = A_i (mu_{i-1} + B_i) is lambda_i = c_i + A_{i+1} lambda_{i+1}, in closed form
    lambda_i = (1 / P_i) sum_{k>=i} P_k c_k (one reverse cumulative sum). Then
    dL/dB_i = A_i lambda_i and dL/dA_i = lambda_i (mu_{i-1} + B_i) + (1 / A_i) sum_{k>=i} h_k,
    where h_k = dL/dS_k = g_kl (sigma_k^2 - 1) (+ 2 g_logvar at the last position).

    ``inject`` (default: the last position) says per row where g_mean and g_logvar join the
    reverse sums: at a padding position they are added to the sums on their own; at the last
    word, to that word's term first. Both are exact adjoints, but they round differently, so
    a row regrouped into another batch keeps the place its own batch gave it.
    """

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor, cum_log: Tensor, mask: Tensor,  # type: ignore[override]
                inject: Tensor | None = None):
        products = a.cumprod(1)  # P_i, as in WLO._mean_by_products
        previous = torch.cat([torch.ones_like(products[:, :1]), products[:, :-1]], 1)
        mean = products * (b / previous).cumsum(1)
        logvar = 2.0 * cum_log
        var = logvar.exp()
        kl = 0.5 * (var + mean.square() - 1.0 - logvar).sum(-1) * mask  # as kl_to_standard_normal
        ctx.save_for_backward(a, b, products, mean, var, mask)
        ctx.inject = (slice(None), -1) if inject is None else (torch.arange(len(a)), inject)
        return mean[:, -1], logvar[:, -1], kl

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_mean: Tensor | None, grad_logvar: Tensor | None, grad_kl: Tensor | None):  # type: ignore[override]
        a, b, products, mean, var, mask = ctx.saved_tensors
        weight = (grad_kl * mask if grad_kl is not None else torch.zeros_like(mask, dtype=a.dtype))[..., None]
        direct = weight * mean  # dL/dmu_i through the prior
        if grad_mean is not None:
            direct[ctx.inject] += grad_mean
        adjoint = _reverse_cumsum(products * direct).div_(products)  # lambda_i
        grad_b = a * adjoint
        before = torch.cat([torch.zeros_like(mean[:, :1]), mean[:, :-1]], 1)  # mu_{i-1}
        grad_a = adjoint.mul_(before.add_(b))
        entropy_side = weight * (var - 1.0)  # dL/dS_i through the prior
        if grad_logvar is not None:
            entropy_side[ctx.inject] += 2.0 * grad_logvar
        per_word = _reverse_cumsum(entropy_side)  # dL/d log|A_i|
        # d log|A| / dA = 1/A; below the floor (|A| < 1e-30) the forward has no gradient
        if float(a.abs().amin()) >= SCALE_FLOOR:  # the usual case: no word below the clamp
            grad_a += per_word.div_(a)
        else:
            grad_a += torch.where(a.abs() >= SCALE_FLOOR, per_word / a, 0.0)
        return grad_a, grad_b, None, None, None


def _reverse_cumsum(x: Tensor) -> Tensor:
    """sum_{k>=i} x_k along dimension 1."""
    return x.flip(1).cumsum(1).flip(1)


def _split_sorted(lengths: np.ndarray, overhead: float) -> list[int]:
    """Boundaries 0 = b_0 < b_1 < ... < b_m = len(lengths) that cut rows sorted by length
    into groups of consecutive rows at the least total cost, a group costing ``overhead``
    plus its padded cells (rows x its longest length). Groups end only where the length
    changes; a dynamic programme over those points."""
    n = len(lengths)
    if n == 0:
        return [0]
    ends = np.append(np.flatnonzero(np.diff(lengths)) + 1, n)
    starts = np.append(0, ends)  # candidate group starts, increasing
    cost = np.zeros(len(starts))  # cost[k]: best cost of the rows before starts[k]
    previous = np.zeros(len(starts), dtype=np.int64)
    for k in range(1, len(starts)):
        end = starts[k]
        options = cost[:k] + overhead + (end - starts[:k]) * max(int(lengths[end - 1]), 1)
        previous[k] = int(np.argmin(options))
        cost[k] = options[previous[k]]
    bounds, k = [n], len(starts) - 1
    while k > 0:
        k = int(previous[k])
        bounds.append(int(starts[k]))
    return bounds[::-1]
