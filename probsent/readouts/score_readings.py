"""A score's other readings, for either model that scores: the percentile for the sentence's
length and P(specific) (the chance a news annotator calls it specific) of sentences already scored, their token counts, and the one-line error
of a model without a calibration or a percentile table.

The command line, corpus scoring, Spark, spaCy and the evaluation score with a
:class:`probsent.api.SentenceModel` or its torch-free twin on the scoring path, a
:class:`probsent.readouts.word_terms.WordTermTable` (:mod:`probsent.readouts.scoring_model`).
Both hold ``calibration``, ``percentiles`` and ``path`` and tokenize with a
:class:`probsent.text.token_ids.TokenIds`; these functions read either the same way, so that a
SentenceModel's public members stay what a user calls (its ``percentile`` and ``probability``
are these functions of its scores). This module is the one place outside ``api.py`` that reads
a SentenceModel's private parts (its tokenizer and its term table).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, Union

import numpy as np

from probsent.readouts.calibration import FILE as CALIBRATION, Calibration, made_by_calibrate
from probsent.readouts.percentiles import FILE as PERCENTILES, PercentileTable
from probsent.readouts.withheld import percentiles_read, withheld
from probsent.readouts.word_terms import WordTermTable
from probsent.text.token_ids import TokenIds
from probsent.text.utf8_texts import Utf8Texts

if TYPE_CHECKING:
    from probsent.api import SentenceModel

ScoringModel = Union[WordTermTable, "SentenceModel"]
Texts = Union[Sequence[Union[str, None]], Utf8Texts]


def require_calibration(model: ScoringModel) -> Calibration:
    """The model's calibration; a one-line error saying how to make one where it has none."""
    return made_by_calibrate(model.calibration, model.path, CALIBRATION)


def require_percentiles(model: ScoringModel) -> PercentileTable:
    """The model's percentile table; a one-line error saying how to make one where it has none."""
    return made_by_calibrate(model.percentiles, model.path, PERCENTILES)


def token_ids(model: ScoringModel) -> TokenIds:
    """The tokenizer the model reads sentences with (a SentenceModel shares its own with its
    term table)."""
    return model.token_ids if isinstance(model, WordTermTable) else model._token_ids


def token_counts(model: ScoringModel, sentences: Sequence[str | None]) -> np.ndarray:
    """Each sentence's token count as the model reads it (at most MAX_TOKENS; 0 for None)."""
    return token_ids(model).counts(sentences)


def percentile_of_scores(model: ScoringModel, scores: np.ndarray, sentences: Texts) -> np.ndarray:
    """The percentile for their length (:mod:`probsent.readouts.percentiles`) of sentences
    already scored by the model's ``specificity``, NaN where :mod:`probsent.readouts.withheld`
    withholds it; a one-line error without a percentile table."""
    return percentiles_read(require_percentiles(model), token_ids(model), scores, sentences)


def probability_of_scores(model: ScoringModel, scores: np.ndarray, sentences: Texts) -> np.ndarray:
    """P(specific) of sentences already scored: the calibration's function of their scores and
    token counts (:mod:`probsent.readouts.calibration`), NaN where the percentile is withheld
    (:mod:`probsent.readouts.withheld`); a one-line error without a calibration (or, for a file of
    an earlier probsent that reads the percentile, without a percentile table)."""
    calibration = require_calibration(model)
    codes, counts = withheld(token_ids(model), sentences)
    percentiles = None
    if "percentile" in calibration.features:
        percentiles = require_percentiles(model).percentile(scores, counts)
    out = calibration.probability(scores, counts, percentiles)
    out[codes != 0] = np.nan
    return out


def term_table(model: ScoringModel, purpose: str) -> WordTermTable:
    """The model's per-word entropy terms as a table (a SentenceModel's is rebuilt when its
    weights change); a one-line error naming ``purpose`` for a model without such terms."""
    return model if isinstance(model, WordTermTable) else model._term_table(purpose)


def source_files(model: ScoringModel) -> tuple | None:
    """The identity of the files :func:`probsent.load` read the model from (None for a model
    built in memory), which Spark compares with the directory's files before shipping them."""
    return model.source_files if isinstance(model, WordTermTable) else model._source_files
