"""The rounds of the recipe study, one file each (docs/EXPERIMENTS.md tells their story).

A new round: ``round_<N>.py`` with its ``ROUND`` (``previous`` = the last round's), one line
below, and its section in docs/EXPERIMENTS.md, committed before any of its runs is trained.
"""
from reproduction.experiments.protocol import RecipeRound
from reproduction.experiments.rounds import round_1, round_2, round_3, round_4, round_5, round_6, round_7, round_8, round_9

RECIPE_ROUNDS: dict[int, RecipeRound] = {module.ROUND.number: module.ROUND for module in (
    round_1, round_2, round_3, round_4, round_5, round_6, round_7, round_8, round_9)}
LATEST = RECIPE_ROUNDS[max(RECIPE_ROUNDS)]

# what no round has tried (shown under the last round in docs/RESULTS.md)
UNTESTED = (
    "Three seeds per single change: each change's dev effect is one run; only the selected runs and the seed "
    "checks of rounds 6-8 have three seeds.",
    "More than three epochs, and three epochs of the changes other than round 5's (`--epochs 3` was tried "
    "alone, inside `r12-combined` and in round 5).",
    "A near-copy rule for negatives other than the shared-word one (`--false-negatives remine`), such as edit "
    "distance.",
    "Per-source weights other than dropping the image captions (`r12-text`) or putting the Bible verse versions "
    "in their place (round 8); the whole file (rounds 8-9) with changes other than the hardness cap and the "
    "rarity initialization, or over more than three epochs; and data larger or cleaner than the shared file's 1.26M pairs "
    "(the paper trains on ParaNMT, 5M pairs used, which is not obtainable here).",
    "A change to the loss or the model that ties a word's entropy term to how much it moves the mean (its "
    "translation B), or a frequency-aware prior; and learning rates that let rare words' rows move as far as "
    "frequent ones (their terms stay near the initialization's).",
    "The paper's KL weight with changes other than the hardness cap and the rarity initialization (round 4 tried "
    "1e-3 to 1e-2 with those two), and 3e-2 with them; the prior on the variances alone (rounds 6-7) at weights "
    "other than 1e-2 and 1e-1, with changes other than those two, and over more than three epochs.",
    "A selection rule under which a run cannot gain by making every word more specific: news-dev accuracy "
    "rewards that (the News sets reward length) and the prior on the variances alone removes it; only the "
    "issue's two rules were used.",
)
