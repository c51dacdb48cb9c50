"""``--rarity-anchor``: a penalty that keeps each word's entropy term near its rarity target.

    R = w / B sum_{w in the step's distinct words} 1/2 (T_w - t_w)^2

T_w = sum_d log|A_w,d| is the word's entropy term, w the ``--rarity-anchor`` weight, B the pairs of
the step and t_w the term ``--rarity-init`` starts the word at (:func:`rarity_anchor_targets`).
Added to the margin loss (:mod:`probsent.training.losses.margin`).

Reference: this project's recipe study (docs/EXPERIMENTS.md); not in the paper.
"""
from __future__ import annotations

import numpy as np
from torch import Tensor

from probsent.gaussian import log_abs_scale

NAME = "rarity-anchor"


def rarity_terms(counts: np.ndarray, weight: float) -> np.ndarray:
    """``--rarity-init``'s shift of each word's entropy term: ``weight`` x (log count - the average
    token's log count), so a typical token adds nothing, a frequent word makes a sentence more
    general and a rare one more specific."""
    log_counts = np.log(np.maximum(counts, 1).astype(np.float64))
    average = float(np.sum(counts * log_counts) / max(1, int(np.sum(counts))))
    return (weight * (log_counts - average)).astype(np.float32)


def rarity_anchor_targets(counts: np.ndarray, rarity_init: float, dim: int, scale_init_mean: float) -> np.ndarray:
    """t_w of every word (float64): the term ``--rarity-init`` starts it at, less the
    initialization noise: dim x log|scale_init_mean| plus its rarity term."""
    start = dim * float(log_abs_scale(np.float64(scale_init_mean)))
    return rarity_terms(counts, rarity_init).astype(np.float64) + start


def rarity_anchor_penalty(terms: Tensor, targets: Tensor, weight: float, batch: int) -> Tensor:
    """R for the distinct words of a step: ``terms`` their T_w, ``targets`` their t_w."""
    return weight * 0.5 * ((terms - targets) ** 2).sum() / batch
