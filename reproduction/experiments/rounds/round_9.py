"""Recipe round 9: the whole file (round 8's one change that raised news-dev) over three epochs."""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_8
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

ROUND = RecipeRound(
    9, "The recipe study, round 9: the whole file over three epochs",
    "more data raised news-dev and three epochs raised STS 2017: both at once",
    REFERENCE, {
        "more_data_longer": [
            recipe("r19-cap0-rarity0.3-allpairs-epoch3", "hardness cap 0, rarity init 0.3, every pair of the file, "
                   "three epochs", hardness_cap=0.0, rarity_init=0.3, source_caps=None, epochs=3)],
    }, records(9), previous=round_8.ROUND, ship_margin=SHIP_MARGIN,
    shown_with=("r13-cap0-rarity0.3", "r15-cap0-rarity0.3-epoch3", "r18-cap0-rarity0.3-allpairs"),
    untrained=True)
