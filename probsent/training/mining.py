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

from probsent.gaussian import LOG_2PI
from probsent.models.base import Encoding


def partners_of_stacked_pairs(num_pairs: int) -> Tensor:
    """Partner index of every sentence when the first sides of ``num_pairs`` pairs are
    stacked above their second sides (row i pairs with row i + num_pairs)."""
    first = torch.arange(num_pairs)
    return torch.cat([first + num_pairs, first])


def _cosine_rows(encoded: Encoding) -> tuple[Callable[[Tensor], Tensor], int]:
    unit = F.normalize(encoded.mean, dim=-1)
    return (lambda rows: unit[rows] @ unit.T), 128


def _expected_inner_product_rows(encoded: Encoding) -> tuple[Callable[[Tensor], Tensor], int]:
    """log N(0; mu_i - mu_j, S_i + S_j) for a block of rows i and every j.

    The same quantity as :func:`probsent.gaussian.expected_inner_product`, in the cheaper form
    with one log and one division per element, laid out [rows, dim, N] so the inner loops run
    over contiguous memory; small row blocks keep the intermediate in cache.
    """
    assert encoded.logvar is not None
    mean, var = encoded.mean, encoded.logvar.clamp_min(-80.0).exp()  # the floor of d's formula
    mean_t, var_t = mean.T.contiguous(), var.T.contiguous()
    constant = LOG_2PI * mean.shape[1]

    def block(rows: Tensor) -> Tensor:
        total_var = var[rows, :, None] + var_t[None]
        terms = (mean[rows, :, None] - mean_t[None]).square_().div_(total_var)
        terms.add_(total_var.log_())
        return terms.sum(1).add_(constant).mul_(-0.5)

    return block, 8


@torch.no_grad()
def mine_negatives(encoded: Encoding, partner: Tensor) -> Tensor:
    """For every sentence i, the argmax over j not in {i, partner[i]} of d(i, j): cosine for
    vectors, the expected inner product for Gaussians (the similarity training uses)."""
    count = encoded.mean.shape[0]
    if count < 3:
        raise ValueError("mining needs at least two pairs")
    similarity_rows, block = (_cosine_rows if encoded.logvar is None
                              else _expected_inner_product_rows)(encoded)
    negative = torch.empty(count, dtype=torch.long)
    for start in range(0, count, block):
        rows = torch.arange(start, min(count, start + block))
        sim = similarity_rows(rows)
        local = torch.arange(len(rows))
        sim[local, rows] = float("-inf")
        sim[local, partner[rows]] = float("-inf")
        negative[rows] = sim.argmax(1)
    return negative
