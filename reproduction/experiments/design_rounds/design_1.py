"""Design round 1: the mixture resampled to ParaNMT's overlap x length shape.

Pre-registered in commit ``d1c26bf`` (2026-11-27 06:57 UTC, with the ship rule), before any of its
runs; then a ``Round`` entry of ``experiments/ship_rule.py``, a data file since issue 35 (its text
unchanged). Its record notes were added after its runs.
"""
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds.base_recipe import EPOCH_STEPS, design_run

ROUND = DesignRound(
    1,
    "The shared pairs are mostly loose captions or long, close Bible versions; ParaNMT's pairs "
    "(median overlap 0.44, 10 tokens) sit between. Resampled to ParaNMT's overlap x length shape, "
    "a pair's partner shares enough words for a specific word to be rewarded, and few enough "
    "that the margin is not met by shrinking every variance: frequent words' terms move toward "
    "0 and rare words' terms track rarity more closely (diagnostics: the frequent-word term, "
    "Spearman(term, log count), the active hinge share).",
    [design_run("d1-base", "one epoch of every pair (the reference of this round)"),
     design_run("d1-paranmt-shape", "the mixture resampled to the ParaNMT sample's overlap x length shape "
                                    "(150,000 asked, 112,839 kept), trained for one epoch's steps",
                resample_like="../shared/data/paranmt-sample", resample_pairs=150_000, epochs=12,
                max_steps=EPOCH_STEPS),
     design_run("d1-base-epoch2", "two epochs of every pair", epochs=2)],
    ["`d1-base-epoch2` was trained by resuming a copy of the finished `d1-base` checkpoint with "
     "`--epochs 2` (its first epoch is d1-base's, the same seed and data order); its validations "
     "after the first epoch fall at steps 13,631, 14,631, ... instead of 13,000, 14,000, ...",
     "Seeds 2 and 3 of `d1-base` were started before its development numbers and stopped once it "
     "missed a floor; they are not used."],
    protocol_commit="d1c26bf")
