"""The compiled encoder equals the NumPy closed forms (the reference): bit for bit, except WLO's
mean, which the plain recurrence gives within float64's rounding where it cannot overflow."""
from __future__ import annotations

import numpy as np
import pytest

from probsent.inference.array_encoder import ArrayEncoder
from probsent.inference.closed_form import pooled_encoding, wlo_encoding
from probsent.inference.compiled_encode import compiled_encoding
from probsent.text.token_ids import COMPILED_SENTENCES
from tests.rounding import encoding_magnitudes, log_abs_mean_bound, mean_rounding_bound


def _problem(seed: int, vocab: int = 300, dim: int = 7):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 30, 400)
    lengths[:3] = [0, 1, 250]  # no word, one word, a long sentence
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ids = rng.integers(0, vocab, offsets[-1]).astype(np.int64)
    scale = rng.normal(1.0, 0.6, (vocab, dim)).astype(np.float32)
    scale[5, :3] = 0.0  # below the scale floor
    scale[6] *= 80  # a mean far beyond float64's range in a long sentence of it
    ids[offsets[2]:offsets[2] + 200] = 6
    shift = rng.normal(0.0, 1.0, (vocab, dim)).astype(np.float32)
    shift[7] = 0.0  # a sentence of it alone has mean 0 (log|mean| = -inf)
    ids[offsets[1]] = 7
    return ids, offsets, scale, shift


def _reference_rows(encode, ids, offsets, *tables):
    """The closed form of each sentence alone, as a padded batch of one (position-major)."""
    rows = []
    for k in range(len(offsets) - 1):
        words = ids[offsets[k]:offsets[k + 1]]
        padded = np.zeros((max(len(words), 1), 1), dtype=np.int64)
        padded[:len(words), 0] = words
        rows.append(encode(*[table[padded] for table in tables], np.array([len(words)])))
    return rows


@pytest.mark.parametrize("start_variance", [1.0, 0.25])
def test_wlo_equals_the_closed_form(start_variance) -> None:
    ids, offsets, scale, shift = _problem(1)
    got = compiled_encoding("wlo", {"scale.weight": scale, "shift.weight": shift}, ids, offsets, start_variance)
    rows = _reference_rows(lambda a, b, n: wlo_encoding(a, b, n, start_variance), ids, offsets, scale, shift)
    expected = {name: np.concatenate([getattr(row, name) for row in rows]) for name in ("mean", "logvar", "log_abs_mean")}
    np.testing.assert_array_equal(got.logvar, expected["logvar"])  # the same sums
    # the mean by the recurrence (or, for sentence 2, far beyond float64's range, by the same log-space
    # sums): within the rounding either order can make, from the mean's condition (tests/rounding.py)
    finite = np.isfinite(expected["log_abs_mean"])
    assert np.array_equal(finite, np.isfinite(got.log_abs_mean))
    magnitudes = encoding_magnitudes({"scale.weight": scale, "shift.weight": shift}, "wlo", ids, offsets)
    log_bound = log_abs_mean_bound(*magnitudes, expected["log_abs_mean"])
    assert np.all(np.abs(got.log_abs_mean[finite] - expected["log_abs_mean"][finite]) <= log_bound[finite])
    np.testing.assert_array_equal(np.sign(got.mean), np.sign(expected["mean"]))
    np.testing.assert_array_equal(np.isinf(got.mean[2]), np.isinf(expected["mean"][2]))
    finite_mean = np.isfinite(expected["mean"])
    assert np.all(np.abs(got.mean[finite_mean] - expected["mean"][finite_mean])
                  <= mean_rounding_bound(*magnitudes)[finite_mean])
    assert np.isinf(got.mean[2]).any() and np.isneginf(got.log_abs_mean[1]).all()


@pytest.mark.parametrize("kind", ["wordavg", "wordsum"])
def test_pooled_models_equal_the_closed_form_bit_for_bit(kind) -> None:
    ids, offsets, vectors, _ = _problem(2)
    got = compiled_encoding(kind, {"embedding.weight": vectors}, ids, offsets)
    rows = _reference_rows(lambda v, n: pooled_encoding(v, n, kind == "wordavg"), ids, offsets, vectors)
    np.testing.assert_array_equal(got.mean, np.concatenate([row.mean for row in rows]))


def test_the_array_encoder_gives_the_same_numbers_either_way() -> None:
    """Small batches take the NumPy batches, large ones the compiled kernel: the same numbers
    (the log-variance bit for bit, the mean within float64's rounding)."""
    ids, offsets, scale, shift = _problem(3)
    encoder = ArrayEncoder({"type": "wlo", "dim": 7}, {"scale.weight": scale, "shift.weight": shift})
    many = np.tile(np.arange(400), 3)  # 1,200 sentences: the compiled path
    assert len(many) >= COMPILED_SENTENCES
    starts, lengths = offsets[many], np.diff(offsets)[many]
    tiled_offsets = np.concatenate([[0], np.cumsum(lengths)])
    tiled_ids = ids[np.repeat(starts - tiled_offsets[:-1], lengths) + np.arange(tiled_offsets[-1])]
    large = encoder.encode(tiled_ids, tiled_offsets)
    small = [encoder.encode(ids, offsets[k:k + 2]) for k in range(3)]
    bound = mean_rounding_bound(*encoding_magnitudes(encoder.weights, "wlo", ids, offsets))  # tests/rounding.py
    for k in range(3):
        same = large.mean[k] == small[k].mean[0]  # the infinite means of sentence 2 included
        with np.errstate(invalid="ignore"):
            assert np.all(same | (np.abs(large.mean[k] - small[k].mean[0]) <= bound[k]))
        np.testing.assert_array_equal(large.logvar[k], small[k].logvar[0])
