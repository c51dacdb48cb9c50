"""probsent.text.segment_sums: each segment's sum equals NumPy's ``sum`` of it, bit for bit."""
from __future__ import annotations

import numpy as np

from probsent.text.segment_sums import segment_sums, term_sums


def _reference(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    return np.array([values[a:b].sum() for a, b in zip(offsets[:-1], offsets[1:])])


def test_every_length_up_to_600_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    lengths = np.repeat(np.arange(0, 601), 3)
    rng.shuffle(lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    # mixed signs and magnitudes, so that the order of the additions shows in the last bits
    values = rng.standard_normal(offsets[-1]) * np.exp(rng.uniform(-8, 8, offsets[-1]))
    got = segment_sums(values, offsets)
    assert got.dtype == np.float64
    assert np.array_equal(got, _reference(values, offsets))


def test_empty_inputs_and_zero_length_segments() -> None:
    assert segment_sums(np.zeros(0), np.array([0])).shape == (0,)
    assert segment_sums(np.zeros(0), np.array([0, 0, 0])).tolist() == [0.0, 0.0]
    values = np.array([1.5, -2.0, 4.0])
    assert segment_sums(values, np.array([0, 0, 2, 2, 3])).tolist() == [0.0, -0.5, 0.0, 4.0]


def test_segments_may_start_anywhere_and_skip_values() -> None:
    rng = np.random.default_rng(3)
    values = rng.standard_normal(5000)
    offsets = np.sort(rng.choice(5001, size=300, replace=False))
    assert np.array_equal(segment_sums(values, offsets), _reference(values, offsets))


def test_the_compiled_gathered_sums_equal_numpy_bit_for_bit() -> None:
    from probsent.text.compiled_sums import gathered_sums

    rng = np.random.default_rng(11)
    lengths = np.concatenate((np.repeat(np.arange(0, 601), 3), [1000, 1031, 4999, 10_000]))
    rng.shuffle(lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    terms = rng.standard_normal(5000) * np.exp(rng.uniform(-8, 8, 5000))
    ids = rng.integers(0, len(terms), offsets[-1])
    expected = _reference(terms[ids], offsets)
    assert np.array_equal(gathered_sums(terms, ids, offsets), expected)
    assert np.array_equal(term_sums(terms, ids, offsets), expected)  # large: compiled
    assert np.array_equal(term_sums(terms, ids[:offsets[5]], offsets[:6]), expected[:5])  # small: NumPy
    assert gathered_sums(terms, ids[:0], np.array([0])).shape == (0,)
