"""Why a model trained from scratch scores around -69 where the shipped model scores around +39.

Training starts every sentence at the paper's z_0 ~ N(0, I); the shipped WLO was written by
``probsent export --start-variance S`` with S = 1/64, which multiplies every variance by S (and
every mean by sqrt(S)). Minus the entropy, 1/2 sum_d log(1 / (2 pi e var_d)), then grows by the
same amount for every sentence: dim / 2 x log(1 / S), 25 x log 64 = 104.0 nats for dim 50. Rankings,
percentiles and P(specific) do not change; scores of two models are comparable only in one unit.
"""
from __future__ import annotations

import math

from probsent.model_directory import DEFAULT_MODEL, read_config


def shipped_start_variance() -> float:
    """The start variance the shipped model was written with (its config.json)."""
    return float(read_config(DEFAULT_MODEL)["model"]["start_variance"])


def unit_shift(dim: int, start_variance: float) -> float:
    """How much every score (minus the entropy, nats) of a WLO trained with z_0 ~ N(0, I) grows
    when it is written with z_0 ~ N(0, start_variance I): dim / 2 x log(1 / start_variance)."""
    return dim / 2 * math.log(1.0 / start_variance)


def unit_note(model_type: str, dim: int) -> str:
    """The clause ``train``'s last line adds for a WLO: its scores' unit against the shipped model's."""
    if model_type != "wlo":
        return ""
    start = shipped_start_variance()
    return (f" (its scores are in training's unit, z_0 ~ N(0, I): the shipped model was written with "
            f"--start-variance {start:g}, which adds {unit_shift(dim, start):.1f} to every score of a "
            f"{dim}-dimensional model and changes no ranking; `probsent export --start-variance {start:g}` "
            f"writes this one in that unit; docs/TRAINING.md)")
