"""Generality round G1 (issue 41): rarity targets read from English, and from a WordNet-fitted
generality score, in place of the training mixture's counts.

Pre-registered (docs/EXPERIMENTS.md, "Generality rounds") before any of its runs; judged by
``experiments/generality_rule.py``. Every candidate is the shipped recipe (round 3's winner: every
pair, one epoch, ``--hardness-cap 0 --rarity-init 0.3 --rarity-anchor 1.0``, validated every 1,000
steps, its STS 2017-selected ``best/``, written with the shipped unit) by the fast engine, with one
change: ``--rarity-from FILE`` (``<unk>`` then counts as the average token).

History: the round had no winner, and ``--rarity-from`` left probsent (issue 49); these candidates
train at commit ``9701be6`` (G1's own form of the option at ``389ba6f``). The file stays because
RESULTS' generality section is generated from it.
"""
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds.base_recipe import BASE
from reproduction.experiments.paths import GENERALITY_TARGETS_DIR, WING
from reproduction.experiments.plan import Run

RECIPE = {**BASE, "rarity_anchor": 1.0, "engine": "fast"}  # the shipped recipe, by the engine that trained it


def generality_run(name: str, note: str, **change: object) -> Run:
    """The shipped recipe plus one ``change``, trained into runs/<name>."""
    return Run(name, "generality", {**RECIPE, **change}, note)


def _relative(name: str) -> str:
    """A target list written by experiments/generality_targets.py (at commit 9701be6), relative to the wing (the repository root when those rounds ran, before the move)."""
    return (GENERALITY_TARGETS_DIR / name).relative_to(WING).as_posix()


ROUND = DesignRound(
    "G1",
    "Diagnostic (development only, `python -m reproduction.experiments.generality_rule --stage diagnostic`): the shipped "
    "model's word terms follow the mixture's log counts (the anchor pulls them there), so on the WordNet "
    "development pairs whose general word is the rarer in English it is right in about a quarter; its <unk> "
    "is anchored as the rarest kept word, more specific than 'published'. A linear generality score on GloVe "
    "vectors and wordfreq's zipf frequency, fitted on the development pairs of one half of the words, ranks "
    "the development pairs of the other half right in 74.7 % (42.5 % where the general word is rarer) against "
    "the shipped model's 61-62 % (25 %). Prediction: rarity targets read from English frequencies fix the "
    "mixture's biases (chat words, Bible words) and keep the specificity floors; targets read from the "
    "generality score also move generality on words the fit never saw, and SNLI dev entailment with it.",
    [generality_run("g1-unk-average", "the shipped recipe with --rarity-from an empty list: only <unk> moves "
                    "(to the average token)", rarity_from=_relative("no-words.tsv")),
     generality_run("g1-english", "the shipped recipe with --rarity-from wordfreq's English log frequencies",
                    rarity_from=_relative("english-log-frequencies.tsv")),
     generality_run("g1-generality", "the shipped recipe with --rarity-from the WordNet-fitted generality score",
                    rarity_from=_relative("generality-log-frequencies.tsv"))],
    ["The targets are files written by `python -m reproduction.experiments.generality_targets` (results/generality/), "
     "committed with this round, before any run."],
    protocol_commit="702065d")
