"""The sentence encoders, registered by the names used on the command line and in model files.

Importing this package registers the built-in models (each file registers its own classes
with :func:`register_model`); the import order below is the order of ``MODEL_TYPES``.
"""
from __future__ import annotations

from probsent.models.base import Encoding, SentenceEncoder, WordEntropyTerms
from probsent.models.registry import (MODEL_TYPES, build_model, model_class, register_model,
                                      unregister_model, with_word_entropy_terms)
from probsent.models.wlo import WLO
from probsent.models.word_average import WordAverage, WordSum
from probsent.models.lstm import LSTMAverage, LSTMGaussian

__all__ = ["MODEL_TYPES", "Encoding", "SentenceEncoder", "WordEntropyTerms", "build_model", "model_class",
           "register_model", "unregister_model", "with_word_entropy_terms", "WLO",
           "WordAverage", "WordSum", "LSTMAverage", "LSTMGaussian"]
