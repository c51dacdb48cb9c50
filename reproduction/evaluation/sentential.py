"""Sentential analysis (paper Table 6): the most general and most specific training sentence
of each length, in a random sample of the model's training sentences.

The measure is the entropy for probabilistic models (most general = largest entropy) and
the vector norm for deterministic ones (most general = smallest norm). Sentences are the
pairs' own tokens (lowercased Treebank tokens) encoded without re-tokenizing; a sentence
with a word outside the model's vocabulary is left out, and duplicates count once.
"""
from __future__ import annotations

import numpy as np

from probsent.api import SentenceModel
from probsent.training import MappedPairs
from reproduction.evaluation.model_scorer import encode_ids, natural_measure
from reproduction.evaluation.results import Extreme, LengthGroup, Sentential


def sample_sentences(pairs: MappedPairs, known: set[str], sample_size: int, lengths: tuple[int, int],
                     seed: int = 0) -> tuple[list[tuple[str, ...]], int]:
    """Distinct in-vocabulary sentences of ``lengths[0]..lengths[1]`` tokens from a random sample.

    Returns the kept sentences (in the pairs' order) and how many were drawn.
    """
    total = len(pairs.offsets) - 1
    drawn = min(sample_size, total)
    rows = np.sort(np.random.default_rng(seed).choice(total, size=drawn, replace=False))
    kept: dict[tuple[str, ...], None] = {}
    for row in rows:
        start, end = int(pairs.offsets[row]), int(pairs.offsets[row + 1])
        if not lengths[0] <= end - start <= lengths[1]:
            continue
        tokens = tuple(pairs.words[t] for t in pairs.tokens[start:end])
        if all(t in known for t in tokens):
            kept[tokens] = None
    return list(kept), drawn


def extremes_by_length(sentences: list[tuple[str, ...]], values: np.ndarray,
                       specificity: np.ndarray) -> dict[str, LengthGroup]:
    """Per length (as a string key, increasing): group size and the two extreme sentences.

    Ties go to the earlier sentence.
    """
    out: dict[str, LengthGroup] = {}
    lengths = np.array([len(s) for s in sentences])
    for length in sorted(set(lengths.tolist())):
        rows = np.flatnonzero(lengths == length)
        general, specific = rows[np.argmin(specificity[rows])], rows[np.argmax(specificity[rows])]
        out[str(length)] = LengthGroup(
            n=int(rows.size),
            most_general=Extreme(" ".join(sentences[general]), float(values[general])),
            most_specific=Extreme(" ".join(sentences[specific]), float(values[specific])))
    return out


def sentential_analysis(model: SentenceModel, pairs: MappedPairs, sample_size: int = 20000,
                        lengths: tuple[int, int] = (3, 15), seed: int = 0) -> Sentential:
    """The Table 6 analysis of ``model`` on a sample of ``pairs``."""
    known = set(model.vocab.words[1:])
    sentences, drawn = sample_sentences(pairs, known, sample_size, lengths, seed)
    mean, logvar = encode_ids(model.encoder, [model.vocab.ids(s) for s in sentences])
    measure, values, specificity = natural_measure(mean, logvar)
    return Sentential(measure=measure, sample_size=sample_size, seed=seed, lengths=list(lengths), n_drawn=drawn,
                      n_kept=len(sentences),
                      by_length=extremes_by_length(sentences, values, specificity) if sentences else {})
