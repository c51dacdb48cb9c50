"""``--rarity-anchor``: a penalty that keeps each word's entropy term near its rarity target (part ``rarity_anchor``).

    R = w / B sum_{w in the step's distinct words} 1/2 (T_w - t_w)^2

T_w = sum_d log|A_w,d| is the word's entropy term, w the ``--rarity-anchor`` weight, B the pairs of
the step and t_w the term ``--rarity-init`` starts the word at (:func:`rarity_anchor_targets`), read
from the words' log training counts.
Applies with ``--rarity-anchor`` above 0, to a model with per-word entropy terms.

Reference: this project's recipe study (reproduction/docs/EXPERIMENTS.md); not in the paper.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from probsent.gaussian import log_abs_scale
from probsent.models import with_word_entropy_terms
from probsent.training.losses.base import Loss, LossSetup, TrainingStep, register_loss


def rarity_terms(counts: np.ndarray, weight: float) -> np.ndarray:
    """``--rarity-init``'s shift of each word's entropy term: ``weight`` x (log training count -
    the average token's), so a typical token adds nothing, a frequent word makes a sentence more
    general and a rare one more specific; the average token is weighted by the training counts."""
    log_counts = np.log(np.maximum(counts, 1).astype(np.float64))
    average = float(np.sum(counts * log_counts) / max(1, int(np.sum(counts))))
    return (weight * (log_counts - average)).astype(np.float32)


def rarity_anchor_targets(counts: np.ndarray, rarity_init: float, dim: int, scale_init_mean: float) -> np.ndarray:
    """t_w of every word (float64): the term ``--rarity-init`` starts it at, less the
    initialization noise: dim x log|scale_init_mean| plus its rarity term."""
    start = dim * float(log_abs_scale(np.float64(scale_init_mean)))
    return rarity_terms(counts, rarity_init).astype(np.float64) + start


@register_loss
class RarityAnchor(Loss):
    """R above; ``targets`` holds t_w of every vocabulary word."""

    name = "rarity_anchor"

    def __init__(self, weight: float, targets: np.ndarray) -> None:
        self.weight = weight
        self.targets = targets

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "RarityAnchor | None":
        config = setup.config
        if not config.rarity_anchor:
            return None
        with_word_entropy_terms(setup.encoder, "--rarity-anchor")  # refused here for a model without terms
        return cls(config.rarity_anchor, rarity_anchor_targets(setup.word_counts, config.rarity_init, config.dim,
                                                               config.scale_init_mean))

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        terms = with_word_entropy_terms(step.encoder, "--rarity-anchor").word_entropy_terms(step.words)
        targets = torch.from_numpy(self.targets).to(terms)[step.words]
        return {"rarity_anchor": self.weight * 0.5 * ((terms - targets) ** 2).sum() / step.pairs}
