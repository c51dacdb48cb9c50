"""probsent: probabilistic sentence representations learned from paraphrases."""

__version__ = "0.1.0"
