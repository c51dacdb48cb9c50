"""Recipe round 3: the loose-then-close curriculum, and the hardness cap with one more change.

Some runs use --then-min-overlap, which left ``probsent train`` after the study (issue 35): this
round is reproduced at commit 2d16e26: ``git checkout 2d16e26 && make reproduce``.
"""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_2
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

ROUND = RecipeRound(
    3, "The recipe study, round 3: loose then close, and the hardness cap with one more change",
    "the curriculum left untested, and the best-STS change with a vocabulary or rarity change",
    REFERENCE, {
        "curriculum": [recipe("r13-loose-then-close", "one epoch of every pair, then one of the close pairs "
                                                      "(word overlap >= 0.4)", epochs=2, then_min_overlap=0.4)],
        "cap_with_another_change": [
            recipe("r13-cap0-mincount100", "hardness cap 0 and words seen < 100 times are <unk>",
                   hardness_cap=0.0, min_count=100),
            recipe("r13-cap0-rarity0.3", "hardness cap 0 and entropy terms start at 0.3 x (log count - average)",
                   hardness_cap=0.0, rarity_init=0.3)],  # added: see the amendment
    }, records(3), previous=round_2.ROUND, ship_margin=SHIP_MARGIN)
