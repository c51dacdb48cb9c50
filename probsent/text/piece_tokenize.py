"""The tokenizer of :mod:`probsent.text.tokenize`, fast on batches: the same tokens, piece by piece.

:func:`probsent.text.tokenize.tokenize` stays the readable reference; this module gives exactly its
output (``tests/test_tokenize.py`` compares the two on every sentence of the evaluation sets
and of the training pairs, and on fuzzed strings) at a fraction of the cost, because
real text repeats: most whitespace-separated pieces ("the", "man", "dog.") occur again and
again, and the Treebank rules almost never look beyond the space around a piece.

Why a piece can be tokenized on its own
---------------------------------------
Take a lowercased sentence with no whitespace other than " " (``str.isprintable()``; the
others fall back to the reference). Every Treebank rule is a rewrite whose match sees at most one character on
either side of a piece, and that character is then a space, except for the rules anchored
at the ends of the string:

* at the start: a double quote becomes ``\u0060\u0060`` and a pair ``''`` does not (after a
  space both do), and the opening-quote rule finds no character before the first piece;
* at the end: the final period (``"dog."`` gives ``dog``, ``.`` only there), the final
  comma or colon, and whether spaces follow the last piece (``"it's' "`` gives ``it``,
  ``'s``, ``'`` but ``"it's'"`` gives ``it's``, ``'``: the quote-before-space rule splits
  the quote off first, so the clitic rule then sees ``it's`` before a space).

So the tokens of a sentence are the concatenation of the tokens of its pieces, each
tokenized in its context: first or not, last (with or without spaces after it) or not. A piece's tokens in its context are computed once, by the reference tokenizer on
the piece between neutral neighbours (``"a " + piece + " a"`` for the middle, without the
left neighbour for the first piece, without the right one for the last; the neighbours'
tokens are dropped; a last piece followed by spaces gets one space after it), and kept in a
dictionary keyed by the piece with its context marked (``"\\x02"`` before a first piece,
``"\\x03"`` after a last one, ``"\\x04\\x03"`` after a last one followed by spaces; all
non-printable, so no eligible sentence contains them). Where a rule's match consumes the space between two
pieces, the pieces' neighbours in the sentence differ from the neutral ones only in a way
that changes no token (the quote-before-space rule may skip a lone quote that already stands
between spaces); the comparison with the reference on millions of sentences is the check.

A batch is processed with a few string operations on all its sentences at once: join with
newlines, lowercase, mark each sentence's start and end, split on whitespace; then one
dictionary lookup per piece. Pieces are numbered in order of first appearance; callers that
need something per token (vocabulary ids, entropy terms) keep it per piece number and
expand with NumPy (:mod:`probsent.text.token_ids`). The dictionary is bounded, so memory stays
flat on any corpus: past ``max_pieces`` entries (default 16,384, a few MB) it starts a new
numbering (its ``generation`` changes) that keeps only the pieces of the last batch, among
them every frequent piece.
"""
from __future__ import annotations

import re
from operator import is_
from itertools import compress, repeat
from typing import Iterable, Sequence

import numpy as np

from probsent.text.tokenize import _tokenize_lowered

__all__ = ["PieceTokenizer", "Pieces"]

START, END = "\x02", "\x03"  # context marks of a sentence's first and last piece
TRAIL = "\x04"  # before END: the sentence ends in spaces after its last piece
FALLBACK = "\x01"  # marks a whole sentence tokenized by the reference (not eligible)
_TRAILING_SPACES = re.compile(" +(?=\n|\\Z)")  # in a batch of lines


# After a plain word these always become tokens of their own: a comma or colon followed by a
# space or the end, and ; ? ! everywhere.
_ALWAYS_SPLIT = frozenset(",:;?!")


def _plain(piece: str) -> bool:
    """ASCII letters and digits only, and none of the letter pairs of the words the contraction
    rules split (cannot, gonna, gimme, gotta, lemme, wanna)."""
    return piece.isalnum() and piece.isascii() and not ("nn" in piece or "mm" in piece or "tt" in piece)


def piece_tokens(key: str) -> list[str]:
    """The tokens of one marked piece in its context (see the module's docstring)."""
    first, last = key[:1] == START, key[-1:] == END
    trail = last and key[-2:-1] == TRAIL
    piece = key[first: len(key) - last - trail]
    if _plain(piece):  # the usual cases, without the reference: a word, a word and a mark
        return [piece]
    if piece[-1:] in _ALWAYS_SPLIT and _plain(piece[:-1]):
        return [piece[:-1], piece[-1]]
    if piece[-1:] == "." and _plain(piece[:-1]):
        return [piece[:-1], "."] if last else [piece]
    tokens = _tokenize_lowered(("" if first else "a ") + piece + (" " if trail else "" if last else " a"))
    return tokens[(0 if first else 1): len(tokens) - (0 if last else 1)]


