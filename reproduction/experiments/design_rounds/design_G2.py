"""Generality round G2 (issue 41): the mixture's rarity kept, and the part of generality that
frequency does not say added, on WordNet's noun and verb lemmas only.

Pre-registered (docs/EXPERIMENTS.md, "Generality rounds", "Round G2") after round G1's seed-1
records and before any of its own runs; judged by ``experiments/generality_rule.py``. Each candidate
is the shipped recipe by the fast engine with ``--rarity-from`` one of round G2's lists
(``experiments/generality_targets.py``); ``--rarity-from`` no longer moves ``<unk>`` (round G1's
option did; it trains at the tag ``generality-round-g1``).

History: the round had no winner, and ``--rarity-from`` left probsent (issue 49); these candidates
train at commit ``9701be6``. The file stays because RESULTS' generality section is generated from it.
"""
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds.design_G1 import _relative, generality_run

ROUND = DesignRound(
    "G2",
    "Round G1 (results/design/generality-roundG1.json, development only): the generality targets raised the "
    "WordNet pairs of unseen words by 9.6 points (45.6 % where the general word is rarer, from 25.0) but cost the "
    "one-word explain set (56.5, floor 81.4), the equal-length pairs (98.4) and the SNLI dev direction (entailment "
    "minus neutral 6.0, floor 16.3); moving <unk> to the average token cost the shorter-specific pairs 28 points "
    "(its names and numbers are unknown words), and English frequencies lost the general-rarer pairs. Diagnostic "
    "before this entry (each word list alone, no training: `python -m reproduction.experiments.generality_rule --stage targets`, "
    "results/design/generality-targets-diagnostic.json): the generality list put function words and inflected "
    "verbs ('at', 'flew', 'played') far on the specific side, outside the noun and verb lemmas it was fitted on, "
    "and its one-word explain fell to 69.4 (training counts: 93.5; trained models lose about ten points more); "
    "keeping the training counts and adding w x (generality - English) on WordNet's noun and verb lemmas only "
    "gives, for w = 0.25 / 0.5, unseen-word pairs 64.3 / 66.5 (30.6 / 36.7 where the general word is rarer; "
    "training counts 60.8 / 24.7) with one-word explain 93.5 / 90.3. "
    "Prediction: the correction moves generality on unseen words while the words that carry the specificity floors "
    "(names, numbers, unknown words) keep their terms.",
    [generality_run(f"g2-correction-{weight:g}", f"the shipped recipe with --rarity-from the training counts plus "
                    f"{weight:g} x (generality - English) on WordNet's noun and verb lemmas",
                    rarity_from=_relative(f"generality-correction-{weight:g}.tsv"))
     for weight in (0.25, 0.5)],
    ["Seeds 2 and 3 of both candidates are trained beside seed 1, before the choice "
     "(`--stage seeds --every-candidate`), so that the round fits one session; the finalist is still the seed-1 "
     "candidate with the highest C that passes, and only its seeds enter the three-seed check: the other's choose "
     "nothing.",
     "Added after the seed-1 records: both candidates miss only the one-word explain floor, so there is no "
     "finalist. The four seed runs, started beside seed 1, were stopped at step 2,000 so that seed 1 could finish "
     "in the session; g2-correction-0.25's were resumed afterwards for the record and choose nothing."],
    protocol_commit="56cdd31")
