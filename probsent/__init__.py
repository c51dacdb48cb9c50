"""probsent: probabilistic sentence representations learned from paraphrases."""

from probsent.numerics import settle_vector_math

settle_vector_math()  # before any torch work: see probsent/numerics.py

from probsent.api import SentenceModel, load
from probsent.errors import ProbsentError
from probsent.version import __version__

__all__ = ["SentenceModel", "load", "ProbsentError", "__version__"]
