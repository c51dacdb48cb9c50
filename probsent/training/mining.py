"""Hard negatives by mega-batching (Wieting & Gimpel, 2018).

The sentences of a mega-batch (several mini-batches of pairs) are encoded once without
gradient; every sentence gets as its negative the most similar sentence of the mega-batch
other than itself and its own paraphrase partner.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from probsent.gaussian_constants import LOG_2PI
from probsent.models.base import Encoding
from probsent.models.similarity import paired_similarity, pairwise_similarity


def partners_of_stacked_pairs(num_pairs: int) -> Tensor:
    """Partner index of every sentence when the first sides of ``num_pairs`` pairs are
    stacked above their second sides (row i pairs with row i + num_pairs)."""
    first = torch.arange(num_pairs)
    return torch.cat([first + num_pairs, first])


def _sum_in_order(terms: Tensor, axis: int) -> Tensor:
    """Sum over ``axis`` one slice after the other: every element gets the same order of
    additions wherever it sits (a reduction kernel treats the tail of a row differently),
    so d(i, j) is one value to the last bit wherever it sits in a block, and d(i, j) == d(j, i)
    even on float32 near-ties."""
    total = terms.select(axis, 0).clone()
    for k in range(1, terms.shape[axis]):
        total.add_(terms.select(axis, k))
    return total


def _cosine_block(encoded: Encoding) -> tuple[Callable[[Tensor, int], Tensor], int]:
    unit = F.normalize(encoded.mean, dim=-1)
    return (lambda rows, first: unit[rows] @ unit[first:].T), 256


def _expected_inner_product_block(encoded: Encoding) -> tuple[Callable[[Tensor, int], Tensor], int]:
    """log N(0; mu_i - mu_j, S_i + S_j) for a block of rows i and every j >= ``first``.

    The same quantity as :func:`probsent.gaussian.expected_inner_product` (with its variance
    floor), in the cheaper form with one log and one division per element, laid out
    [rows, dim, N] so the inner loops run over contiguous memory; small row blocks keep the
    intermediate in cache.
    """
    assert encoded.logvar is not None
    mean, var = encoded.mean, encoded.logvar.clamp_min(-80.0).exp()
    mean_t, var_t = mean.T.contiguous(), var.T.contiguous()
    constant = LOG_2PI * mean.shape[1]

    def block(rows: Tensor, first: int) -> Tensor:
        total_var = var[rows, :, None] + var_t[None, :, first:]
        terms = (mean[rows, :, None] - mean_t[None, :, first:]).square_().div_(total_var)
        terms.add_(total_var.log_())
        return _sum_in_order(terms, 1).add_(constant).mul_(-0.5)

    return block, 8


# Issue 34's candidate --similarity-distance pooled: from this many sentences on, on the CPU,
# mined by bound and prune (the same argmax as the full search, ten times faster at 4,000).
PRUNE_FROM = 512
FIRST_TRIES = 16  # exact values per row that set its first threshold


def _pooled_block(encoded: Encoding) -> tuple[Callable[[Tensor, int], Tensor], int]:
    """``--similarity-distance pooled``'s d (:func:`probsent.models.similarity.pairwise_similarity`)
    for a block of rows and every column j >= ``first``, computed in full."""
    return (lambda rows, first: pairwise_similarity(encoded.index(rows), encoded.index(slice(first, None)),
                                                    pooled=True)), 64


def _column_groups(features: Tensor, groups: int, iterations: int = 8) -> list[Tensor]:
    """A few rounds of k-means (deterministic start: evenly spaced in the order of the first
    feature): sentences with similar log-variances and means share a group, so one tangent
    point per group and dimension fits all of them well. Only the speed depends on it."""
    n = len(features)
    centers = features[features[:, 0].argsort()[torch.linspace(0, n - 1, groups).long()]]
    for _ in range(iterations):
        assign = torch.cdist(features, centers).argmin(1)
        counts = torch.bincount(assign, minlength=groups).to(features.dtype)
        sums = torch.zeros_like(centers).index_add_(0, assign, features)
        filled = counts > 0
        centers[filled] = sums[filled] / counts[filled, None]
    assign = torch.cdist(features, centers).argmin(1)
    order = assign.argsort(stable=True)
    sizes = torch.bincount(assign, minlength=groups).tolist()
    return [part for part in order.split(sizes) if len(part)]


def _all_finite(tensor: Tensor) -> bool:
    """Whether every element is finite: the sum is finite only then (an overflowing sum of
    finite elements says no as well, which only costs speed), and one reduction is far
    cheaper than an elementwise test on millions of elements."""
    return bool(tensor.sum().isfinite())


def mine_pooled_pruned(encoded: Encoding, partner: Tensor, ceiling: Tensor | None = None,
                       groups: int = 8) -> Tensor | None:
    """The argmax of ``--similarity-distance pooled``'s d by bound and prune (n for a row with
    no allowed column), or None where the bounds are not finite. With ``ceiling`` (float64, per
    row: ``--hardness-cap``'s), only columns whose d is at most the row's ceiling are allowed.

    d = -1/2 [D log 2 pi + sum_d log t_d + |mu_i - mu_j|^2 / (m_i + m_j)], t_d = v_id + v_jd and
    m = the mean of v over the dimensions. In float64, the quadratic term is computed for every
    pair (one matrix product), and per group of columns (k-means on the features) sum_d log t_d
    is bounded below by its tangent in x_j = log v_jd at the group's centre c_d (convex, as in
    :func:`_upper_bounds`), linear in x_j: one more matrix product. Every column whose bound
    reaches an exact d of its row (the best at its 16 largest bounds, less a margin far above
    float32 rounding) is a candidate, and d is computed exactly for those."""
    mean, logvar = encoded.mean, encoded.logvar
    n, dim = mean.shape
    x = logvar.double().clamp_min(-80.0)
    m64 = mean.double()
    pooled = x.exp().mean(1)
    square = m64.square().sum(1)
    gap = (square[:, None] + square[None, :] - 2.0 * (m64 @ m64.T)).clamp_min_(0.0)
    bounds = gap.div_(pooled[:, None] + pooled[None, :]).add_(LOG_2PI * dim)  # every pair's exact part
    for part in _column_groups(torch.cat([x, m64], 1), groups):
        c = x[part].mean(0)
        slope = torch.sigmoid(c - x)
        offset = (torch.logaddexp(x, c) - slope * c).sum(1, keepdim=True)
        bounds[:, part] += offset + slope @ x[part].T
    bounds.mul_(-0.5)
    if not _all_finite(bounds):
        return None
    everyone = torch.arange(n)
    bounds[everyone, everyone] = float("-inf")  # the sentence itself
    bounds[everyone, partner] = float("-inf")  # its partner
    allowed = ceiling if ceiling is not None else torch.full((n,), float("inf"), dtype=torch.float64)
    threshold = torch.full((n,), float("-inf"), dtype=torch.float64)
    rows, tries = everyone, FIRST_TRIES
    while len(rows):  # a first exact value under the ceiling per row: the best at its largest bounds
        tries = min(tries, n)
        top = bounds[rows].topk(tries, 1, sorted=False)
        exact = paired_similarity(encoded.index(rows.repeat_interleave(tries)),
                                  encoded.index(top.indices.reshape(-1)), pooled=True).double().view(len(rows), tries)
        exact.masked_fill_((top.values == float("-inf")) | (exact > allowed[rows, None]), float("-inf"))
        threshold[rows] = exact.amax(1)
        rows = rows[threshold[rows].isinf() & (tries < n)]  # every tried column above the ceiling: try more
        tries *= 8
    reach = threshold - 1e-4 * (threshold.abs() + 1.0)
    reach.nan_to_num_(neginf=torch.finfo(torch.float64).min)  # no allowed column: every column is a candidate
    flat = torch.from_numpy(np.flatnonzero((bounds >= reach[:, None]).numpy()))
    cand_rows, cand_cols = flat // n, flat % n
    values = paired_similarity(encoded.index(cand_rows), encoded.index(cand_cols), pooled=True)
    values.masked_fill_(values.double() > allowed[cand_rows], float("-inf"))
    best = torch.full((n,), float("-inf"), dtype=values.dtype).scatter_reduce_(0, cand_rows, values, "amax")
    values.masked_fill_(best[cand_rows].isinf(), float("nan"))  # a row with no allowed column finds none
    at_best = values == best[cand_rows]
    found = torch.full((n,), n, dtype=torch.long)
    return found.scatter_reduce_(0, cand_rows[at_best], cand_cols[at_best], "amin")  # ties: lowest index


@torch.no_grad()
def mine_negatives(encoded: Encoding, partner: Tensor, pooled: bool = False) -> Tensor:
    """For every sentence i, the argmax over j not in {i, partner[i]} of d(i, j): cosine for
    vectors, the expected inner product for Gaussians (the similarity training uses; of the
    similarity variances where a model keeps them apart, :meth:`Encoding.for_similarity`). The
    reference search; on the CPU the compiled kernel
    (:func:`probsent.training.fast.mining_kernels.mine_gaussian_negatives`, tested against
    this) mines Gaussians where float32's range suffices. ``pooled``: ``--similarity-distance
    pooled``'s d, by :func:`mine_pooled_pruned` for large mega-batches on the CPU.

    d is symmetric, so only the blocks on and above the diagonal are computed: a block of rows
    R against columns j >= min(R) updates the best of the rows (row maxima) and of the columns
    (column maxima). Candidates reach every row in increasing j and only a strictly larger value
    replaces the best, so ties resolve to the lowest index, as a plain argmax.
    """
    count = encoded.mean.shape[0]
    if count < 3:
        raise ValueError("mining needs at least two pairs")
    encoded = encoded.for_similarity()
    device = encoded.mean.device
    partner = partner.to(device)
    on_cpu = device.type == "cpu"
    if pooled and encoded.logvar is not None and on_cpu and count >= PRUNE_FROM:
        found = mine_pooled_pruned(encoded, partner)
        if found is not None:
            return found
    similarity_block, block = (_cosine_block if encoded.logvar is None else _pooled_block if pooled
                               else _expected_inner_product_block)(encoded)
    best_value = torch.full((count,), float("-inf"), dtype=encoded.mean.dtype, device=device)
    best_index = torch.zeros(count, dtype=torch.long, device=device)
    for first in range(0, count, block if on_cpu else 256):
        last = min(count, first + (block if on_cpu else 256))
        sim = similarity_block(torch.arange(first, last, device=device), first)  # rows first..last-1, columns first..
        sim[:, : last - first].diagonal().fill_(float("-inf"))  # the sentence itself
        mate = partner[first:last] - first
        later = (mate >= 0).nonzero().squeeze(1)  # partners before ``first`` are not columns here
        sim[later, mate[later]] = float("-inf")
        for values, where, offset in ((sim.max(1), slice(first, last), first),  # rows: columns >= first
                                      (sim.max(0), slice(first, count), first)):  # columns: these rows
            value, index = values
            better = value > best_value[where]
            best_value[where] = torch.where(better, value, best_value[where])
            best_index[where] = torch.where(better, index + offset, best_index[where])
    return best_index.cpu()
