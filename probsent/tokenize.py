"""Tokenization used everywhere in probsent (training, evaluation, API).

Temporary implementation: lowercase, then NLTK's TreebankWordTokenizer.
To be replaced by a fast, dependency-free implementation that gives identical output.
"""
from __future__ import annotations

from nltk.tokenize import TreebankWordTokenizer

_TREEBANK = TreebankWordTokenizer()


def tokenize(text: str) -> list[str]:
    """Lowercase ``text`` and split it into Penn Treebank tokens."""
    return _TREEBANK.tokenize(text.lower())
