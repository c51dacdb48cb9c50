"""A block of a pair file's lines (or a Parquet / JSON Lines file's rows) to token ids, by the
compiled tokenizer, in any process.

:func:`tokenize_block` reads whole lines (``s1<TAB>s2[<TAB>source]``) as
:func:`probsent.data.pairs.read_tokenized_pairs` reads them (the readable reference, tested
equal on the shared training pairs): the same pairs kept, the same lines skipped for the same
reason, the same tokens, cut at the same place. The fields are found with NumPy and both sides
of every line go to :class:`probsent.text.compiled_tokenize.CompiledTokenIds` with an open
vocabulary at once, so no Python object is made per line except for the few lines skipped.

Each process numbers the words it meets itself (in order of first appearance, across the blocks
it reads); a :class:`TokenBlock` carries the words that process numbered since its previous
block, so the caller (:mod:`probsent.data.mapped_pairs`) can turn each process's numbers into its own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from probsent.text.compiled_tokenize import CompiledTokenIds, OpenVocabulary
from probsent.text.utf8_texts import Utf8Texts

__all__ = ["ColumnBlock", "TokenBlock", "tokenize_block"]


@dataclass
class TokenBlock:
    """The pairs of one block of lines, with ids in the numbering of process ``process``."""

    process: int  # the pid of the process that numbered the words
    new_words: list[str]  # the words that process numbered since its previous block, by number
    ids: np.ndarray  # int32: each kept sentence's tokens, one after the other (2i: s1, 2i + 1: s2)
    lengths: np.ndarray  # int32, one per kept sentence (at most max_tokens)
    pair_lines: np.ndarray  # int64: the line (0-based, in the block) of each kept pair
    truncated: np.ndarray  # int8: the sentences of each kept pair cut at max_tokens (0, 1 or 2)
    source_codes: np.ndarray  # int32 per kept pair, indexing source_names
    source_names: list[str]  # the third field (stripped), in order of first appearance in the block
    skipped_lines: np.ndarray  # int64: the lines (0-based, in the block) skipped
    skipped_reasons: list[str]  # why, one per skipped line (the reference's words)
    lines: int  # lines in the block


class _Reader:
    """This process's compiled tokenizer with its open vocabulary, and the words it reported."""

    def __init__(self, max_tokens: int) -> None:
        self.words = OpenVocabulary()
        self.tokenizer = CompiledTokenIds(self.words, max_tokens + 1, max_pieces=1 << 20, max_key_bytes=32 << 20,
                                          open_vocabulary=True)
        self.reported = 0

    def new_words(self) -> list[str]:
        words = list(self.words)[self.reported:]
        self.reported += len(words)
        return words


_READER: dict[tuple[str, int], _Reader] = {}  # this process's reader of the file being read


