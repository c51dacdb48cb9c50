"""Fitting the open vocabulary's table (:mod:`probsent.data.estimated_words`) on a WLO model's own
entries; ``probsent calibrate``, ``probsent export`` and the end of training write it.

Each class's term is the mean term sum_d log|A_w,d| of the model's entries of that kind; its
scale is the ``<unk>`` row's (what training learnt for a word without an entry) rescaled by one
factor in every dimension so that its term is that mean, and its translation is the ``<unk>``
row's. (A first design took the entries' per-dimension geometric mean and mean translation: it
moved the means of sentences with an unknown word and lost STS-B dev, docs/EXPERIMENTS.md.)
Which entries:

* a **number shape**: the vocabulary's entries of that shape, the rarer half by rank (a number
  without an entry is rarer in the training text than those with one); a shape with no entry
  takes the integers', and without those the tail's;
* an **English band**: the entries of the vocabulary's *tail* (its last TAIL_SHARE by rank: every
  word without an entry is rarer in the training text than all of them) whose English Zipf
  frequency is in the band; fewer than MIN_ROWS: the tail's English entries;
* a **form**: the tail's entries that English does not know, of that form; fewer than MIN_ROWS:
  the tail's entries that English does not know (and fewer still: the whole tail).

English frequencies come from wordfreq's English list ("large"), which needs the ``eval``
extra at fitting time only; the English words the model lacks are copied into the table with
their band, so reading a model needs neither wordfreq nor a network.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from probsent.data.estimated_words import (ENGLISH_BANDS, FORMS, NOT_ENGLISH, NUMBER_SHAPES, WordEstimates, class_names,
                                           english_band, form_of, number_shape)
from probsent.data.vocab import fold
from probsent.errors import ProbsentError

if TYPE_CHECKING:
    from probsent.api import SentenceModel

__all__ = ["MIN_ROWS", "MIN_VOCABULARY", "TAIL_SHARE", "CannotFit", "NoWordFrequencies", "english_frequencies", "fit_word_estimates",
           "write_word_estimates"]

TAIL_SHARE = 0.2  # the vocabulary's rarest fifth of entries: what a word without an entry is fitted on
MIN_ROWS = 50  # the fewest entries a band or form is fitted on before it falls back to a wider set
MIN_VOCABULARY = 1000  # a smaller vocabulary's rare end says too little: no table
WORDLIST = "large"


class CannotFit(ProbsentError):
    """The open vocabulary cannot be fitted for this model here (why: the message)."""


class NoWordFrequencies(CannotFit):
    """wordfreq is not installed."""


def english_frequencies() -> dict[str, float]:
    """wordfreq's English list: word -> Zipf frequency (log10 of the frequency per billion words).
    Needs wordfreq (``pip install probsent[eval]``): a one-line error without it."""
    try:
        import wordfreq
    except ImportError:
        raise NoWordFrequencies("fitting the open vocabulary needs wordfreq: pip install 'probsent[eval]'") from None
    frequencies = wordfreq.get_frequency_dict("en", WORDLIST)
    return {word: math.log10(frequency * 1e9) for word, frequency in frequencies.items() if frequency > 0}


def _class_row(scale: np.ndarray, shift: np.ndarray, term: float) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of a class whose term is ``term``: the ``<unk>`` row's (row 0: what training
    learnt for a word without an entry), its scale times exp((term - its term) / dim) in every
    dimension, so that sum_d log|A_d| = ``term`` and the sentence's mean moves as little as a
    uniform rescaling can make it."""
    unknown = scale[0].astype(np.float64)
    own = float(np.log(np.maximum(np.abs(unknown), 1e-30)).sum())
    factor = np.exp((term - own) / len(unknown))
    return (unknown * factor).astype(np.float32), shift[0].astype(np.float32)


