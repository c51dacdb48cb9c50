"""Hard negatives by mega-batching (Wieting & Gimpel, 2018).

The sentences of a mega-batch (several mini-batches of pairs) are encoded once without
gradient; every sentence gets as its negative the most similar sentence of the mega-batch
other than itself and its own paraphrase partner.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from probsent.gaussian_constants import LOG_2PI
from probsent.models.base import Encoding


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


@torch.no_grad()
def mine_negatives(encoded: Encoding, partner: Tensor) -> Tensor:
    """For every sentence i, the argmax over j not in {i, partner[i]} of d(i, j): cosine for
    vectors, the expected inner product for Gaussians (the similarity training uses). The
    reference search; on the CPU the compiled kernel
    (:func:`probsent.training.fast.mining_kernels.mine_gaussian_negatives`, tested against
    this) mines Gaussians where float32's range suffices.

    d is symmetric, so only the blocks on and above the diagonal are computed: a block of rows
    R against columns j >= min(R) updates the best of the rows (row maxima) and of the columns
    (column maxima). Candidates reach every row in increasing j and only a strictly larger value
    replaces the best, so ties resolve to the lowest index, as a plain argmax.
    """
    count = encoded.mean.shape[0]
    if count < 3:
        raise ValueError("mining needs at least two pairs")
    device = encoded.mean.device
    partner = partner.to(device)
    on_cpu = device.type == "cpu"
    similarity_block, block = (_cosine_block if encoded.logvar is None
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
