"""The KL prior of probabilistic models (part ``prior``).

For a mini-batch of B pairs, over its 4B sentences (s1, s2, n1, n2):

    P = lambda / B sum_sentences KL terms

the KL terms being those the model's forward returns with ``with_kl`` (for WLO the sum over
every prefix of KL(N(mu_i, Sigma_i) || N(0, I))). Arguments: lambda is ``--prior-weight``.
Applies to probabilistic models only.

Reference: Chen & Gimpel, "Learning Probabilistic Sentence Representations from Paraphrases"
(2020): the margin loss plus the KL prior weighted by lambda.
"""
from __future__ import annotations

from torch import Tensor

from probsent.training.losses.base import Loss, LossSetup, TrainingStep, register_loss


@register_loss
class KLPrior(Loss):
    """P above."""

    name = "prior"
    needs_kl = True

    def __init__(self, weight: float) -> None:
        self.weight = weight

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "KLPrior | None":
        return cls(setup.config.prior_weight) if setup.encoder.probabilistic else None

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        assert step.encoded.kl is not None, "the encodings need their KL terms (needs_kl)"
        return {"prior": self.weight * step.encoded.kl.sum() / step.pairs}
