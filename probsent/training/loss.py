"""The margin loss on paraphrase pairs and their mined negatives."""
from __future__ import annotations

import torch
from torch import Tensor

from probsent.models.base import Encoding
from probsent.models.similarity import paired_similarity


def margin_loss(s1: Encoding, s2: Encoding, n1: Encoding, n2: Encoding, margin: float) -> Tensor:
    """Per pair: max(0, margin - d(s1,s2) + d(s1,n1)) + max(0, margin - d(s1,s2) + d(s2,n2))."""
    positive = paired_similarity(s1, s2)
    return (torch.relu(margin - positive + paired_similarity(s1, n1))
            + torch.relu(margin - positive + paired_similarity(s2, n2)))


def probabilistic_batch_loss(out: Encoding, batch: int, margin: float,
                             prior_weight: float) -> tuple[Tensor, Tensor]:
    """The two parts of a probabilistic model's loss on one mini-batch, ``out`` holding the
    encodings of s1, s2, n1 and n2 (``batch`` rows each, in that order, with their KL terms):
    the mean margin loss, and lambda times the KL terms summed over the four sides, per pair."""
    assert out.kl is not None
    s1, s2, n1, n2 = (out.index(slice(i * batch, (i + 1) * batch)) for i in range(4))
    return margin_loss(s1, s2, n1, n2, margin).mean(), prior_weight * out.kl.sum() / batch


def rarity_anchor_penalty(terms: Tensor, targets: Tensor, weight: float, batch: int) -> Tensor:
    """``--rarity-anchor``: weight / batch x sum_w 1/2 (T_w - t_w)^2 over the distinct words of a
    step, ``terms`` their entropy terms T_w and ``targets`` the terms t_w they are pulled toward."""
    return weight * 0.5 * ((terms - targets) ** 2).sum() / batch
