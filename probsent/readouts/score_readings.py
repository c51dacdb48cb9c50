"""A loaded model's token counts and the one-line errors of a model without a calibration or a
percentile table, for code that holds a :class:`probsent.api.SentenceModel` but not its engine
(``probsent calibrate``, the evaluation): each is its :mod:`probsent.readouts.scoring_engine`'s.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from probsent.api import SentenceModel, scoring_engine
from probsent.readouts.calibration import Calibration
from probsent.readouts.percentiles import PercentileTable

__all__ = ["require_calibration", "require_percentiles", "token_counts"]


def require_calibration(model: SentenceModel) -> Calibration:
    """The model's calibration; a one-line error saying how to make one where it has none."""
    return scoring_engine(model).require_calibration()


def require_percentiles(model: SentenceModel) -> PercentileTable:
    """The model's percentile table; a one-line error saying how to make one where it has none."""
    return scoring_engine(model).require_percentiles()


def token_counts(model: SentenceModel, sentences: Sequence[str | None]) -> np.ndarray:
    """Each sentence's token count as the model reads it (at most MAX_TOKENS; 0 for None)."""
    return scoring_engine(model).token_counts(sentences)
