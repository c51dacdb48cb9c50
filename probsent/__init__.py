"""probsent: probabilistic sentence representations learned from paraphrases."""

__version__ = "0.1.0"

from probsent.api import SentenceModel, load  # noqa: E402
from probsent.errors import ProbsentError  # noqa: E402

__all__ = ["SentenceModel", "load", "ProbsentError", "__version__"]
