"""The margin loss on paraphrase pairs and their mined negatives, with the prior's KL terms.

For a mini-batch of B pairs (s1, s2) with negatives n1 (mined for s1) and n2 (for s2) and a
similarity d (the expected inner product of the Gaussians, or the cosine of vectors):

    L = 1/B sum_pairs [max(0, delta - d(s1, s2) + d(s1, n1)) + max(0, delta - d(s1, s2) + d(s2, n2))]
        + lambda / B sum over the 4B sentences of their KL terms

Arguments: delta is ``--margin``, lambda ``--prior-weight``; the KL terms are those the model's
forward returns (the sum over every prefix of KL(N(mu_i, Sigma_i) || N(0, I)) for WLO).

Reference: Chen & Gimpel, "Learning Probabilistic Sentence Representations from Paraphrases"
(2020): the margin loss over mined negatives, plus the KL prior weighted by lambda.
"""
from __future__ import annotations

import torch
from torch import Tensor

from probsent.models.base import Encoding
from probsent.models.training_similarity import paired_similarity

NAME = "margin"


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
