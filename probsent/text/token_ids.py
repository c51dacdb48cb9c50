"""Sentences to vocabulary ids in bulk: the fast tokenizer's pieces, each with its ids.

:class:`TokenIds` turns a batch of sentences into one flat int64 array of vocabulary ids
and the sentences' offsets in it, each sentence cut at its first ``max_tokens`` tokens:
the input of WLO's term sums (:mod:`probsent.readouts.word_terms`) and of the encoders
(:meth:`probsent.api.SentenceModel.encode`). It equals tokenizing each sentence with
:func:`probsent.text.tokenize.tokenize` and looking each token up (unknown words: 0), but the
lookups happen once per distinct piece (:class:`probsent.text.piece_tokenize.PieceTokenizer`) and
the rest is NumPy, with no Python loop over sentences.

Batches of at least ``COMPILED_SENTENCES`` sentences, and text already in UTF-8
(:class:`probsent.text.utf8_texts.Utf8Texts`, e.g. a Parquet column), go to the compiled tokenizer
(:class:`probsent.text.compiled_tokenize.CompiledTokenIds`: the same ids, several times faster);
smaller batches stay in Python, so that scoring a few sentences never imports numba (whose
import and cached kernels cost a few tenths of a second).
"""
from __future__ import annotations

import threading
from itertools import chain
from typing import Any, Mapping, Sequence

import numpy as np

from probsent.text.piece_tokenize import PieceTokenizer
from probsent.text.tokenize import capped_text
from probsent.text.utf8_texts import Utf8Texts

__all__ = ["COMPILED_SENTENCES", "LOW_COVERAGE", "TokenIds", "counts_for_coverage", "coverage_codes", "coverage_counts",
           "known_share", "known_shares"]

COMPILED_SENTENCES = 1024  # batches at least this large go to the compiled tokenizer
# Below this share of tokens with an entry of their own (known_share with model_only), a score
# says little about the text: every other word is read by a guess (its open-vocabulary class) or
# the shared <unk> entry. The command line warns.
LOW_COVERAGE = 0.5


def known_share(ids: np.ndarray, offsets: np.ndarray, codes: np.ndarray, model_only: bool = False) -> np.ndarray:
    """Each sentence's coverage: the share of its counted tokens that the model or English knows
    (an entry of its own, or with the open vocabulary a number or an English word:
    :mod:`probsent.data.vocab`); with ``model_only``, the share with an entry of their
    own (id neither 0, the unknown word, nor an estimated class). ``codes``
    (:func:`coverage_codes`) says which entries count: every token without an entry and every
    entry with a letter or digit, so that punctuation the model knows does not lift the share
    of a sentence in another language. A sentence of known punctuation only has 1; one without
    tokens NaN. The counts come from one gather and one running sum (corpus scoring's hot path:
    about a twentieth of tokenizing)."""
    both = known_shares(ids, offsets, codes)
    return both[1] if model_only else both[0]


def known_shares(ids: np.ndarray, offsets: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, model coverage): :func:`known_share` and :func:`known_share` with
    ``model_only``, from one count."""
    counted, model_known, open_known = _all_counts(ids, offsets, codes)
    empty = offsets[1:] == offsets[:-1]
    shares = []
    for known in (open_known, model_known):
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(counted > 0, known / np.maximum(counted, 1), 1.0)
        share[empty] = np.nan
        shares.append(share)
    return shares[0], shares[1]


def _all_counts(ids: np.ndarray, offsets: np.ndarray,
                codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counted, known to the model, known to the model or English) int64 per sentence."""
    running = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(codes[ids], out=running[1:])
    both = running[offsets[1:]] - running[offsets[:-1]]
    return both & _COUNT_MASK, (both >> _KNOWN_SHIFT) & _COUNT_MASK, both >> _OPEN_SHIFT


