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
    so d(i, j) is one value to the last bit however it is computed, and the full and the
    pruned search agree even on float32 near-ties."""
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


# From this many sentences on, Gaussians are mined by bound and prune (the same result as
# computing d in full, several times faster on mega-batches of thousands).
PRUNE_FROM = 512
FIRST_TRIES = 16  # exact values per row that set its first threshold


def _pair_similarity(mean: Tensor, var: Tensor, rows: Tensor, cols: Tensor) -> Tensor:
    """d(rows[k], cols[k]) for pairs of sentences, with the same operations in the same order
    as the blocks of :func:`_expected_inner_product_block`, so the same values to the last
    bit. Symmetric to the last bit as well: v_i + v_j and (mu_i - mu_j)^2 do not depend on
    the order."""
    out = torch.empty(len(rows), dtype=mean.dtype)
    constant = LOG_2PI * mean.shape[1]
    step = 1 << 14  # bounded memory for many candidates
    for start in range(0, len(rows), step):
        i, j = rows[start:start + step], cols[start:start + step]
        total_var = var.index_select(0, i).add_(var.index_select(0, j))
        terms = mean.index_select(0, i).sub_(mean.index_select(0, j)).square_().div_(total_var)
        terms.add_(total_var.log_())
        out[start:start + len(i)] = _sum_in_order(terms.T.contiguous(), 0).add_(constant).mul_(-0.5)
    return out


def _symmetric_min_(matrix: Tensor, tile: int = 256) -> Tensor:
    """matrix <- min(matrix, matrix.T) in place, tile by tile (a plain transpose reads the
    whole matrix across cache lines)."""
    n = len(matrix)
    for a in range(0, n, tile):
        for b in range(a, n, tile):
            upper, lower = matrix[a:a + tile, b:b + tile], matrix[b:b + tile, a:a + tile]
            both = torch.minimum(upper, lower.T)
            upper.copy_(both)
            lower.copy_(both.T)
    return matrix


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


def _upper_bounds(mean: Tensor, logvar: Tensor, var: Tensor, sizes: list[int]) -> Tensor:
    """U[j, i] >= d(i, j) (as computed, rounding included) for every i, j, where the
    columns j come in groups of consecutive ``sizes`` (each group fills consecutive rows of U).

    d = -1/2 [D log 2 pi + sum_d log t_d + sum_d u_d^2 / t_d], t_d = v_id + v_jd, u_d = mu_id - mu_jd.
    Two tangents give lower bounds on the bracket that are linear in per-column features, so
    a group of columns takes one matrix product. Per column group and dimension, at a
    centre (c, w) of the group's log-variances and variances:

    - log t = logaddexp(x_i, x_j) is convex in x_j = log v_j: it is at least its tangent at
      x_j = c, logaddexp(x_i, c) + sigmoid(c - x_i) (x_j - c);
    - 1/t is convex in t: 1/t >= 2/t0 - t/t0^2 for t0 = v_i + w, so with u^2 >= 0,
      u^2/t >= (mu_i - mu_j)^2 (alpha_i - beta_i v_j), alpha_i = (v_i + 2w)/t0^2, beta_i = 1/t0^2.

    Both hold for any centre; the centres only make them tight. Rounding is covered by a
    margin of 1024 ulps of the magnitudes involved: sum_k |row_ik| max_j |column_jk| over
    the group for the product and the features, the row terms, and |log t| <= |x_i| + |x_j|
    + log 2 for d's own rounding (its |d|-sized part is added where d is compared).
    """
    n, dim = mean.shape
    x, m, v = logvar, mean, var
    columns = torch.cat([x, m, m * m, v, m * v, m * m * v, x.abs().sum(1, keepdim=True)], 1)
    rel = 1024 * torch.finfo(mean.dtype).eps
    constant = LOG_2PI * dim
    bounds = torch.empty(n, n, dtype=mean.dtype)
    start = 0
    for size in sizes:
        group = slice(start, start + size)
        start += size
        c, w = x[group].mean(0), v[group].mean(0)
        slope = torch.sigmoid(c - x)
        beta = (v + w).square_().reciprocal_()
        alpha = (v + 2 * w).mul_(beta)
        alpha_m = alpha * m
        beta_m = beta * m
        offset = torch.logaddexp(x, c).sub_(slope * c).add_(alpha_m * m)  # involves row i only
        rows = torch.cat([slope, -2 * alpha_m, alpha, -beta_m * m, 2 * beta_m, -beta,
                          torch.full((n, 1), rel, dtype=mean.dtype)], 1)
        column = columns[group]
        margin = rows.abs() @ column.abs().amax(0)
        base = offset.sum(1).add_(constant).mul_(-0.5)
        base += rel * (offset.abs().sum(1) + x.abs().sum(1) + 2 * constant + margin)
        rows[:, :-1] *= -0.5
        torch.addmm(base[None, :], column, rows.T, out=bounds[group])
    return bounds


# Sentences whose features would make float32 bounds' rounding margins useless: variances
# beyond e^{+-20} (features up to e^40) or means beyond 1e3. A few of them are compared
# with every sentence exactly; many of them make every bound float64.
WIDE_LOGVAR, WIDE_MEAN = 20.0, 1e3


def _all_finite(tensor: Tensor) -> bool:
    """Whether every element is finite: the sum is finite only then (an overflowing sum of
    finite elements says no as well, which only costs speed), and one reduction is far
    cheaper than an elementwise test on millions of elements."""
    return bool(tensor.sum().isfinite())


def _pruned_candidates(mean: Tensor, logvar: Tensor, var: Tensor, partner: Tensor, kept: Tensor,
                       bound_dtype: torch.dtype, groups: int) -> tuple[Tensor, Tensor] | None:
    """(rows, columns) among the sentences ``kept`` that may hold each kept row's best
    column among the kept ones: every column whose bound reaches an exact value of its row.
    None where the bounds are not all finite."""
    # work in an order where the column groups are consecutive
    parts = _column_groups(torch.cat([logvar[kept], mean[kept]], 1).to(bound_dtype), groups)
    order = kept[torch.cat(parts)]  # position -> sentence
    k = len(order)
    mean, logvar, var = mean[order], logvar[order], var[order]
    upper = _upper_bounds(mean.to(bound_dtype), logvar.to(bound_dtype), var.to(bound_dtype),
                          [len(p) for p in parts])
    if not _all_finite(upper):  # features beyond any realistic range: compute d in full
        return None
    rows = torch.arange(k)
    place = torch.full((len(partner),), -1)
    place[order] = rows
    mate = place[partner[order]]
    upper.diagonal().fill_(float("-inf"))  # the sentence itself
    upper[rows[mate >= 0], mate[mate >= 0]] = float("-inf")  # its partner, when kept
    # d is symmetric, so both U[i, j] and U[j, i] bound it. A first exact value per row: the
    # best at its few largest bounds; every column whose bound reaches it is a candidate.
    _symmetric_min_(upper)
    tries = min(FIRST_TRIES, k)
    top = upper.topk(tries, 1, sorted=False)
    exact = _pair_similarity(mean, var, rows.repeat_interleave(tries), top.indices.reshape(-1))
    threshold = exact.view(k, tries).masked_fill_(top.values == float("-inf"), float("-inf")).amax(1)
    reach = threshold.to(bound_dtype) - 1024 * torch.finfo(mean.dtype).eps * (2 * threshold.abs() + 1)
    reach.nan_to_num_(neginf=torch.finfo(bound_dtype).min)  # a row with no column: no candidate
    # row-major positions of the candidates; numpy's flat search is ten times faster here
    # than torch's nonzero
    flat = torch.from_numpy(np.flatnonzero((upper >= reach[:, None]).numpy()))
    return order[flat // k], order[flat % k]


def _all_pairs_of(wide: Tensor, partner: Tensor) -> tuple[Tensor, Tensor]:
    """(rows, columns): every allowed pair with a sentence of ``wide`` on either side."""
    n = len(partner)
    others = torch.arange(n).repeat(len(wide))
    rows = torch.cat([wide.repeat_interleave(n), others])
    cols = torch.cat([others, wide.repeat_interleave(n)])
    allowed = (rows != cols) & (partner[rows] != cols)
    return rows[allowed], cols[allowed]


def _mine_gaussian_pruned(mean: Tensor, logvar: Tensor, partner: Tensor, groups: int = 8) -> Tensor | None:
    """The argmax of d by bound and prune (see :func:`mine_negatives`); None where the
    inputs, or the bounds, are not all finite."""
    n = len(mean)
    logvar = logvar.clamp_min(-80.0)  # the variance floor of the blocks
    var = logvar.exp()
    if not (_all_finite(mean) and _all_finite(var)):
        return None
    bound_dtype = mean.dtype
    wide = torch.zeros(n, dtype=torch.bool)
    if mean.dtype != torch.float64:
        wide = (logvar.abs().amax(1) > WIDE_LOGVAR) | (mean.abs().amax(1) > WIDE_MEAN)
        if int(wide.sum()) > n // 16:  # many: keep every feature's rounding small instead
            bound_dtype, wide = torch.float64, torch.zeros_like(wide)
    candidates = _pruned_candidates(mean, logvar, var, partner, (~wide).nonzero().squeeze(1),
                                    bound_dtype, groups)
    if candidates is None:
        return None
    cand_rows, cand_cols = candidates
    if wide.any():  # the few wide sentences: compared with every sentence, exactly
        extra_rows, extra_cols = _all_pairs_of(wide.nonzero().squeeze(1), partner)
        cand_rows, cand_cols = torch.cat([cand_rows, extra_rows]), torch.cat([cand_cols, extra_cols])
    values = _pair_similarity(mean, var, cand_rows, cand_cols)
    best = torch.full((n,), float("-inf"), dtype=mean.dtype).scatter_reduce_(0, cand_rows, values, "amax")
    at_best = values == best[cand_rows]
    found = torch.full((n,), n, dtype=torch.long)
    return found.scatter_reduce_(0, cand_rows[at_best], cand_cols[at_best], "amin")  # ties: lowest index


def _pooled_block(encoded: Encoding) -> tuple[Callable[[Tensor, int], Tensor], int]:
    """``--similarity-distance pooled``'s d (:func:`probsent.models.similarity.pairwise_similarity`)
    for a block of rows and every column j >= ``first``, computed in full."""
    return (lambda rows, first: pairwise_similarity(encoded.index(rows), encoded.index(slice(first, None)),
                                                    pooled=True)), 64


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
def mine_negatives(encoded: Encoding, partner: Tensor, prune: bool | None = None,
                   pooled: bool = False) -> Tensor:
    """For every sentence i, the argmax over j not in {i, partner[i]} of d(i, j): cosine for
    vectors, the expected inner product for Gaussians (the similarity training uses; of the
    similarity variances where a model keeps them apart, and with ``pooled``, the pooled
    distance of ``--similarity-distance pooled``, always computed in full).

    For Gaussians of a large mega-batch (or with ``prune=True``), a bound-and-prune search:
    cheap upper bounds on d from matrix products (see :func:`_upper_bounds`) leave only the
    few columns per row whose bound reaches an exact value of that row, and d is computed
    exactly for those; the result is the same argmax.

    Otherwise d is computed in full; it is symmetric, so only the blocks on and above the
    diagonal are computed: a block of rows R against columns j >= min(R) updates the best of
    the rows (row maxima) and of the columns (column maxima). Candidates reach every row in
    increasing j and only a strictly larger value replaces the best, so ties resolve to the
    lowest index, as a plain argmax.
    """
    count = encoded.mean.shape[0]
    if count < 3:
        raise ValueError("mining needs at least two pairs")
    encoded = encoded.for_similarity()
    device = encoded.mean.device
    partner = partner.to(device)
    on_cpu = device.type == "cpu"  # the pruned search is for the CPU; a GPU computes d in full
    if encoded.logvar is not None and on_cpu and (prune if prune is not None else count >= PRUNE_FROM):
        found = (mine_pooled_pruned(encoded, partner) if pooled
                 else _mine_gaussian_pruned(encoded.mean, encoded.logvar, partner))
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