def fit_word_estimates(words: Sequence[str], scale: np.ndarray, shift: np.ndarray,
                       english: Mapping[str, float] | None = None,
                       tokens_of: Callable[[str], list[str]] | None = None) -> WordEstimates:
    """The table of a WLO model: its vocabulary ``words`` (``<unk>`` first, then by decreasing
    training frequency), scales and translations [vocab, dim]; ``english``: word -> Zipf
    frequency (default: :func:`english_frequencies`); ``tokens_of``: the tokenizer (default
    probsent's), so that only English words that can be one token are kept."""
    if len(words) < MIN_VOCABULARY:
        raise CannotFit(f"a vocabulary of {len(words):,} words is too small to fit the open vocabulary "
                            f"(at least {MIN_VOCABULARY:,})")
    if english is None:
        english = english_frequencies()
    if tokens_of is None:
        from probsent.text.tokenize import tokenize as tokens_of
    from probsent.gaussian import log_abs_scale

    size = len(words)
    wide = np.asarray(scale, dtype=np.float32).astype(np.float64)
    log_abs = log_abs_scale(wide)
    translation = np.asarray(shift, dtype=np.float64)
    ids = np.arange(size)
    shapes = np.array([number_shape(w) if i else "<unk>" for i, w in enumerate(words)], dtype=object)
    zipf = np.array([english.get(w, english.get(fold(w), 0.0)) if i else 0.0 for i, w in enumerate(words)])
    tail = ids >= size - max(1, math.ceil(TAIL_SHARE * (size - 1)))
    tail &= ids > 0
    plain = tail & (shapes == None)  # noqa: E711 - elementwise
    known = plain & (zipf > 0)
    unknown = plain & (zipf == 0)
    forms = np.array([form_of(w) if unknown[i] else "" for i, w in enumerate(words)], dtype=object)
    bands = np.array([english_band(z) for z in zipf])

    chosen: list[np.ndarray] = []
    integers = ids[shapes == "integer"]
    for name, _ in NUMBER_SHAPES:
        rows = ids[shapes == name]
        rows = rows[len(rows) // 2:] if len(rows) else (integers[len(integers) // 2:] if len(integers) else ids[tail])
        chosen.append(rows)
    for band in range(len(ENGLISH_BANDS) + 1):
        rows = ids[known & (bands == band)]
        chosen.append(rows if len(rows) >= MIN_ROWS else ids[known])
    for form in FORMS:
        rows = ids[unknown & (forms == form)]
        if len(rows) < MIN_ROWS:
            rows = ids[unknown] if unknown.sum() >= MIN_ROWS else ids[tail]
        chosen.append(rows)
    if any(len(rows) == 0 for rows in chosen):
        raise ProbsentError(f"a vocabulary of {size:,} words is too small to fit the open vocabulary")
    terms = log_abs.sum(axis=1)
    pairs = [_class_row(wide, translation, float(terms[rows].mean())) for rows in chosen]

    vocabulary = set(words)
    lacking = sorted(w for w in english
                     if w not in vocabulary and fold(w) not in vocabulary and not any(c.isdigit() for c in w)
                     and w == w.lower() and tokens_of(w) == [w])
    fitted: dict[str, Any] = {"rows": {name: int(len(rows)) for name, rows in zip(class_names(), chosen)},
                              "tail_from_id": int(ids[tail][0]), "english_words": len(lacking),
                              "english_list": f"wordfreq en {WORDLIST}"}
    vocab_bands = np.where(zipf > 0, bands, NOT_ENGLISH).astype(np.uint8)
    vocab_bands[0] = NOT_ENGLISH
    return WordEstimates(np.stack([a for a, _ in pairs]), np.stack([b for _, b in pairs]), lacking,
                         np.array([english_band(english[w]) for w in lacking], dtype=np.uint8), size, fitted,
                         vocab_bands)


def write_word_estimates(model: "SentenceModel", english: Mapping[str, float] | None = None) -> WordEstimates | None:
    """Fit the table of a WLO ``model`` loaded from a directory, write it there and attach it
    to the model; None (nothing written) for any other model."""
    if model.path is None:
        raise ValueError("the open vocabulary is written into a model loaded from a directory")
    weights = model._word_weights()
    if weights is None:
        return None
    estimates = fit_word_estimates(model.vocab.words, *weights, english=english)
    estimates.save(model.path)
    model._set_word_estimates(estimates)
    return estimates
