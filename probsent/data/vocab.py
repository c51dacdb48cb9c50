"""Word vocabulary: index 0 is the unknown word, then words by decreasing training frequency.

A token without an entry of its own is looked up once more in its folded form (:func:`fold`:
accents and compatibility forms removed, case folded), so ``café`` reads as ``cafe`` and
``ﬁne`` as ``fine`` where the vocabulary has those; only then is it ``<unk>``. Every tokenizer
path looks words up through :attr:`Vocabulary.index` (a :class:`FoldingIndex`), so they agree.
"""
from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from probsent.errors import InvalidValueError

UNKNOWN = "<unk>"


def fold(token: str) -> str:
    """``token`` without accents and compatibility variants, case-folded: NFKD, combining marks
    dropped, then ``str.casefold`` (``Straße`` -> ``strasse``, ``Ｃａｆé`` -> ``cafe``)."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


class FoldingIndex(dict):
    """token -> id, where ``get`` falls back to the token's folded form (:func:`fold`) when the
    token itself has no entry; iteration, ``in`` and ``[]`` see the exact entries only."""

    def get(self, token, default=None):  # type: ignore[override]
        found = dict.get(self, token)
        if found is not None:
            return found
        if isinstance(token, str) and not token.isascii():
            return dict.get(self, fold(token), default)
        return default


class Vocabulary:
    """Maps tokens to ids; any token not in the vocabulary maps to 0 (``<unk>``)."""

    def __init__(self, words: Sequence[str]) -> None:
        if not words or words[0] != UNKNOWN:
            raise ValueError(f"a vocabulary starts with {UNKNOWN}")
        self.words = list(words)
        self.index = FoldingIndex((word, i) for i, word in enumerate(self.words))
        if len(self.index) != len(self.words):
            raise ValueError("duplicate word in vocabulary")

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Iterable[str]) -> np.ndarray:
        """Ids of ``tokens`` (int64), unknown words as 0."""
        get = self.index.get
        return np.fromiter((get(t, 0) for t in tokens), dtype=np.int64)

    def save(self, path: str | os.PathLike[str]) -> None:
        """One word a line, in id order (``<unk>`` first)."""
        Path(path).write_text("".join(w + "\n" for w in self.words), encoding="utf-8")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Vocabulary":
        """Read a file written by :meth:`save`."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidValueError(f"{path}: cannot read vocabulary ({exc})") from None
        return cls.from_text(text, path)

    @classmethod
    def from_text(cls, text: str, path: str | os.PathLike[str]) -> "Vocabulary":
        """The vocabulary in ``text`` (a file's content, as :meth:`save` writes it; ``path``
        names it in errors)."""
        words = text.replace("\r\n", "\n").split("\n")  # a file saved with CRLF line ends (no word holds a \r)
        if words and words[-1] == "":
            words.pop()
        if not words or words[0] != UNKNOWN:
            raise InvalidValueError(f"{path}:1: a vocabulary file starts with {UNKNOWN}")
        try:
            return cls(words)
        except ValueError as exc:
            raise InvalidValueError(f"{path}: {exc}") from None
