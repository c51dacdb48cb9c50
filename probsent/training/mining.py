"""Hard negatives by mega-batching (Wieting & Gimpel, 2018).

The sentences of a mega-batch (several mini-batches of pairs) are encoded once without
gradient; every sentence gets as its negative the most similar sentence of the mega-batch
other than itself and its own paraphrase partner.
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from probsent.models.base import Encoding
from probsent.models.similarity import pairwise_similarity


def partners_of_stacked_pairs(num_pairs: int) -> Tensor:
    """Partner index of every sentence when the first sides of ``num_pairs`` pairs are
    stacked above their second sides (row i pairs with row i + num_pairs)."""
    first = torch.arange(num_pairs)
    return torch.cat([first + num_pairs, first])


def _block(encoded: Encoding) -> Callable[[Tensor, int], Tensor]:
    """d(i, j) for a block of rows i and every column j >= ``first``: the similarity training
    uses (:func:`probsent.models.similarity.pairwise_similarity`, the one torch formula)."""
    return lambda rows, first: pairwise_similarity(encoded.index(rows), encoded.index(slice(first, None)))


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
    similarity_block, block = _block(encoded), (256 if encoded.logvar is None else 8)
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
