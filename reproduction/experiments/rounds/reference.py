"""The reference every candidate of the recipe study changes: the paper's WLO recipe for one
epoch of the main mixture, validated every ``EVAL_EVERY`` steps; and the shipping margin."""
from __future__ import annotations

from pathlib import Path

from reproduction.experiments.paths import RESULTS_DIR
from reproduction.experiments.plan import MAIN_WLO, MIXTURE, Run

EVAL_EVERY = 400
SHIP_MARGIN = 0.5  # round 3's rule 6: news-train accuracy points a new model must gain to be shipped


def recipe(name: str, note: str, **overrides: object) -> Run:
    """One epoch of the main mixture with the paper's WLO recipe, plus ``overrides``."""
    return Run(name, "recipe", {"model": "wlo", **MIXTURE, **MAIN_WLO, "max_steps": None,
                                "eval_every": EVAL_EVERY, **overrides}, note)


def records(number: int) -> Path:
    """Where round ``number`` writes its records: results/recipe/ (round 1), results/recipe<N>/."""
    return RESULTS_DIR / ("recipe" if number == 1 else f"recipe{number}")


REFERENCE = recipe("r11-reference", "the paper's recipe: one epoch, lambda = 1e-4")
