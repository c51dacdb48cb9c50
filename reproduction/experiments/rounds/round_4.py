"""Recipe round 4: the paper's prior on top of the rarity initialization (round 3's best-STS run)."""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_3
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

ROUND = RecipeRound(
    4, "The recipe study, round 4: the prior on top of the rarity initialization",
    "the prior makes frequent words general while the rarity initialization keeps rare words specific",
    REFERENCE, {
        "prior_with_rarity_init": [
            recipe(f"r14-cap0-rarity0.3-lambda{value}", f"hardness cap 0, rarity init 0.3, prior weight {value}",
                   hardness_cap=0.0, rarity_init=0.3, prior_weight=value) for value in ("1e-3", "3e-3", "1e-2")],
    }, records(4), previous=round_3.ROUND, ship_margin=SHIP_MARGIN)
