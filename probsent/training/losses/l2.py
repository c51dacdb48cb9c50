"""L2 regularization of deterministic models (part ``l2``).

    R = w sum of the squared weights

where a word table counts only the rows of the step's distinct words (lazy L2, so that its
gradient stays sparse) and every other weight counts in full
(:meth:`probsent.models.base.SentenceEncoder.l2_penalty`). Arguments: w is ``--l2-weight``.
Applies to deterministic models only.

Reference: the deterministic baselines of Chen & Gimpel (2020) (word averaging, LSTMs); a plain
L2 toward zero is this project's choice of their regularizer.
"""
from __future__ import annotations

from torch import Tensor

from probsent.training.losses.base import Loss, LossSetup, TrainingStep, register_loss


@register_loss
class L2Penalty(Loss):
    """R above."""

    name = "l2"

    def __init__(self, weight: float) -> None:
        self.weight = weight

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "L2Penalty | None":
        return None if setup.encoder.probabilistic else cls(setup.config.l2_weight)

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        return {"l2": self.weight * step.encoder.l2_penalty(step.words)}
