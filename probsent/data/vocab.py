"""Word vocabulary: index 0 is the unknown word, then words by decreasing training frequency."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from probsent.errors import InvalidValueError

UNKNOWN = "<unk>"


class Vocabulary:
    """Maps tokens to ids; any token not in the vocabulary maps to 0 (``<unk>``)."""

    def __init__(self, words: Sequence[str]) -> None:
        if not words or words[0] != UNKNOWN:
            raise ValueError(f"a vocabulary starts with {UNKNOWN}")
        self.words = list(words)
        self.index = {word: i for i, word in enumerate(self.words)}
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
        words = text.split("\n")
        if words and words[-1] == "":
            words.pop()
        if not words or words[0] != UNKNOWN:
            raise InvalidValueError(f"{path}:1: a vocabulary file starts with {UNKNOWN}")
        try:
            return cls(words)
        except ValueError as exc:
            raise InvalidValueError(f"{path}: {exc}") from None
