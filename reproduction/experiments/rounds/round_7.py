"""Recipe round 7: round 6's best-STS run (the prior on the variances alone) over three epochs.

Some runs use --prior-on variance, which left ``probsent train`` after the study (issue 35): this
round is reproduced at commit 2d16e26: ``git checkout 2d16e26 && make reproduce``.
"""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_6
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

ROUND = RecipeRound(
    7, "The recipe study, round 7: the variance prior over three epochs",
    "the variance prior's STS 2017 was still rising at the end of its one epoch",
    REFERENCE, {
        "variance_prior_longer": [
            recipe("r17-cap0-rarity0.3-varprior1e-2-epoch3", "hardness cap 0, rarity init 0.3, prior on the variances "
                   "alone (1e-2), three epochs", hardness_cap=0.0, rarity_init=0.3, prior_on="variance",
                   prior_weight="1e-2", epochs=3)],
    }, records(7), previous=round_6.ROUND, ship_margin=SHIP_MARGIN,
    shown_with=("r15-cap0-rarity0.3-epoch3", "r16-cap0-rarity0.3-varprior1e-2"),
    seed_checks=("r15-cap0-rarity0.3-epoch3", "r17-cap0-rarity0.3-varprior1e-2-epoch3"))
