"""``--rarity-anchor``: a penalty that keeps each word's entropy term near its rarity target.

    R = w / B sum_{w in the step's distinct words} 1/2 (T_w - t_w)^2

T_w = sum_d log|A_w,d| is the word's entropy term, t_w its ``--rarity-init`` start (weight x
(log count - the average token's log count)), w the ``--rarity-anchor`` weight and B the pairs
of the step. Added to the margin loss (:mod:`probsent.training.losses.margin`).

Reference: this project's recipe study (docs/EXPERIMENTS.md); not in the paper.
"""
from __future__ import annotations

from torch import Tensor

NAME = "rarity-anchor"


def rarity_anchor_penalty(terms: Tensor, targets: Tensor, weight: float, batch: int) -> Tensor:
    """``--rarity-anchor``: weight / batch x sum_w 1/2 (T_w - t_w)^2 over the distinct words of a
    step, ``terms`` their entropy terms T_w and ``targets`` the terms t_w they are pulled toward."""
    return weight * 0.5 * ((terms - targets) ** 2).sum() / batch
