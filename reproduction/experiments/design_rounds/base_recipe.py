"""The recipes the design changes start from, and how a design round names its runs.

``BASE``, the ship rule's rounds' start: the full-vocabulary recipe, every pair of the shared
file, no negative scoring above its partner, entropy terms started from the words' rarity,
validated every ``EVAL_EVERY`` steps.

``SHIPPED_RECIPE``, issue 34's rounds' start: every candidate is trained as the shipped recipe
was (round 3's winner: every pair, one epoch, ``--hardness-cap 0 --rarity-init 0.3
--rarity-anchor 1.0``, validated every 1,000 steps, its STS 2017-selected ``best/``) with one
change, by the torch engine (the compiled engine trains neither change of round A).
"""
from __future__ import annotations

from reproduction.experiments.plan import Run

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


SHIPPED_RECIPE = {**BASE, "rarity_anchor": 1.0, "engine": "torch"}  # round 3's winner, by the torch engine


def shipped_recipe_run(name: str, note: str, **change: object) -> Run:
    """The shipped recipe plus one ``change`` (issue 34's rounds), trained into runs/<name>."""
    return Run(name, "representation", {**SHIPPED_RECIPE, **change}, note)
