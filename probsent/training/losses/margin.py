"""The margin loss on paraphrase pairs and their mined negatives (part ``margin``).

For a mini-batch of B pairs (s1, s2) with negatives n1 (mined for s1) and n2 (for s2) and a
similarity d (the expected inner product of the Gaussians, or the cosine of vectors):

    L = 1/B sum_pairs [max(0, delta - d(s1, s2) + d(s1, n1)) + max(0, delta - d(s1, s2) + d(s2, n2))]

Arguments: delta is ``--margin`` (default: the model's ``default_margin``).

Reference: Chen & Gimpel, "Learning Probabilistic Sentence Representations from Paraphrases"
(2020), and Wieting & Gimpel (2018) for the mined negatives.
"""
from __future__ import annotations

import torch
from torch import Tensor

from probsent.models.base import Encoding
from probsent.models.training_similarity import paired_similarity
from probsent.training.losses.base import Loss, LossSetup, TrainingStep, register_loss


def margin_loss(s1: Encoding, s2: Encoding, n1: Encoding, n2: Encoding, margin: float) -> Tensor:
    """Per pair: max(0, margin - d(s1,s2) + d(s1,n1)) + max(0, margin - d(s1,s2) + d(s2,n2))."""
    positive = paired_similarity(s1, s2)
    return (torch.relu(margin - positive + paired_similarity(s1, n1))
            + torch.relu(margin - positive + paired_similarity(s2, n2)))


@register_loss
class MarginLoss(Loss):
    """L above, the mean over the step's pairs."""

    name = "margin"

    def __init__(self, margin: float) -> None:
        self.margin = margin

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "MarginLoss":
        margin = setup.config.margin
        return cls(setup.encoder.default_margin if margin is None else margin)

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        return {"margin": margin_loss(*step.sides(), self.margin).mean()}
