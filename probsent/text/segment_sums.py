"""Sums of consecutive segments of a float64 array, each equal bit for bit to NumPy's ``sum``.

``values[offsets[i]:offsets[i + 1]].sum()`` is what the reference scoring path computes for
each sentence (the sentence's word terms). NumPy sums a contiguous float64 array pairwise:

* fewer than 8 values: left to right, starting from 0.0;
* 8 to 128 values: eight running sums r_j = a_j + a_(j+8) + ... over the whole blocks of
  eight, combined as ((r_0 + r_1) + (r_2 + r_3)) + ((r_4 + r_5) + (r_6 + r_7)), then the
  last n mod 8 values added left to right;
* more than 128: the two halves (the first one a multiple of 8 long) summed that way, added.

:func:`segment_sums` does the first two for all segments at once, column by column across
segments (padding with 0.0, which changes no sum: x + 0.0 == x, and a -0.0 total only where
the sum is zero), and calls NumPy's ``sum`` on the rare longer segments. ``np.add.reduceat``
would be one call but sums in another order (it differs in the last bit for most lengths),
so scores would not equal the reference bit for bit. ``tests/test_segment_sums.py`` compares
with ``sum`` for every length up to 600.

:func:`term_sums` is what scoring calls: ``segment_sums(terms[ids], offsets)``, which for
batches of ``COMPILED_SEGMENTS`` segments or more goes to the compiled twin of this module
(:mod:`probsent.text.compiled_sums`: the same order of additions, so the same bits, in one pass
without the padded tables).
"""
from __future__ import annotations

import numpy as np

__all__ = ["COMPILED_SEGMENTS", "segment_sums", "term_sums"]

COMPILED_SEGMENTS = 1024  # batches of at least this many segments are summed by the compiled kernel
BLOCK = 8  # NumPy's unrolling
DIRECT = 128  # NumPy's PW_BLOCKSIZE: longer arrays are split in two


def _gather(values: np.ndarray, starts: np.ndarray, counts: np.ndarray, width: int) -> np.ndarray:
    """[len(starts), width]: ``values[starts[i] + j]`` where j < counts[i], else 0.0."""
    columns = np.arange(width)
    inside = columns[None, :] < counts[:, None]
    index = np.where(inside, starts[:, None] + columns[None, :], 0)
    return np.where(inside, values[index] if len(values) else 0.0, 0.0)


def _sequential(table: np.ndarray) -> np.ndarray:
    """Row sums, left to right from 0.0."""
    total = np.zeros(len(table))
    for column in table.T:
        total += column
    return total


def segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``[values[offsets[i]:offsets[i + 1]].sum() for i]`` as a float64 array, the same bits,
    without a Python loop over segments (except those longer than 128 values)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    starts, lengths = offsets[:-1], np.diff(offsets)
    out = np.zeros(len(lengths))

    short = np.flatnonzero(lengths < BLOCK)
    if len(short):
        out[short] = _sequential(_gather(values, starts[short], lengths[short], BLOCK - 1))

    middle = np.flatnonzero((lengths >= BLOCK) & (lengths <= DIRECT))
    if len(middle):
        counts = lengths[middle]
        whole = counts - counts % BLOCK  # the values in whole blocks of eight
        blocks = _gather(values, starts[middle], whole, int(whole.max()))
        running = blocks[:, :BLOCK].copy()
        for first in range(BLOCK, blocks.shape[1], BLOCK):
            running += blocks[:, first:first + BLOCK]
        r = running.T
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        rest = _gather(values, starts[middle] + whole, counts - whole, BLOCK - 1)
        for column in rest.T:
            total += column
        out[middle] = total

    for i in np.flatnonzero(lengths > DIRECT):  # rare: NumPy's own recursion
        out[i] = values[starts[i]:starts[i] + lengths[i]].sum()
    return out


def term_sums(terms: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``segment_sums(terms[ids], offsets)``: each sentence's terms summed (same bits), compiled
    for large batches where numba is available."""
    if len(offsets) > COMPILED_SEGMENTS:
        try:
            from probsent.text.compiled_sums import gathered_sums
        except ImportError:  # no numba: NumPy
            pass
        else:
            return gathered_sums(terms, ids, offsets)
    return segment_sums(np.asarray(terms, dtype=np.float64)[ids], offsets)
