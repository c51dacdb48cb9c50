"""Calibrating a model: the percentile table for the sentence's length from reference training
sentences, then P(specific) from the news labels, as a function of that percentile (and the
news-threshold probability, of the raw score) (``probsent calibrate``, ``export``).

Both read the model's specificity only; both are written into the model directory
(``calibration.json``, ``percentiles.json``), atomically, and kept by ``SentenceModel.save``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probsent.readouts.calibration import Calibration, fit_logistic
from probsent.readouts.percentiles import PercentileTable, table_for
from probsent.readouts.score_readings import token_counts

if TYPE_CHECKING:
    from probsent.api import SentenceModel

PAIRS = "paraphrase/pairs.tsv.gz"  # the reference's default, under the data directory
FITTED_ON = "news-train rows 0..2795 without test overlaps"


def fit_calibration(model: "SentenceModel", table: PercentileTable,
                    data_dir: str | os.PathLike[str] | None = None) -> Calibration:
    """Both logistic fits on the cleaned news training rows: of the score (the news-threshold
    probability) and of the percentile for the sentence's length in ``table`` (P(specific);
    the rows whose percentile is withheld, :mod:`probsent.readouts.withheld`, are left out of it)."""
    from probsent.evaluation.datasets import DataDir, load_news_train

    news = load_news_train(DataDir(data_dir))
    scores = np.asarray(model.specificity(news.sentences), dtype=np.float64)
    slope, intercept = fit_logistic(scores, news.specific)
    percentiles = table.percentile(scores, token_counts(model, news.sentences))  # news rows are sentences: all read
    percentile_slope, percentile_intercept = fit_logistic(percentiles, news.specific)
    calibration = Calibration(slope, intercept, FITTED_ON, len(scores), 0.0, percentile_slope, percentile_intercept)
    calibration.accuracy_at_half = float(((calibration.probability(scores) > 0.5) == news.specific).mean())
    return calibration


def reference_pairs(data_dir: str | os.PathLike[str] | None = None,
                    reference: str | os.PathLike[str] | None = None) -> Path:
    """The pairs file whose first sides are the percentile reference: ``reference``, or the
    shared training pairs under the data directory."""
    if reference is not None:
        return Path(reference)
    from probsent.evaluation.datasets import DataDir

    return DataDir(data_dir).path(PAIRS)


def calibrate(model: "SentenceModel", data_dir: str | os.PathLike[str] | None = None,
              reference: str | os.PathLike[str] | None = None) -> tuple[Calibration, PercentileTable]:
    """Fit both, attach them to ``model`` and write them into its directory (``model.path``);
    first, for WLO, the open vocabulary (``estimated_words.safetensors``,
    :mod:`probsent.data.estimated_words_fit`), whose terms the scores read (where wordfreq
    is not installed, or the vocabulary is under 1,000 words, the directory keeps what it has)."""
    if model.path is None:
        raise ValueError("calibrate needs a model loaded from a directory")
    from probsent.data.estimated_words_fit import CannotFit, write_word_estimates

    try:
        write_word_estimates(model)
    except CannotFit:
        pass
    table = table_for(lambda s: np.asarray(model.specificity(s), dtype=np.float64), lambda s: token_counts(model, s),
                      reference_pairs(data_dir, reference))
    calibration = fit_calibration(model, table, data_dir)
    calibration.save(model.path)
    table.save(model.path)
    model.calibration, model.percentiles = calibration, table
    return calibration, table
