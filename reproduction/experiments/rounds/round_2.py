"""Recipe round 2: the causes round 1 left untested (mini-batch negatives, mining on the means, a
hardness cap, three epochs, no image captions, dense Adam), and a combination of both rounds.

Some runs use --mine-by means and --adam dense, which left ``probsent train`` after the study (issue 35): this
round is reproduced at commit 2d16e26: ``git checkout 2d16e26 && make reproduce``.
"""
from reproduction.experiments.plan import TEXT_ONLY
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_1
from reproduction.experiments.rounds.reference import REFERENCE, recipe, records

# trained after the round's selection and test numbers, outside the selection: the dense-Adam
# run again, the bug fixed (the erratum in docs/EXPERIMENTS.md)
AFTER = (recipe("r12-dense-adam-fixed", "Adam moves every word's row every step (the bug fixed)", adam="dense"),)

ROUND = RecipeRound(
    2, "The recipe study, round 2: the causes round 1 left untested",
    "mini-batch negatives, mining on the means, a hardness cap, three epochs, no captions, dense Adam",
    REFERENCE, {
        "negative_pool": [recipe("r12-minibatch", "negatives mined within each mini-batch", megabatch=1)],
        "mining_similarity": [recipe("r12-mine-means", "negatives mined by cosine of the means, EIP loss",
                                     mine_by="means")],
        "hardness_cap": [recipe("r12-cap0", "a negative may not score above the partner", hardness_cap=0.0)],
        "epochs": [recipe("r12-epoch3", "three epochs", epochs=3)],
        "source_weights": [recipe("r12-text", "no image captions (text-only mixture)", source_caps=TEXT_ONLY)],
        "optimizer": [recipe("r12-dense-adam", "meant: Adam moves every word's row every step; as run: lazy "
                                               "Adam (a bug passed dense=False), the reference again",
                             adam="dense")],  # added: see the amendment
    }, records(2), previous=round_1.ROUND, combined_name="r12-combined", after=AFTER)
