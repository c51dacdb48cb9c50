"""The five sentence encoders, by the names used on the command line and in model files."""
from __future__ import annotations

from typing import Any

from probsent.errors import InvalidValueError
from probsent.models.base import Encoding, SentenceEncoder
from probsent.models.lstm import LSTMAverage, LSTMGaussian
from probsent.models.wlo import WLO
from probsent.models.word_average import WordAverage, WordSum

MODEL_TYPES: dict[str, type[SentenceEncoder]] = {
    cls.type_name: cls for cls in (WLO, WordAverage, WordSum, LSTMAverage, LSTMGaussian)
}


def build_model(config: dict[str, Any]) -> SentenceEncoder:
    """Rebuild an encoder from :meth:`SentenceEncoder.config` output."""
    config = dict(config)
    name = config.pop("type", None)
    if name not in MODEL_TYPES:
        raise InvalidValueError(f"unknown model type {name!r}; expected one of {', '.join(MODEL_TYPES)}")
    return MODEL_TYPES[name](**config)


__all__ = ["MODEL_TYPES", "Encoding", "SentenceEncoder", "build_model", "WLO", "WordAverage",
           "WordSum", "LSTMAverage", "LSTMGaussian"]
