"""Lexical generality: does a word score more specific than its WordNet hypernym?

For every direct hypernym pair (``specific``, ``general``) of single-word nouns and verbs
(:mod:`reproduction.evaluation.wordnet`; arm/limb, animal/organism, Africa/continent), each word is
scored alone, as a one-word sentence, and a pair counts as right when the specific word scores
higher (ties count half). Reported per half of the split by synset (``dev`` to choose with,
``test`` to report once), over all pairs and over the pairs where the *general word is the rarer
one* in general English (wordfreq): there word rarity points the wrong way, so a model that only
reads how rare a word is scores below 50 % there.

The pairs are those whose two words both have an entry in the model's vocabulary (each word
tokenizes to itself, and is not ``<unk>``), so that the number reads what the model learned of
words and not its unknown-word term. Baselines on the same pairs: information content -log p(w)
from the model's training counts and from wordfreq's English frequencies, and wordfreq's rank.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from reproduction.evaluation import baselines as bl
from reproduction.evaluation.results import Generality, GeneralityShare
from reproduction.evaluation.wordnet import HypernymPair
from probsent.api import tokenize

if TYPE_CHECKING:
    from probsent.api import SentenceModel

WordScore = Callable[[Sequence[str]], np.ndarray]


def share_right(specific: np.ndarray, general: np.ndarray) -> float | None:
    """% of pairs whose specific word scores higher (ties, and pairs a score has no value for,
    half); None for no pairs."""
    if len(specific) == 0:
        return None
    known = ~(np.isnan(specific) | np.isnan(general))
    right = np.where(known, (specific > general) + 0.5 * (specific == general), 0.5)
    return 100.0 * float(np.mean(right))


def _values(score: Callable[[str], float | None], words: Sequence[str]) -> np.ndarray:
    values = [score(word) for word in words]
    return np.array([np.nan if value is None else value for value in values], dtype=np.float64)


def model_pairs(pairs: Sequence[HypernymPair], has_entry: Callable[[str], bool]) -> list[HypernymPair]:
    """The pairs whose two words both have an entry."""
    return [pair for pair in pairs if has_entry(pair.specific) and has_entry(pair.general)]


def generality_experiment(word_score: WordScore, pairs: Sequence[HypernymPair],
                          training_information: bl.CountInformation | None = None,
                          vocabulary: str = "") -> Generality:
    """The shares of :class:`Generality` for ``word_score`` (a scorer's ``specificity`` of one-word
    sentences) and the baselines, on ``pairs`` (already restricted to the words with an entry)."""
    specific = [pair.specific for pair in pairs]
    general = [pair.general for pair in pairs]
    words = sorted(set(specific) | set(general))
    index = {word: i for i, word in enumerate(words)}
    at_specific = np.array([index[w] for w in specific], dtype=np.int64)
    at_general = np.array([index[w] for w in general], dtype=np.int64)
    wordfreq_information = bl.WordfreqInformation()
    scores = {"model": np.asarray(word_score(words), dtype=np.float64) if words else np.zeros(0),
              "information_content_wordfreq": _values(wordfreq_information, words),
              "wordfreq_rank": _values(bl.WordFrequencyRanks().rank, words)}  # a later rank: rarer, so more specific
    if training_information is not None:
        scores["information_content_training"] = _values(training_information, words)
    wordfreq = scores["information_content_wordfreq"]
    general_rarer = wordfreq[at_general] > wordfreq[at_specific]
    halves = np.array([pair.half for pair in pairs])

    def share(rows: np.ndarray) -> GeneralityShare:
        values = {name: share_right(score[at_specific][rows], score[at_general][rows])
                  for name, score in scores.items()}
        return GeneralityShare(n=int(rows.sum()), **values)

    return Generality(dev=share(halves == "dev"), dev_general_rarer=share((halves == "dev") & general_rarer),
                      test=share(halves == "test"), test_general_rarer=share((halves == "test") & general_rarer),
                      vocabulary=vocabulary)



def model_generality(model: "SentenceModel", pairs: Sequence[HypernymPair],
                     training_information: bl.CountInformation | None = None) -> Generality:
    """:func:`generality_experiment` for a model, on the pairs whose two words have an entry in its
    vocabulary (a word that tokenizes to itself alone, ``<unk>`` aside)."""
    entries = set(model.vocab.words[1:])
    words = {word for pair in pairs for word in (pair.specific, pair.general)}
    readable = {word for word in words if word in entries and tokenize(word) == [word]}  # each word once
    return generality_experiment(model.specificity, model_pairs(pairs, readable.__contains__), training_information,
                                 vocabulary=f"both words with an entry in the model's vocabulary "
                                            f"({len(entries):,} words)")
