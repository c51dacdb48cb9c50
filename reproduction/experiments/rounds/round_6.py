"""Recipe round 6: a prior on the variances alone (the means left free), so that the margin is met by
the means and not by shrinking every variance.

Some runs use --prior-on variance, which left ``probsent train`` after the study (issue 35): this
round is reproduced at commit 2d16e26: ``git checkout 2d16e26 && make reproduce``.
"""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_5
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

ROUND = RecipeRound(
    6, "The recipe study, round 6: a prior on the variances alone",
    "a prior on the variances alone fixes their scale and leaves the margin to the means",
    REFERENCE, {
        "variance_prior": [
            recipe("r16-varprior1e-2", "prior on the variances alone, weight 1e-2", prior_on="variance",
                   prior_weight="1e-2"),
            *(recipe(f"r16-cap0-rarity0.3-varprior{value}", f"hardness cap 0, rarity init 0.3, prior on the "
                     f"variances alone, weight {value}", hardness_cap=0.0, rarity_init=0.3, prior_on="variance",
                     prior_weight=value) for value in ("1e-2", "1e-1"))],
    }, records(6), previous=round_5.ROUND, ship_margin=SHIP_MARGIN,
    # the same weights on the paper's KL, and the base of two of the round's runs
    shown_with=("r11-lambda1e-2", "r13-cap0-rarity0.3", "r14-cap0-rarity0.3-lambda1e-2"),
    seed_checks=("r13-cap0-rarity0.3", "r14-cap0-rarity0.3-lambda1e-2",
                 "r16-cap0-rarity0.3-varprior1e-2", "r16-cap0-rarity0.3-varprior1e-1"))
