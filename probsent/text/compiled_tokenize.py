"""The tokenizer of :mod:`probsent.text.tokenize` compiled: a whole batch of UTF-8 text to vocabulary ids.

:class:`CompiledTokenIds` gives what :class:`probsent.text.token_ids.TokenIds` gives (each
sentence's first ``max_tokens`` tokens as vocabulary ids, flat, with offsets), equal to
tokenizing every sentence with :func:`probsent.text.tokenize.tokenize` and looking each token up,
but a numba kernel reads the batch's bytes (:class:`probsent.text.utf8_texts.Utf8Texts`, straight
from an Arrow column or one encode of a list of str) and writes the ids: no Python object
per sentence, piece or token on the usual path. Corpus scoring uses it
(:mod:`probsent.text.token_ids` switches to it for large batches); the reference tokenizer stays
the specification, and ``tests/test_compiled_tokenize.py`` compares the two on every training
and evaluation sentence.

How
---
It rests on the piece argument of :mod:`probsent.text.piece_tokenize`: in a sentence whose lowered
text is printable (no whitespace but " "), the tokens are the concatenation of each
space-separated piece's tokens in its context (first piece of the sentence, last piece, last
piece followed by spaces, or none of these). The kernel walks the bytes once. For each piece
it lowers ASCII letters on the fly, hashes the bytes (FNV-1a) and takes one of two roads:

* **plain pieces, in the kernel**: ASCII letters and digits without the letter pairs of the
  words the contraction rules split (nn, mm, tt: cannot, gonna, ...), optionally followed by
  one of ``, : ; ? !`` or a period: exactly the shapes ``piece_tokenize.piece_tokens`` settles
  without the reference (the word; the word and the mark; for a period only in the last
  piece). Each token's id comes from an open-addressing table of the vocabulary's UTF-8 bytes
  (a token not in it is 0). About nine pieces in ten of the training text are plain.
* **every other piece, by a cache**: an open-addressing table keyed by the lowered bytes and
  the context holds each piece's ids. A piece not yet in it is numbered, and the sentence gets
  a placeholder; after the pass, Python tokenizes each new piece once with
  ``piece_tokenize.piece_tokens`` (the reference between neutral neighbours), looks its tokens
  up, and a second small kernel replaces the placeholders. Non-ASCII text takes this road too
  (the piece is decoded and lowered by Python's ``str.lower``, which is the same piece by
  piece as on the whole sentence: a space is neither cased nor case-ignorable, so not even the
  final-sigma rule looks across it).

A sentence goes to the reference whole (``token_cap.first_tokens`` on its decoded text) when
its lowered text is not printable: an ASCII control byte (tab, newline, ...), seen by the
kernel, or a piece whose lowered text is not printable (non-ASCII spaces and format
characters), seen when the piece is resolved and remembered in the cache; and when it has
more than ``max_tokens`` tokens (the reference's cap then decides where to cut). On the
shared training text that is 11 sentences of 2.5 million.

**An open vocabulary** (``open_vocabulary=True``, with an :class:`OpenVocabulary` as the
index: reading training pairs, whose words are not known beforehand): a plain word that the
vocabulary table does not hold goes to the cache as a piece of its own (context ``PLAIN``),
which Python settles as the one token it is; the index numbers every token the first time it
is asked for it, so every token gets an id and equal tokens get equal ids.

The cache is bounded (``max_pieces`` pieces, ``max_key_bytes`` bytes of keys): past that,
the next batch starts it afresh, so memory stays flat on any corpus. Plain pieces never enter
it. Not thread-safe: one per thread (``TokenIds`` holds a lock).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from numba import njit

from probsent.text.piece_tokenize import END, START, TRAIL, piece_tokens
from probsent.text.tokenize import first_tokens
from probsent.text.utf8_texts import ERRORS, TEXT_CODEC, Utf8Texts

__all__ = ["CompiledTokenIds", "OpenVocabulary"]

FIRST, LAST, TRAILING = 1, 2, 4  # a piece's context: first of its sentence, last, spaces after it
PLAIN = 8  # the context of a plain word cached by an open vocabulary (its one token is itself)
NO_ROOM = -(1 << 62)  # _plain_word's answer when the cache is full
NEW, KNOWN, REFUSED = 0, 1, 2  # a cached piece's state: ids not yet known; known; not printable
PENDING, FALLBACK = 1, 2  # a sentence's flags: holds a NEW piece; tokenized by the reference
MARKS = ",:;?!."  # the marks a plain word may end with

# The words the contraction rules split (cannot -> can not, ...) that have no apostrophe.
_SPLIT_WORDS = np.frombuffer(b"cannot gimme gonna gotta lemme wanna ", dtype=np.uint8).copy()

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _lower(byte: np.uint8) -> np.int64:  # pragma: no cover (compiled)
    """An ASCII letter lowered; any other byte as it is."""
    c = np.int64(byte)
    return c + 32 if 65 <= c <= 90 else c


@njit(cache=True, inline="always")
def _step(h: np.uint64, c: np.int64) -> np.uint64:  # pragma: no cover (compiled)
    """FNV-1a: the hash ``h`` of some bytes extended by the byte ``c``."""
    return (h ^ np.uint64(c)) * _FNV_PRIME


@njit(cache=True, inline="always")
def _slot(h: np.uint64, mask: int) -> np.int64:  # pragma: no cover (compiled)
    """A table slot for the hash ``h`` (its bits mixed first: murmur3's finalizer)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(mask))


@njit(cache=True, inline="always")
def _same(stored: np.ndarray, first: int, data: np.ndarray, begin: int, length: int) -> bool:  # pragma: no cover
    """Whether ``stored[first:first + length]`` is ``data[begin:begin + length]`` lowered."""
    for k in range(length):
        if stored[first + k] != _lower(data[begin + k]):
            return False
    return True


@njit(cache=True, inline="always")
def _split_word(data: np.ndarray, begin: int, length: int) -> bool:  # pragma: no cover (compiled)
    """Whether ``data[begin:begin + length]`` lowered is one of the words in _SPLIT_WORDS."""
    start = 0
    for end in range(len(_SPLIT_WORDS)):
        if _SPLIT_WORDS[end] == 32:
            if end - start == length and _same(_SPLIT_WORDS, start, data, begin, length):
                return True
            start = end + 1
    return False


@njit(cache=True)
def _reinsert(hashes: np.ndarray, slots: np.ndarray) -> None:  # pragma: no cover (compiled)
    """Put pieces 0, 1, ... (their hashes ``hashes``) in the empty table ``slots``."""
    mask = len(slots) - 1
    for p in range(len(hashes)):
        slot = _slot(hashes[p], mask)
        while slots[slot] >= 0:
            slot = (slot + 1) & mask
        slots[slot] = p


@njit(cache=True)
def _vocabulary_table(words: np.ndarray, starts: np.ndarray, slots: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Put word i (bytes ``words[starts[i]:starts[i + 1]]``, all distinct) in ``slots``
    (all -1, a power of two, at most half full); returns each word's hash."""
    hashes = np.zeros(len(starts) - 1, dtype=np.uint64)
    for w in range(len(hashes)):
        h = _FNV_OFFSET
        for k in range(starts[w], starts[w + 1]):
            h = _step(h, np.int64(words[k]))
        hashes[w] = h
    _reinsert(hashes, slots)
    return hashes


@njit(cache=True, inline="always")
def _probe(data: np.ndarray, begin: int, length: int, h: np.uint64, stored: np.ndarray, starts: np.ndarray,
           hashes: np.ndarray, slots: np.ndarray) -> np.int64:  # pragma: no cover (compiled)
    """In the table ``slots`` of entries e (bytes ``stored[starts[e]:starts[e + 1]]``, hash
    ``hashes[e]``): the slot of the entry ``data[begin:begin + length]`` lowered (hash ``h``),
    or of the empty slot where it would go."""
    mask = len(slots) - 1
    slot = _slot(h, mask)
    while True:
        e = slots[slot]
        if e < 0 or (hashes[e] == h and starts[e + 1] - starts[e] == length
                     and _same(stored, starts[e], data, begin, length)):
            return slot
        slot = (slot + 1) & mask


@njit(cache=True, inline="always")
def _piece(data: np.ndarray, begin: int, end: int, context: int, h: np.uint64, keys: np.ndarray,
           key_starts: np.ndarray, contexts: np.ndarray, hashes: np.ndarray, states: np.ndarray,
           slots: np.ndarray, sizes: np.ndarray) -> np.int64:  # pragma: no cover (compiled)
    """The number of the piece ``data[begin:end]`` (lowered; hash ``h``) in ``context``,
    numbered now (state NEW) if the cache does not hold it; -1 if there is no room for it
    (``sizes[1]``: the key bytes that would take)."""
    # The context is part of the key: equal bytes in another context hash differently (one
    # more FNV step, a bijection of the hash for each context), so equal hashes and bytes
    # mean equal contexts.
    h = _step(h, np.int64(context) + 256)
    length = end - begin
    slot = _probe(data, begin, length, h, keys, key_starts, hashes, slots)
    if slots[slot] >= 0:
        return slots[slot]
    count = sizes[0]
    used = key_starts[count]
    if count + 1 > len(contexts) or used + length > len(keys) or 2 * (count + 1) > len(slots):
        sizes[1] = used + length  # the key bytes it needs
        return -1
    for k in range(length):
        keys[used + k] = _lower(data[begin + k])
    key_starts[count + 1] = used + length
    contexts[count] = context
    hashes[count] = h
    states[count] = NEW
    slots[slot] = count
    sizes[0] = count + 1
    return count


@njit(cache=True, inline="always")
def _plain_word(data: np.ndarray, begin: int, end: int, h: np.uint64, words: np.ndarray, word_starts: np.ndarray,
                word_hashes: np.ndarray, word_ids: np.ndarray, word_slots: np.ndarray, open_words: bool,
                forms: np.ndarray, keys: np.ndarray, key_starts: np.ndarray, contexts: np.ndarray, hashes: np.ndarray,
                states: np.ndarray, id_starts: np.ndarray, ids: np.ndarray, slots: np.ndarray,
                sizes: np.ndarray) -> np.int64:  # pragma: no cover (compiled)
    """The id of the plain word ``data[begin:end]`` (hash ``h``): from the vocabulary table; a
    word not in it is 0, or with ``open_words`` its form's id (``forms``: a word of letters, or
    of letters then digits, where the index gives them) or a PLAIN piece of the cache: its id
    once known, ``-(p + 1)`` while it is NEW, NO_ROOM when the cache has no room for it."""
    w = word_slots[_probe(data, begin, end - begin, h, words, word_starts, word_hashes, word_slots)]
    if w >= 0:
        return word_ids[w]
    if not open_words:
        return 0
    if forms[0] >= 0 and 97 <= _lower(data[begin]) <= 122:
        # an open vocabulary's form classes: a word of letters (forms[0]), or letters then
        # letters and digits (forms[1]), needs no Python; one with a hyphen or any other mark
        # (a "word." piece that does not end its sentence) goes to the cache
        digits = other = False
        for k in range(begin, end):
            c = _lower(data[k])
            digit = 48 <= c <= 57
            digits = digits or digit
            other = other or not (digit or 97 <= c <= 122)
        if not other:
            return forms[1] if digits else forms[0]
    p = _piece(data, begin, end, PLAIN, h, keys, key_starts, contexts, hashes, states, slots, sizes)
    if p < 0:
        return NO_ROOM
    if states[p] == NEW:
        return -(p + 1)
    return ids[id_starts[p]]


@njit(cache=True)
def _scan(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, valid: np.ndarray, first_text: int,
          max_tokens: int, words: np.ndarray, word_starts: np.ndarray, word_hashes: np.ndarray,
          word_ids: np.ndarray, word_slots: np.ndarray, open_words: bool, forms: np.ndarray, mark_ids: np.ndarray,
          keys: np.ndarray, key_starts: np.ndarray, contexts: np.ndarray, hashes: np.ndarray,
          states: np.ndarray, id_starts: np.ndarray, ids: np.ndarray, slots: np.ndarray, sizes: np.ndarray,
          out: np.ndarray, out_ends: np.ndarray, flags: np.ndarray) -> np.int64:  # pragma: no cover
    """Tokenize texts ``first_text``, ``first_text + 1``, ... into ``out``: per token its id,
    or ``-(p + 1)`` for all the tokens of a NEW cached piece p; text i's entries end at
    ``out_ends[i]``, its flags are ``flags[i]`` (a FALLBACK text has no entries). Returns the
    number of texts, or the text to start again from once the arrays have more room
    (``sizes[2]``: the entries ``out`` needs)."""
    position = out_ends[first_text - 1] if first_text > 0 else 0
    capacity = len(out)
    for i in range(first_text, len(starts)):
        flags[i] = 0
        begin = position
        if not valid[i]:
            out_ends[i] = position
            continue
        j, end = starts[i], ends[i]
        count = 0  # tokens so far (a NEW piece counted as one)
        while j < end:
            if data[j] == 32:
                j += 1
                continue
            # a piece: its bytes lowered and hashed, and its leading run of word bytes (ASCII
            # letters, digits and hyphens)
            piece = j
            h = _FNV_OFFSET
            body = _FNV_OFFSET  # the hash without the last byte
            run = 0
            pair = False  # nn, mm or tt within the run
            hyphen = False  # a hyphen within the run
            dash = False  # two hyphens in a row within the run
            previous = np.int64(-1)
            control = False
            while j < end:
                c = _lower(data[j])
                if c == 32:
                    break
                if c < 32 or c == 127:
                    control = True
                    break
                body = h
                h = _step(h, c)
                if run == j - piece and (97 <= c <= 122 or 48 <= c <= 57 or c == 45):
                    run += 1
                    if c == previous and (c == 110 or c == 109 or c == 116 or c == 45):
                        pair = pair or c != 45
                        dash = dash or c == 45
                    hyphen = hyphen or c == 45
                previous = c
                j += 1
            if control:
                flags[i] = FALLBACK
                break
            length = j - piece
            after = j
            while after < end and data[after] == 32:
                after += 1
            context = FIRST if piece == starts[i] else 0
            if after == end:
                context |= LAST | (TRAILING if j < end else 0)
            j = after
            if position + 2 > capacity:
                sizes[2] = position + 2
                return i
            mark = _lower(data[piece + length - 1])
            # a run that is a plain word: one token, itself, unless "--" pads it or a
            # contraction rule splits it (a whole run that is a word of _SPLIT_WORDS; with
            # hyphens, a part of it may be one: left to the cache)
            plain = not dash and not (pair and (hyphen or _split_word(data, piece, run)))
            with_mark = (run == length - 1 and length > 1 and plain
                         and (mark != 46 or (context & LAST) != 0) and mark_ids[mark] >= 0)
            if (run == length and plain) or with_mark or (run == length - 1 and length > 1 and plain
                                                          and mark == 46):
                # a plain word (with_mark: and a mark; else the whole piece, "word." not last included)
                word_end = piece + length - 1 if with_mark else piece + length
                token = _plain_word(data, piece, word_end, body if with_mark else h, words, word_starts,
                                    word_hashes, word_ids, word_slots, open_words, forms, keys, key_starts,
                                    contexts, hashes, states, id_starts, ids, slots, sizes)
                if token == NO_ROOM:
                    return i
                if token < 0:
                    flags[i] |= PENDING
                out[position] = token
                position += 1
                count += 1
                if with_mark:
                    out[position] = mark_ids[mark]
                    position += 1
                    count += 1
            else:  # any other piece: the cache
                p = _piece(data, piece, piece + length, context, h, keys, key_starts, contexts, hashes,
                           states, slots, sizes)
                if p < 0:
                    return i
                if states[p] == REFUSED:
                    flags[i] = FALLBACK
                    break
                if states[p] == NEW:
                    out[position] = -(p + 1)
                    position += 1
                    count += 1
                    flags[i] |= PENDING
                else:
                    first, last = id_starts[p], id_starts[p + 1]
                    if position + (last - first) > capacity:
                        sizes[2] = position + (last - first)
                        return i
                    for k in range(first, last):
                        out[position] = ids[k]
                        position += 1
                    count += last - first
            if count > max_tokens:  # the reference's cap decides where to cut
                flags[i] = FALLBACK
                break
        if flags[i] & FALLBACK:
            position = begin
        out_ends[i] = position
    return len(starts)


@njit(cache=True)
def _refuse(out: np.ndarray, out_ends: np.ndarray, flags: np.ndarray, states: np.ndarray) -> None:  # pragma: no cover
    """Flag FALLBACK the PENDING texts that hold a piece found REFUSED."""
    begin = 0
    for i in range(len(out_ends)):
        end = out_ends[i]
        if flags[i] & PENDING:
            for k in range(begin, end):
                if out[k] < 0 and states[-out[k] - 1] == REFUSED:
                    flags[i] |= FALLBACK
                    break
        begin = end


@njit(cache=True)
def _expand(out: np.ndarray, out_ends: np.ndarray, flags: np.ndarray, id_starts: np.ndarray, ids: np.ndarray,
            fallback_ids: np.ndarray, fallback_ends: np.ndarray, max_tokens: int):  # pragma: no cover
    """(ids, offsets) of every text: ``out`` with each NEW piece's ids in place of its
    placeholder, each text cut at ``max_tokens``; FALLBACK text number f (in order) takes
    ``fallback_ids[fallback_ends[f]:fallback_ends[f + 1]]``."""
    n = len(out_ends)
    offsets = np.zeros(n + 1, dtype=np.int64)
    begin, f = 0, 0
    for i in range(n):
        end = out_ends[i]
        if flags[i] & FALLBACK:
            length = fallback_ends[f + 1] - fallback_ends[f]
            f += 1
        else:
            length = 0
            for k in range(begin, end):
                length += 1 if out[k] >= 0 else id_starts[-out[k]] - id_starts[-out[k] - 1]
            length = min(length, max_tokens)
        offsets[i + 1] = offsets[i] + length
        begin = end
    result = np.empty(offsets[n], dtype=np.int64)
    begin, f = 0, 0
    for i in range(n):
        end = out_ends[i]
        position, stop = offsets[i], offsets[i + 1]
        if flags[i] & FALLBACK:
            for k in range(fallback_ends[f], fallback_ends[f + 1]):
                result[position] = fallback_ids[k]
                position += 1
            f += 1
        else:
            for k in range(begin, end):
                if position == stop:
                    break
                if out[k] >= 0:
                    result[position] = out[k]
                    position += 1
                else:
                    p = -out[k] - 1
                    for m in range(id_starts[p], id_starts[p + 1]):
                        if position == stop:
                            break
                        result[position] = ids[m]
                        position += 1
        begin = end
    return result, offsets


def _grown(array: np.ndarray, size: int, fill: int = 0) -> np.ndarray:
    """``array`` followed by ``fill``, ``size`` long."""
    out = np.full(size, fill, dtype=array.dtype)
    out[:len(array)] = array
    return out


def _table_size(count: int) -> int:
    """A power of two at least twice ``count`` (and at least 1,024)."""
    return 1 << max(10, (2 * count).bit_length())


class OpenVocabulary(dict):
    """token -> id where ``get`` numbers a token it has not seen (0, 1, 2, ... in order of first
    request): the index of a :class:`CompiledTokenIds` with ``open_vocabulary=True``."""

    resolves_every_token = True

    def get(self, token, default=None):  # type: ignore[override]
        return self.setdefault(token, len(self))


class CompiledTokenIds:
    """Vocabulary ids of a batch's tokens, by the compiled kernel (see the module's docstring).

    ``index`` maps each token to its id (a token not in it is 0). With ``open_vocabulary``,
    ``index`` gives every token an id: an :class:`OpenVocabulary` that numbers every new token
    (see the module's docstring), or a model's open vocabulary
    (:class:`probsent.data.vocab.EstimatingIndex`: a word without an entry is read by
    its class). Not thread-safe.
    """

    def __init__(self, index: Mapping[str, int], max_tokens: int, max_pieces: int = 200_000,
                 max_key_bytes: int = 4 << 20, open_vocabulary: bool = False) -> None:
        if open_vocabulary and not getattr(index, "resolves_every_token", False):
            raise TypeError("an open vocabulary's index gives every token an id (an OpenVocabulary, or an "
                            "EstimatingIndex)")
        self.index = index
        self.open_vocabulary = open_vocabulary
        self.max_tokens = max_tokens
        self.max_pieces, self.max_key_bytes = max_pieces, max_key_bytes
        encoded = [word.encode(TEXT_CODEC, ERRORS) for word in index]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        self._words = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
        self._word_starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        self._word_ids = np.fromiter(index.values(), dtype=np.int64, count=len(encoded))
        if hasattr(index, "table_words"):
            # an open vocabulary's words that the kernel reads without Python (an EstimatingIndex's
            # English words: their UTF-8 bytes, starts and the ids its get gives them)
            data, starts, ids = index.table_words()
            self._words = np.concatenate([self._words, data])
            self._word_starts = np.concatenate([self._word_starts, self._word_starts[-1] + starts[1:]])
            self._word_ids = np.concatenate([self._word_ids, ids])
        self._word_slots = np.full(_table_size(len(self._word_ids)), -1, dtype=np.int32)
        # an open vocabulary's ids of a plain word of letters, and of letters then digits, that
        # the table lacks ([-1, -1]: none, such a word goes to the cache)
        self._forms = np.array(index.kernel_forms() if hasattr(index, "kernel_forms") else (-1, -1), dtype=np.int64)
        self._word_hashes = _vocabulary_table(self._words, self._word_starts, self._word_slots)
        self._mark_ids = np.full(256, -1, dtype=np.int64)  # per byte; -1: not a mark
        for mark in MARKS:
            self._mark_ids[ord(mark)] = index.get(mark, 0)
        self.texts = self.fallbacks = self.settled = 0  # counts: texts, by the reference, pieces
        self._reset(1024)

    def _reset(self, pieces: int) -> None:
        """An empty cache with room for ``pieces`` pieces."""
        self._keys = np.zeros(16 * pieces, dtype=np.uint8)
        self._key_starts = np.zeros(pieces + 1, dtype=np.int64)
        self._contexts = np.zeros(pieces, dtype=np.int8)
        self._hashes = np.zeros(pieces, dtype=np.uint64)
        self._states = np.zeros(pieces, dtype=np.int8)
        self._id_starts = np.zeros(pieces + 1, dtype=np.int64)
        self._ids = np.zeros(4 * pieces, dtype=np.int64)
        self._slots = np.full(_table_size(pieces), -1, dtype=np.int32)
        self._sizes = np.zeros(3, dtype=np.int64)  # pieces numbered; room the kernel asked for
        self._known = 0  # pieces whose state is settled (KNOWN or REFUSED)

    def __len__(self) -> int:
        """The number of pieces in the cache."""
        return int(self._sizes[0])

    def _make_room(self) -> None:
        """Grow the cache where the kernel ran out of room."""
        count = len(self)
        if count + 1 > len(self._contexts) or 2 * (count + 1) > len(self._slots):
            size = 2 * len(self._contexts)
            self._key_starts = _grown(self._key_starts, size + 1)
            self._contexts = _grown(self._contexts, size)
            self._hashes = _grown(self._hashes, size)
            self._states = _grown(self._states, size)
            self._id_starts = _grown(self._id_starts, size + 1)
            self._slots = np.full(_table_size(size), -1, dtype=np.int32)
            _reinsert(self._hashes[:count], self._slots)
        if self._sizes[1] > len(self._keys):
            self._keys = _grown(self._keys, 2 * int(self._sizes[1]))
        self._sizes[1] = 0

    def _settle(self) -> None:
        """Tokenize each NEW piece once (the reference between neutral neighbours) and store
        its ids, or mark it REFUSED (its lowered text is not printable)."""
        count = len(self)
        get = self.index.get
        # a plain word that the kernel's table lacks (an open vocabulary's): the index's own
        # shortcut where it has one (the same id as its get), else its get
        plain = getattr(self.index, "missing_plain_word", None) or (lambda word: get(word, 0))
        keys, key_starts, contexts = self._keys, self._key_starts, self._contexts
        new_ids: list[int] = []
        lengths = np.zeros(count - self._known, dtype=np.int64)
        for n, p in enumerate(range(self._known, count)):
            text = bytes(keys[key_starts[p]:key_starts[p + 1]]).decode(TEXT_CODEC, ERRORS).lower()
            if not text.isprintable():
                self._states[p] = REFUSED
                continue
            context = int(contexts[p])
            if context == PLAIN:  # a plain word of an open vocabulary: the token itself
                new_ids.append(plain(text))
                lengths[n] = 1
                self._states[p] = KNOWN
                continue
            tokens = piece_tokens((START if context & FIRST else "") + text
                                  + (TRAIL if context & TRAILING else "") + (END if context & LAST else ""))
            new_ids.extend(get(t, 0) for t in tokens)
            lengths[n] = len(tokens)
            self._states[p] = KNOWN
        self.settled += count - self._known
        used = int(self._id_starts[self._known])
        if used + len(new_ids) > len(self._ids):
            self._ids = _grown(self._ids, 2 * (used + len(new_ids)))
        self._ids[used:used + len(new_ids)] = new_ids
        self._id_starts[self._known + 1:count + 1] = used + np.cumsum(lengths)
        self._known = count

    def __call__(self, texts: Sequence[str | None] | Utf8Texts) -> tuple[np.ndarray, np.ndarray]:
        """(ids, offsets): text i's first ``max_tokens`` tokens' ids are
        ``ids[offsets[i]:offsets[i + 1]]`` (both int64; a None text has none)."""
        if not isinstance(texts, Utf8Texts):
            texts = Utf8Texts.from_strings(texts)
        if len(self) > self.max_pieces or self._key_starts[len(self)] > self.max_key_bytes:
            self._reset(1024)
        count = len(texts)
        self.texts += count
        valid = np.ones(count, dtype=bool) if texts.valid is None else texts.valid
        out = np.empty(len(texts.data) // 2 + 1024, dtype=np.int64)
        out_ends = np.zeros(count, dtype=np.int64)
        flags = np.zeros(count, dtype=np.uint8)
        done = 0
        while True:
            done = _scan(texts.data, texts.starts, texts.ends, valid, done, self.max_tokens, self._words,
                         self._word_starts, self._word_hashes, self._word_ids, self._word_slots,
                         self.open_vocabulary, self._forms, self._mark_ids, self._keys, self._key_starts, self._contexts,
                         self._hashes, self._states, self._id_starts, self._ids, self._slots, self._sizes, out,
                         out_ends, flags)
            if done == count:
                break
            self._make_room()
            if self._sizes[2] > len(out):
                out = _grown(out, 2 * int(self._sizes[2]))
            self._sizes[2] = 0
        if len(self) > self._known:
            self._settle()
            _refuse(out, out_ends, flags, self._states)
        if not flags.any():
            return out[:out_ends[-1] if count else 0].copy(), np.concatenate(([0], out_ends))
        fallback = np.flatnonzero(flags & FALLBACK)
        self.fallbacks += len(fallback)
        get = self.index.get
        fallback_tokens = [first_tokens(texts.text(i), self.max_tokens) for i in fallback.tolist()]
        fallback_ids = np.fromiter((get(t, 0) for tokens in fallback_tokens for t in tokens), dtype=np.int64,
                                   count=sum(map(len, fallback_tokens)))
        fallback_ends = np.concatenate(([0], np.cumsum([len(t) for t in fallback_tokens], dtype=np.int64)))
        return _expand(out, out_ends, flags, self._id_starts, self._ids, fallback_ids,
                       fallback_ends.astype(np.int64), self.max_tokens)