def _line_bounds(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, newlines) of the lines of ``data`` (which ends with a newline): ``ends``
    without the line end (``str.rstrip("\\r\\n")`` of the line)."""
    newlines = np.flatnonzero(data == 10)
    starts = np.concatenate(([0], newlines[:-1] + 1)).astype(np.int64)
    ends = newlines.astype(np.int64)
    while True:  # carriage returns before the newline
        cr = (ends > starts) & (data[np.maximum(ends - 1, 0)] == 13)
        if not cr.any():
            return starts, ends, newlines
        ends -= cr


def _valid_utf8(raw: bytes, starts: np.ndarray, newlines: np.ndarray) -> np.ndarray:
    """Whether each line is valid UTF-8 (the whole block decoded once; line by line only if not)."""
    try:
        raw.decode("utf-8")
        return np.ones(len(starts), dtype=bool)
    except UnicodeDecodeError:
        valid = np.ones(len(starts), dtype=bool)
        for i, (start, end) in enumerate(zip(starts.tolist(), newlines.tolist())):
            try:
                raw[start:end].decode("utf-8")
            except UnicodeDecodeError:
                valid[i] = False
        return valid


def _fields(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """(tabs per line, s1 end, s2 start, s2 end, source start, source end): s1 starts at the line."""
    tabs = np.flatnonzero(data == 9)
    tabs = tabs[tabs < ends[-1]] if len(ends) else tabs[:0]
    line = np.searchsorted(starts, tabs, side="right") - 1
    inside = tabs < ends[line]
    tabs, line = tabs[inside], line[inside]
    rank = np.arange(len(tabs)) - np.searchsorted(line, line, side="left")
    count = np.bincount(line, minlength=len(starts))
    nth = []
    for k in range(3):
        at = np.full(len(starts), -1, dtype=np.int64)
        at[line[rank == k]] = tabs[rank == k]
        nth.append(at)
    s2_end = np.where(count >= 2, nth[1], ends)
    source_start = np.where(count >= 2, nth[1] + 1, ends)
    source_end = np.where(count >= 3, nth[2], ends)
    return count, nth[0], nth[0] + 1, s2_end, source_start, source_end


def _skip_reason(raw: bytes, start: int, newline: int, valid: bool, tabs: int) -> str:
    """Why the reference skips a line that gives no pair."""
    if not valid:
        return "not UTF-8"
    if not raw[start:newline + 1].decode("utf-8").strip():
        return "blank line"
    return "no tab" if tabs == 0 else "sentence with no token"


@dataclass
class ColumnBlock:
    """Rows of a Parquet or JSON Lines pair file: the two sentences (None: null) and each row's
    source as a code into ``source_names``."""

    first: Utf8Texts
    second: Utf8Texts
    source_codes: np.ndarray  # int32 per row
    source_names: list[str]  # the source column's distinct values as text ("" for null)


def _tsv_sentences(raw: bytes):
    """(both sides of every line as texts, whether the line has two fields, why a line is skipped,
    the sources of some lines) of TSV lines (see :func:`tokenize_block`)."""
    data = np.frombuffer(raw, dtype=np.uint8)
    starts, ends, newlines = _line_bounds(data)
    valid = _valid_utf8(raw, starts, newlines)
    tabs, s1_end, s2_start, s2_end, source_start, source_end = _fields(data, starts, ends)
    has_pair = valid & (tabs >= 1)
    sentence_starts = np.stack([starts, s2_start], axis=1).ravel()
    sentence_ends = np.stack([np.where(has_pair, s1_end, starts), np.where(has_pair, s2_end, starts)], axis=1).ravel()
    texts = Utf8Texts(data, sentence_starts, sentence_ends, np.repeat(has_pair, 2))

    def reason(line: int) -> str:
        return _skip_reason(raw, int(starts[line]), int(newlines[line]), bool(valid[line]), int(tabs[line]))

    return texts, has_pair, reason, lambda lines: _sources(raw, source_start[lines], source_end[lines])


def _column_sentences(block: ColumnBlock):
    """:func:`_tsv_sentences` of a :class:`ColumnBlock` (a row with a null side is skipped)."""
    first, second = block.first, block.second
    rows = len(first)
    present = [np.ones(rows, dtype=bool) if texts.valid is None else np.asarray(texts.valid, dtype=bool)
               for texts in (first, second)]
    has_pair = present[0] & present[1]
    shift = len(first.data)
    texts = Utf8Texts(np.concatenate([first.data, second.data]),
                      np.stack([first.starts, second.starts + shift], axis=1).ravel(),
                      np.stack([first.ends, second.ends + shift], axis=1).ravel(), np.repeat(has_pair, 2))

    def reason(row: int) -> str:
        return "sentence with no token" if has_pair[row] else "null sentence"

    return texts, has_pair, reason, lambda kept: (block.source_codes[kept], block.source_names)


def tokenize_block(block: bytes | ColumnBlock, max_tokens: int, reading: str) -> TokenBlock:
    """The pairs of ``block``: TSV lines (bytes, the last one ending with a newline) or the rows
    of a :class:`ColumnBlock`, each sentence cut at its first ``max_tokens`` tokens (see the
    module's docstring). ``reading`` names the reading of a file: the first block of another
    reading starts a new numbering of the words."""
    reader = _READER.get((reading, max_tokens))
    if reader is None:
        _READER.clear()
        reader = _READER[reading, max_tokens] = _Reader(max_tokens)
    texts, has_pair, reason, sources = (_tsv_sentences(block) if isinstance(block, bytes)
                                        else _column_sentences(block))
    ids, offsets = reader.tokenizer(texts)
    lengths = np.diff(offsets).reshape(-1, 2)
    kept = has_pair & (lengths.min(axis=1) > 0)
    pair_lines = np.flatnonzero(kept)
    kept_lengths = lengths[pair_lines]
    cut = np.minimum(kept_lengths, max_tokens).ravel()
    first = offsets[:-1].reshape(-1, 2)[pair_lines].ravel()
    before = np.zeros(len(cut) + 1, dtype=np.int64)
    np.cumsum(cut, out=before[1:])
    tokens = ids[np.repeat(first - before[:-1], cut) + np.arange(before[-1])]
    skipped = np.flatnonzero(~kept)
    codes, names = sources(pair_lines)
    return TokenBlock(os.getpid(), reader.new_words(), tokens.astype(np.int32), cut.astype(np.int32),
                      pair_lines, (kept_lengths > max_tokens).sum(axis=1).astype(np.int8),
                      np.asarray(codes, dtype=np.int32), list(names), skipped, [reason(i) for i in skipped.tolist()],
                      len(has_pair))


def _sources(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(code per pair, names): the third fields, stripped as ``str.strip`` does, numbered in
    order of first appearance."""
    lengths = ends - starts
    if not len(starts) or not lengths.any():
        return np.zeros(len(starts), dtype=np.int32), [""]
    width = int(lengths.max())
    if width <= 64:  # short fields: distinct rows of a byte matrix (its last 8 bytes the length)
        data = np.frombuffer(raw, dtype=np.uint8)
        matrix = np.zeros((len(starts), width + 8), dtype=np.uint8)
        column = np.arange(width)
        inside = column[None, :] < lengths[:, None]
        matrix[:, :width][inside] = data[(starts[:, None] + column[None, :])[inside]]
        matrix[:, width:] = lengths.astype("<i8").view(np.uint8).reshape(-1, 8)
        rows = matrix.view(np.dtype((np.void, width + 8))).ravel()
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
        by_appearance = np.argsort(first, kind="stable")
        position = np.empty(len(first), dtype=np.int64)
        position[by_appearance] = np.arange(len(first))
        codes = position[inverse.ravel()]
        keys = [raw[starts[i]:ends[i]] for i in first[by_appearance].tolist()]
    else:
        numbers: dict[bytes, int] = {}
        number = numbers.setdefault
        codes = np.fromiter((number(raw[a:b], len(numbers)) for a, b in zip(starts.tolist(), ends.tolist())),
                            dtype=np.int64, count=len(starts))
        keys = list(numbers)
    names: dict[str, int] = {}
    to_name = np.array([names.setdefault(key.decode("utf-8").strip(), len(names)) for key in keys], dtype=np.int32)
    return to_name[codes], list(names)
