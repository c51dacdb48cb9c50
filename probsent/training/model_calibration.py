"""Calibrating a model (``probsent calibrate``, ``export``): one function per file it writes
into the model directory, atomically, each a function of its inputs alone (the model's scores,
the data files; no clock, no randomness but fixed seeds, no thread-dependent sums):

- :func:`percentile_table`: ``percentiles.json``, the percentile table for the sentence's
  length, from a fixed sample of reference training sentences (:mod:`probsent.readouts.percentiles`);
- :func:`fit_calibration`: ``calibration.json``, P(specific), a logistic fit on the cleaned
  news training rows of the :data:`FEATURES` reproduction/docs/EXPERIMENTS.md's rule chose
  (:mod:`probsent.readouts.calibration`).

:func:`calibrate` computes them all, then writes them; both are kept by ``SentenceModel.save``. The same model
directory and data give byte-identical files (tests/test_calibration.py checks the shipped ones).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple, Sequence, TYPE_CHECKING

import numpy as np

from probsent.api import SentenceModel, scoring_engine
from probsent.data.development_sets import DataDir, load_news_train
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


def calibrate(model: "SentenceModel", data_dir: str | os.PathLike[str] | None = None,
              reference: str | os.PathLike[str] | None = None, progress: bool | None = None) -> Calibrated:
    """Compute every file calibration makes (:func:`percentile_table`, :func:`fit_calibration`),
    then write them into the model's directory (``model.path``), each atomically, and attach them
    to ``model``: a missing data file writes nothing. A tqdm bar on standard error while scoring
    (default: when it is a terminal)."""
    if model.path is None:
        raise ValueError("calibrate needs a model loaded from a directory")
    progress = sys.stderr.isatty() if progress is None else progress
    table, used = percentile_table(model, data_dir, reference, progress)
    calibration = fit_calibration(model, data_dir, progress=progress)
    table.save(model.path)
    calibration.save(model.path)
    model.percentiles, model.calibration = table, calibration
    return Calibrated(calibration, table, used)
