"""The full-vocabulary recipe the design changes start from, and how a design round names its
runs: every pair of the shared file, no negative scoring above its partner, entropy terms
started from the words' rarity, validated every ``EVAL_EVERY`` steps."""
from __future__ import annotations

from experiments.plan import Run

EPOCH_STEPS = 12_631  # one epoch of every pair of the shared file at 100 pairs a step
EVAL_EVERY = 1000

BASE = {"model": "wlo", "hardness_cap": 0.0, "rarity_init": 0.3, "max_steps": None,
        "eval_every": EVAL_EVERY}


def design_run(name: str, note: str, **overrides: object) -> Run:
    """The base recipe plus ``overrides``, trained into runs/<name>."""
    return Run(name, "design", {**BASE, **overrides}, note)


def rescaled(name: str, source: str, start_variance: float) -> Run:
    """A copy of the trained run ``source`` (its seed-1 run; seeds 2-3 take its seeds 2-3) written
    with another start variance (``probsent export --start-variance``): no training."""
    return Run(name, "design", {"rescale_of": source, "start_variance": start_variance},
               f"`{source}`'s models written with z_0 ~ N(0, {start_variance:g} I): means x {start_variance ** 0.5:g}, "
               f"variances x {start_variance:g}")
