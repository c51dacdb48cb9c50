"""Recipe round 5: rounds 3-4's two best-STS recipes over three epochs."""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_4
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

ROUND = RecipeRound(
    5, "The recipe study, round 5: the best-STS recipes over three epochs",
    "training longer, the one cause left untested for the best-STS recipe",
    REFERENCE, {
        "longer_training": [
            recipe("r15-cap0-rarity0.3-epoch3", "hardness cap 0, rarity init 0.3, three epochs",
                   hardness_cap=0.0, rarity_init=0.3, epochs=3),
            recipe("r15-cap0-rarity0.3-lambda1e-3-epoch3", "hardness cap 0, rarity init 0.3, prior weight 1e-3, "
                   "three epochs", hardness_cap=0.0, rarity_init=0.3, prior_weight="1e-3", epochs=3)],
    }, records(5), previous=round_4.ROUND, ship_margin=SHIP_MARGIN)
