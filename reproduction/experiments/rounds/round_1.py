"""Recipe round 1: one change at a time against the paper's recipe (prior weight, rarity
initialization, minimum count, re-mined false negatives, close pairs), and their combination.

Some runs use --false-negatives remine, which left ``probsent train`` after the study (issue 35): this
round is reproduced at commit 2d16e26: ``git checkout 2d16e26 && make reproduce``.
"""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds.reference import REFERENCE, recipe, records

ROUND = RecipeRound(
    1, "The recipe study: do WLO's variances learn specificity? (our recipe)",
    "one change at a time against the paper's recipe, and the best of each family combined",
    REFERENCE, {
        "prior": [recipe(f"r11-lambda{value}", f"prior weight lambda = {value}", prior_weight=value)
                  for value in ("1e-3", "3e-3", "1e-2", "3e-2")],
        "rarity_init": [recipe(f"r11-rarity{value}", f"entropy terms start at {value} x (log count - average)",
                               rarity_init=value) for value in ("0.1", "0.3")],
        "min_count": [recipe(f"r11-mincount{value}", f"words seen < {value:,} times are <unk>", min_count=value)
                      for value in (20, 100, 1000)],  # 100 and 1000 added after the first two runs' dev logs
        "false_negatives": [recipe("r11-remine", "false negatives mined again", false_negatives="remine")],
        "close_pairs": [recipe("r11-close", "only pairs whose word overlap is >= 0.4", min_overlap=0.4)],
    }, records(1), combined_name="r11-combined")
