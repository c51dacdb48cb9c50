"""Hard negatives by mega-batching (Wieting & Gimpel, 2018).

The sentences of a mega-batch (several mini-batches of pairs) are encoded once without
gradient; every sentence gets as its negative the most similar sentence of the mega-batch
other than itself and its own paraphrase partner.
"""
from __future__ import annotations

import torch
from torch import Tensor

from probsent.models.base import Encoding
from probsent.models.training_similarity import pairwise_similarity


def partners_of_stacked_pairs(num_pairs: int) -> Tensor:
    """Partner index of every sentence when the first sides of ``num_pairs`` pairs are
    stacked above their second sides (row i pairs with row i + num_pairs)."""
    first = torch.arange(num_pairs)
    return torch.cat([first + num_pairs, first])


@torch.no_grad()
def mine_negatives(encoded: Encoding, partner: Tensor) -> Tensor:
    """For every sentence i, the argmax over j not in {i, partner[i]} of d(i, j), the similarity
    training uses: the reference search (on the CPU, the compiled kernel
    :func:`probsent.training.fast.mining_kernels.mine_gaussian_negatives`, tested against this,
    mines Gaussians where float32's range suffices).

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
    block = 8 if encoded.logvar is not None and device.type == "cpu" else 256
    best_value = torch.full((count,), float("-inf"), dtype=encoded.mean.dtype, device=device)
    best_index = torch.zeros(count, dtype=torch.long, device=device)
    for first in range(0, count, block):
        last = min(count, first + block)
        # rows first..last-1 against columns first..
        sim = pairwise_similarity(encoded.index(torch.arange(first, last, device=device)),
                                  encoded.index(slice(first, None)))
        sim[:, : last - first].diagonal().fill_(float("-inf"))  # the sentence itself
        mate = partner[first:last] - first
        later = (mate >= 0).nonzero().squeeze(1)  # partners before ``first`` are not columns here
        sim[later, mate[later]] = float("-inf")
        # the rows' maxima over columns >= first, then the columns' maxima over these rows
        for (value, index), where in ((sim.max(1), slice(first, last)), (sim.max(0), slice(first, count))):
            better = value > best_value[where]
            best_value[where] = torch.where(better, value, best_value[where])
            best_index[where] = torch.where(better, index + first, best_index[where])
    return best_index.cpu()