def coverage_counts(ids: np.ndarray, offsets: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counted, known) int64 per sentence: how many of its tokens coverage counts
    (:func:`counts_for_coverage`), and how many of those have an entry of their own in the
    model (the withheld rules' coverage, :mod:`probsent.readouts.withheld`)."""
    counted, known, _ = _all_counts(ids, offsets, codes)
    return counted, known


def counts_for_coverage(word: str | None) -> bool:
    """Whether coverage counts a token read as vocabulary entry ``word`` (None: no entry of its
    own): every token without an entry and every entry with a letter or digit; not the
    punctuation the model knows."""
    return word is None or any(c.isalnum() for c in word)


# A token's code packs its three coverage counts into one int64, 21 bits each: counted, counted
# and known to the model (an entry of its own), counted and known to the model or English; a
# sentence's sum of codes holds all three (a sentence has at most MAX_TOKENS tokens, below 2^21).
_KNOWN_SHIFT = 21
_OPEN_SHIFT = 42
_COUNT_MASK = (1 << _KNOWN_SHIFT) - 1


def coverage_codes(index: Mapping[str, int]) -> np.ndarray:
    """int64 per id: 1 if coverage counts the entry (:func:`counts_for_coverage`; id 0, the
    unknown word, counts), plus 2^21 + 2^42 if it has an entry of its own (every id but 0);
    with an open vocabulary (an :class:`probsent.data.vocab.EstimatingIndex`), one
    more code per estimated class after the vocabulary's ids: counted, plus 2^42 where the
    class is known to English (a number or an English word)."""
    estimates = getattr(index, "estimates", None)
    size = max(index.values(), default=0) + 1
    codes = np.zeros(size + (len(estimates) if estimates is not None else 0), dtype=np.int64)
    for word, i in index.items():
        if counts_for_coverage(word):
            codes[i] = 1 + ((1 << _KNOWN_SHIFT) + (1 << _OPEN_SHIFT) if i else 0)
    codes[0] = 1
    if estimates is not None:
        codes[size:] = 1 + np.where(estimates.known, 1 << _OPEN_SHIFT, 0)
    return codes


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` followed by zeros, ``size`` long."""
    out = np.zeros(size, dtype=array.dtype)
    out[:len(array)] = array
    return out


class TokenIds:
    """Vocabulary ids of sentences' tokens, by piece. Thread-safe."""

    def __init__(self, index: Mapping[str, int], max_tokens: int) -> None:
        self.index = index  # token -> id; a token not in it is 0 (unknown)
        self.max_tokens = max_tokens
        self.tokenizer = PieceTokenizer()
        self._lock = threading.Lock()
        self._generation, self._known = -1, 0
        self._compiled: Any = None  # the CompiledTokenIds, made on first use; False without numba
        self._coverage_codes: np.ndarray | None = None  # what coverage counts, per id (coverage_codes)

    def _compiled_ids(self) -> Any:
        """The compiled tokenizer (made on first use; call with the lock held), or None where
        numba cannot be imported."""
        if self._compiled is None:
            try:
                from probsent.text.compiled_tokenize import CompiledTokenIds
            except ImportError:
                self._compiled = False
            else:
                self._compiled = CompiledTokenIds(self.index, self.max_tokens,
                                                  open_vocabulary=getattr(self.index, "resolves_every_token", False))
        return None if self._compiled is False else self._compiled

    def _sync(self) -> None:
        """Give every piece the tokenizer has numbered its ids (``_ids[_starts[p]:_starts[p + 1]]``)."""
        generation, kept = self.tokenizer.generation, self.tokenizer.kept
        if self._generation != generation:
            if self._generation == generation - 1 and len(kept) and kept.max() < self._known:
                # the new numbering starts with old pieces: carry their ids over
                begin = self._starts[kept]
                lengths = self._starts[kept + 1] - begin
                starts = np.zeros(len(kept) + 1, dtype=np.int64)
                np.cumsum(lengths, out=starts[1:])
                self._ids = self._ids[np.repeat(begin - starts[:-1], lengths) + np.arange(starts[-1])]
                self._starts, self._known = starts, len(kept)
            else:
                self._ids, self._starts, self._known = np.zeros(0, np.int64), np.zeros(1, np.int64), 0
            self._generation = generation
        count = len(self.tokenizer)
        if count == self._known:
            return
        new = self.tokenizer.tokens[self._known:count]
        lengths = np.fromiter(map(len, new), dtype=np.int64, count=len(new))
        ids_of = getattr(self.index, "ids_of", None)  # an open vocabulary's bulk lookup (EstimatingIndex)
        if ids_of is not None:
            ids = np.array(ids_of(list(chain.from_iterable(new))), dtype=np.int64)
        else:
            get = self.index.get
            ids = np.fromiter((get(t, 0) for tokens in new for t in tokens), dtype=np.int64,
                              count=int(lengths.sum()))
        end = int(self._starts[self._known])
        if len(self._starts) < count + 1:
            self._starts = _grown(self._starts, 2 * (count + 1))
        self._starts[self._known + 1:count + 1] = end + np.cumsum(lengths)
        if len(self._ids) < end + len(ids):
            self._ids = _grown(self._ids, 2 * (end + len(ids)))
        self._ids[end:end + len(ids)] = ids
        self._known = count

    def __call__(self, sentences: Sequence[str] | Utf8Texts) -> tuple[np.ndarray, np.ndarray]:
        """(ids, offsets): sentence i's first ``max_tokens`` tokens' ids are
        ``ids[offsets[i]:offsets[i + 1]]`` (both int64; ``offsets`` has one more entry). A
        :class:`Utf8Texts` may hold None (no tokens)."""
        if isinstance(sentences, Utf8Texts) or len(sentences) >= COMPILED_SENTENCES:
            with self._lock:
                compiled = self._compiled_ids()
                if compiled is not None:
                    return compiled(sentences)
            if isinstance(sentences, Utf8Texts):
                sentences = [s if s is not None else "" for s in sentences]
        cap = self.max_tokens
        sentences = [capped_text(s, cap) for s in sentences]  # a long line costs what its cap does
        with self._lock:
            pieces = self.tokenizer.split(sentences)
            self._sync()
            starts = self._starts[pieces.numbers]
            lengths = self._starts[pieces.numbers + 1] - starts
            before = np.zeros(len(lengths) + 1, dtype=np.int64)  # tokens before each piece
            np.cumsum(lengths, out=before[1:])
            total = int(before[-1])
            ids = self._ids[np.repeat(starts - before[:-1], lengths) + np.arange(total)]
        offsets = before[np.concatenate(([0], pieces.ends))]
        counts = np.diff(offsets)
        if len(counts) and counts.max() > self.max_tokens:  # each sentence's first max_tokens
            position = np.arange(total) - np.repeat(offsets[:-1], counts)
            ids = ids[position < self.max_tokens]
            offsets = np.concatenate(([0], np.cumsum(np.minimum(counts, self.max_tokens))))
        return ids, offsets

    def counts(self, sentences: Sequence[str | None] | Utf8Texts) -> np.ndarray:
        """Each sentence's token count as it is scored (at most ``max_tokens``; 0 for None), as
        float64: the length feature of a length-aware calibration."""
        if isinstance(sentences, Utf8Texts):
            return np.diff(self(sentences)[1]).astype(np.float64)
        present = [i for i, s in enumerate(sentences) if isinstance(s, str)]
        counts = np.zeros(len(sentences))
        if present:
            counts[present] = np.diff(self([sentences[i] for i in present])[1])
        return counts

    def coverage(self, sentences: Sequence[str | None] | Utf8Texts, model_only: bool = False) -> np.ndarray:
        """Each sentence's share of tokens (its first ``max_tokens``) that the model or English
        knows (:func:`known_share`; ``model_only``: with an entry of their own), float64; NaN for
        a sentence without tokens (or None)."""
        if not isinstance(sentences, Utf8Texts):
            sentences = [s if isinstance(s, str) else "" for s in sentences]
        return known_share(*self(sentences), self.coverage_codes, model_only)

    @property
    def coverage_codes(self) -> np.ndarray:
        """:func:`coverage_codes` of the index, made on first use."""
        if self._coverage_codes is None:
            self._coverage_codes = coverage_codes(self.index)
        return self._coverage_codes

    def tokens(self, sentence: str) -> list[str]:
        """The sentence's first ``max_tokens`` tokens."""
        with self._lock:
            return self.tokenizer.tokenize_many([capped_text(sentence, self.max_tokens)])[0][:self.max_tokens]
