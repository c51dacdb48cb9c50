"""Calibrating a model (``probsent calibrate``, ``export``): one function per file it writes
into the model directory, atomically, each a function of its inputs alone (the model's scores,
the data files; no clock, no randomness but fixed seeds, no thread-dependent sums):

- :func:`percentile_table`: ``percentiles.json``, the percentile table for the sentence's
  length, from a fixed sample of reference training sentences (:mod:`probsent.readouts.percentiles`);
- :func:`fit_calibration`: ``calibration.json``, P(specific), a logistic fit on the cleaned
  news training rows of the :data:`FEATURES` reproduction/docs/EXPERIMENTS.md's rule chose
  (:mod:`probsent.readouts.calibration`);
- :func:`fit_word_estimates`: ``estimated_words.safetensors``, a WLO model's open vocabulary
  (:mod:`probsent.data.vocab`), fitted on the model's own entries (below); the
  scores the two others are fitted on read it.

:func:`calibrate` computes them all, then writes them; all are kept by ``SentenceModel.save``. The same model
directory and data give byte-identical files (tests/test_calibration.py checks the shipped ones).
"""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence, TYPE_CHECKING

import numpy as np

from probsent.api import SentenceModel, scoring_engine
from probsent.data.development_sets import DataDir, load_news_train
from probsent.data.vocab import (ENGLISH_BANDS, FORMS, NOT_ENGLISH, NUMBER_SHAPES, WordEstimates, class_names,
                                 english_band, fold, form_of, number_shape)
from probsent.errors import ProbsentError
from probsent.readouts.calibration import Calibration, feature_matrix, fit_logistic_features
from probsent.readouts.percentiles import PER_SOURCE, PercentileTable, SEED, build_table, reference_sample


if TYPE_CHECKING:
    from probsent.api import SentenceModel

PAIRS = "paraphrase/pairs.tsv.gz"  # the reference's default, under the data directory
FEATURES = ("score", "log_tokens")  # chosen by the pre-registered rule (reproduction/docs/EXPERIMENTS.md; reproduction/results/probability/choice.json)
FITTED_ON = "news-train, all rows but the 939 equal to news-test sentences"


class Calibrated(NamedTuple):
    """What :func:`calibrate` wrote: the calibration, the percentile table, and how many
    reference sentences the table was drawn from (it keeps at most PER_BIN per length bin)."""

    calibration: Calibration
    table: PercentileTable
    reference_sentences: int


def scores_of(model: "SentenceModel", sentences: Sequence[str], progress: bool) -> np.ndarray:
    """The model's specificity of each sentence as float64 (one value per sentence, whatever the
    chunking: sentences are scored independently), with a tqdm bar on standard error if ``progress``."""
    return np.asarray(model.specificity(list(sentences), show_progress_bar=progress), dtype=np.float64)


def news_training_rows(data_dir: str | os.PathLike[str] | None = None):
    """The rows P(specific) is fitted on: every news-train row but those equal to a news-test
    sentence (``DERIVED_rows_overlapping_news_test.txt``)."""
    return load_news_train(DataDir(data_dir), pdtb_only=False)


def fit_calibration(model: "SentenceModel", data_dir: str | os.PathLike[str] | None = None,
                    features: Sequence[str] = FEATURES, progress: bool = False) -> Calibration:
    """P(specific) = sigmoid(w . features + b) by maximum likelihood on the cleaned news training
    rows (:func:`news_training_rows`), every row read (none withheld)."""
    news = news_training_rows(data_dir)
    scores = scores_of(model, news.sentences, progress)
    x = feature_matrix(features, scores, scoring_engine(model).token_counts(news.sentences))
    coefficients, intercept = fit_logistic_features(x, news.specific)
    return Calibration(tuple(features), tuple(float(c) for c in coefficients), float(intercept), FITTED_ON,
                       len(scores))


def reference_pairs(data_dir: str | os.PathLike[str] | None = None,
                    reference: str | os.PathLike[str] | None = None) -> Path:
    """The pairs file whose first sides are the percentile reference: ``reference``, or the
    shared training pairs under the data directory."""
    if reference is not None:
        return Path(reference)
    return DataDir(data_dir).path(PAIRS)


def percentile_table(model: "SentenceModel", data_dir: str | os.PathLike[str] | None = None,
                     reference: str | os.PathLike[str] | None = None,
                     progress: bool = False) -> tuple[PercentileTable, int]:
    """The content of ``percentiles.json``: the table of the reference sample of the pairs file
    (:func:`reference_pairs`), and the number of reference sentences scored for it."""
    pairs = reference_pairs(data_dir, reference)
    sample = reference_sample(pairs)
    table = build_table(scores_of(model, sample, progress), scoring_engine(model).token_counts(sample),
                        f"{pairs.name}: {len(sample):,} first sides, up to {PER_SOURCE:,} per source (seed {SEED})")
    return table, len(sample)

