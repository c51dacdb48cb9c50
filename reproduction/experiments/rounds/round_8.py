"""Recipe round 8: paraphrases made by translation (the Bible verse versions) in place of the image
captions, or beside them (every pair of the file)."""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_7
from reproduction.experiments.rounds.reference import REFERENCE, SHIP_MARGIN, recipe, records

CAPTIONS_FOR_BIBLE = ("multi30k_flickr30k_captions=0,mscoco_val2017_captions=0,flickr8k_captions=0,"
                      "bible_parallel_versions=355000")

ROUND = RecipeRound(
    8, "The recipe study, round 8: paraphrases made by translation (Bible verse versions)",
    "pairs made by translation keep the rare words a partner shares, so their rarity counts",
    REFERENCE, {
        "translation_pairs": [
            recipe("r18-cap0-rarity0.3-bible-for-captions", "hardness cap 0, rarity init 0.3, Bible verse versions "
                   "(355,000 pairs) in place of the image captions", hardness_cap=0.0, rarity_init=0.3,
                   source_caps=CAPTIONS_FOR_BIBLE),
            recipe("r18-cap0-rarity0.3-allpairs", "hardness cap 0, rarity init 0.3, every pair of the file (Bible "
                   "included)", hardness_cap=0.0, rarity_init=0.3, source_caps=None)],
    }, records(8), previous=round_7.ROUND, ship_margin=SHIP_MARGIN,
    shown_with=("r13-cap0-rarity0.3", "r15-cap0-rarity0.3-epoch3"),
    seed_checks=("r13-cap0-rarity0.3", "r18-cap0-rarity0.3-bible-for-captions", "r18-cap0-rarity0.3-allpairs"),
    untrained=True)
