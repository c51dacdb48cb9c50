"""Each sentence's word terms gathered and summed in one compiled pass, in NumPy's own order.

:func:`gathered_sums` returns ``segment_sums(terms[ids], offsets)`` (:mod:`probsent.text.segment_sums`)
with the same bits, without the gathered array or the padded tables the NumPy version builds:
per segment, NumPy's pairwise summation written out (fewer than 8 values left to right from
0.0; up to 128 in eight running sums combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
(r6 + r7)) and the rest added; longer ones split in two halves, the first a multiple of 8).
numba keeps the order of floating-point additions as written (no fast-math), so the sums
are bit for bit NumPy's; ``tests/test_segment_sums.py`` compares for every length up to 600.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["gathered_sums"]


@njit(cache=True)
def _pairwise(terms: np.ndarray, ids: np.ndarray, begin: int, count: int) -> float:  # pragma: no cover
    """``terms[ids[begin:begin + count]].sum()`` in NumPy's order."""
    if count < 8:
        total = 0.0
        for k in range(begin, begin + count):
            total += terms[ids[k]]
        return total
    if count <= 128:
        r0, r1, r2, r3 = terms[ids[begin]], terms[ids[begin + 1]], terms[ids[begin + 2]], terms[ids[begin + 3]]
        r4, r5, r6, r7 = terms[ids[begin + 4]], terms[ids[begin + 5]], terms[ids[begin + 6]], terms[ids[begin + 7]]
        whole = begin + count - count % 8
        k = begin + 8
        while k < whole:
            r0 += terms[ids[k]]
            r1 += terms[ids[k + 1]]
            r2 += terms[ids[k + 2]]
            r3 += terms[ids[k + 3]]
            r4 += terms[ids[k + 4]]
            r5 += terms[ids[k + 5]]
            r6 += terms[ids[k + 6]]
            r7 += terms[ids[k + 7]]
            k += 8
        total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for k in range(whole, begin + count):
            total += terms[ids[k]]
        return total
    half = count // 2
    half -= half % 8
    return _pairwise(terms, ids, begin, half) + _pairwise(terms, ids, begin + half, count - half)


@njit(cache=True)
def _gathered_sums(terms: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:  # pragma: no cover
    out = np.empty(len(offsets) - 1)
    for i in range(len(out)):
        out[i] = _pairwise(terms, ids, offsets[i], offsets[i + 1] - offsets[i])
    return out


def gathered_sums(terms: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``[terms[ids[offsets[i]:offsets[i + 1]]].sum() for i]`` as float64, NumPy's bits."""
    return _gathered_sums(np.ascontiguousarray(terms, dtype=np.float64), np.asarray(ids, dtype=np.int64),
                          np.asarray(offsets, dtype=np.int64))