# -- the open vocabulary's fit -----------------------------------------------------------------
#
# Each class's term is the mean term sum_d log|A_w,d| of the model's entries of that kind; its
# scale is the ``<unk>`` row's (what training learnt for a word without an entry) rescaled by one
# factor in every dimension so that its term is that mean, and its translation is the ``<unk>``
# row's (a first design took the entries' per-dimension geometric mean and mean translation: it
# moved the means of sentences with an unknown word and lost STS-B dev, reproduction/docs/EXPERIMENTS.md).
# Which entries:
#
# * a number shape: the vocabulary's entries of that shape, the rarer half by rank (a number
#   without an entry is rarer in the training text than those with one); a shape with no entry
#   takes the integers', and without those the tail's;
# * an English band: the entries of the vocabulary's tail (its last TAIL_SHARE by rank: every
#   word without an entry is rarer in the training text than all of them) whose English Zipf
#   frequency is in the band; fewer than MIN_ROWS: the tail's English entries;
# * a form: the tail's entries that English does not know, of that form; fewer than MIN_ROWS:
#   the tail's entries that English does not know (and fewer still: the whole tail).
#
# English frequencies come from wordfreq's English list ("large"), which needs the ``eval`` extra
# at fitting time only; the English words the model lacks are copied into the table with their
# band, so reading a model needs neither wordfreq nor a network.

TAIL_SHARE = 0.2  # the vocabulary's rarest fifth of entries: what a word without an entry is fitted on
MIN_ROWS = 50  # the fewest entries a band or form is fitted on before it falls back to a wider set
MIN_VOCABULARY = 1000  # a smaller vocabulary's rare end says too little: no table
WORDLIST = "large"


class CannotFit(ProbsentError):
    """The open vocabulary cannot be fitted for this model here (why: the message)."""


def english_frequencies() -> dict[str, float]:
    """wordfreq's English list: word -> Zipf frequency (log10 of the frequency per billion words).
    Needs wordfreq (``pip install probsent[eval]``): a one-line error without it."""
    try:
        import wordfreq
    except ImportError:
        raise CannotFit("fitting the open vocabulary needs wordfreq: pip install 'probsent[eval]'") from None
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
    """The open vocabulary of a WLO model: its vocabulary ``words`` (``<unk>`` first, then by
    decreasing training frequency), scales and translations [vocab, dim]; ``english``: word ->
    Zipf frequency (default: :func:`english_frequencies`); ``tokens_of``: the tokenizer (default
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
        raise CannotFit(f"a vocabulary of {size:,} words is too small to fit the open vocabulary")
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


def word_estimates_of(model: "SentenceModel", english: Mapping[str, float] | None = None) -> WordEstimates | None:
    """The open vocabulary of a WLO ``model`` (:func:`fit_word_estimates` on its weights), not
    written; None for any other model."""
    weights = model._word_weights()
    if weights is None:
        return None
    return fit_word_estimates(model.vocab.words, *weights, english=english)


def calibrate(model: "SentenceModel", data_dir: str | os.PathLike[str] | None = None,
              reference: str | os.PathLike[str] | None = None, progress: bool | None = None) -> Calibrated:
    """Compute every file calibration makes (:func:`percentile_table`, :func:`fit_calibration`),
    then write them into the model's directory (``model.path``), each atomically, and attach them
    to ``model``: a missing data file writes nothing. First, for a WLO model, its open vocabulary
    (:func:`word_estimates_of`), which the scores read; where wordfreq is not installed or the
    vocabulary is under MIN_VOCABULARY words, the directory keeps what it has. A tqdm bar on standard error while scoring
    (default: when it is a terminal)."""
    if model.path is None:
        raise ValueError("calibrate needs a model loaded from a directory")
    progress = sys.stderr.isatty() if progress is None else progress
    before, estimates = model.word_estimates, None
    try:
        estimates = word_estimates_of(model)
    except CannotFit:  # no wordfreq, or a vocabulary too small: the directory keeps what it has
        pass
    if estimates is not None:
        model.word_estimates = estimates  # the scores below read it
    try:
        table, used = percentile_table(model, data_dir, reference, progress)
        calibration = fit_calibration(model, data_dir, progress=progress)
    except BaseException:
        model.word_estimates = before  # nothing written: the model reads words as before
        raise
    if estimates is not None:
        estimates.save(model.path)
    table.save(model.path)
    calibration.save(model.path)
    model.percentiles, model.calibration = table, calibration
    return Calibrated(calibration, table, used)