class Pieces:
    """A batch of sentences as piece numbers: sentence i is ``numbers[ends[i-1]:ends[i]]``."""

    def __init__(self, numbers: np.ndarray, ends: np.ndarray, generation: int) -> None:
        self.numbers = numbers  # int64, one per piece, in order
        self.ends = ends  # int64, per sentence: the end of its pieces in ``numbers``
        self.generation = generation  # of the tokenizer's numbering these numbers belong to


class PieceTokenizer:
    """Tokenizes like :func:`probsent.text.tokenize.tokenize`, with a cache of pieces.

    Not thread-safe (the cache is shared); one per process or thread.
    """

    def __init__(self, max_pieces: int = 16_384) -> None:
        self.max_pieces = max_pieces
        self.generation = 0
        self._reset()

    def _reset(self, keep: np.ndarray | None = None) -> None:
        """Start a new numbering whose first pieces are the old pieces ``keep`` (distinct old
        numbers, in order; ``self.kept`` then holds them, so that callers can carry what they
        keep per piece over to the new numbers)."""
        keep = np.zeros(0, dtype=np.int64) if keep is None else keep
        old_keys, old_tokens = getattr(self, "keys", []), getattr(self, "tokens", [])
        self.keys: list[str] = [old_keys[i] for i in keep.tolist()]  # per piece number
        self.tokens: list[list[str]] = [old_tokens[i] for i in keep.tolist()]  # per piece number
        self._numbers: dict[str, int] = dict(zip(self.keys, range(len(self.keys))))
        last = np.zeros(max(1024, 2 * len(keep)), dtype=bool)  # per piece number: ends a sentence
        last[:len(keep)] = self._last[keep] if len(keep) else False
        self._last = last
        self._recent = np.zeros(0, dtype=np.int64)  # the last batch's piece numbers
        self.kept = keep
        self.generation += 1

    def _number(self, key: str, tokens: list[str]) -> None:
        """Give ``key`` (with ``tokens``) the next number."""
        self._numbers[key] = len(self.tokens)
        self.keys.append(key)
        self.tokens.append(tokens)
        if len(self.tokens) > len(self._last):
            self._last = np.resize(self._last, 2 * len(self.tokens))
        self._last[len(self.tokens) - 1] = key[-1:] == END

    def __len__(self) -> int:
        """The number of pieces numbered in this generation."""
        return len(self.tokens)

    def _add(self, keys: Iterable[str], fallback: Sequence[str]) -> None:
        """Number the new marked ``keys`` (repeats allowed); ``START FALLBACK j END`` stands
        for the whole lowered sentence ``fallback[j]``."""
        for key in keys:
            if key not in self._numbers:
                whole = key[1:2] == FALLBACK
                self._number(key, _tokenize_lowered(fallback[int(key[2:-1])]) if whole else piece_tokens(key))

    def split(self, texts: Sequence[str]) -> Pieces:
        """The piece numbers of each text of ``texts`` (all str)."""
        if len(self) > self.max_pieces:  # keep what the last batch used: the frequent pieces
            self._reset(np.unique(self._recent))
        if not texts:
            return Pieces(np.zeros(0, np.int64), np.zeros(0, np.int64), self.generation)
        lowered = "\n".join(texts).lower()
        lines = None
        if lowered.count("\n") != len(texts) - 1:  # some text holds a newline
            lines = [t.lower() for t in texts]
        elif not lowered.replace("\n", " ").isprintable():
            lines = lowered.split("\n")
        fallback: list[str] = []
        if lines is not None:  # a text that is not printable becomes one fallback piece
            for i, line in enumerate(lines):
                if not line.isprintable():
                    lines[i] = f"{FALLBACK}{len(fallback)}"
                    fallback.append(line)
            lowered = "\n".join(lines)
        if " \n" in lowered or lowered[-1:] == " ":
            lowered = _TRAILING_SPACES.sub(TRAIL, lowered)
        keys = (START + lowered.replace("\n", END + "\n" + START) + END).split()
        try:  # every piece known: the usual case once the cache is warm
            array = np.fromiter(map(self._numbers.__getitem__, keys), dtype=np.int64, count=len(keys))
        except KeyError:
            numbers = list(map(self._numbers.get, keys))
            self._add(compress(keys, map(is_, numbers, repeat(None))), fallback)
            array = np.fromiter(map(self._numbers.__getitem__, keys), dtype=np.int64, count=len(keys))
            # the whole sentences' numbers are this batch's only: not kept past a new numbering
            whole = [self._numbers.pop(f"{START}{FALLBACK}{j}{END}") for j in range(len(fallback))]
            self._recent = np.setdiff1d(array, whole) if whole else array
        else:
            self._recent = array
        ends = np.flatnonzero(self._last[array]) + 1
        return Pieces(array, ends, self.generation)

    def tokenize_many(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's tokens: ``[probsent.text.tokenize.tokenize(t) for t in texts]``."""
        if not texts:
            return []
        pieces = self.split(list(texts))
        tokens = self.tokens
        out, begin = [], 0
        numbers = pieces.numbers.tolist()
        for end in pieces.ends.tolist():
            out.append([t for n in numbers[begin:end] for t in tokens[n]])
            begin = end
        return out
