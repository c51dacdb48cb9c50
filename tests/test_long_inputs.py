"""Long sentences: every output finite and, where float32 can hold it, equal to the WLO
recurrence computed step by step with 60-digit arithmetic (mpmath); the token cap; memory
bounded per batch."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch

from probsent.api import MAX_TOKENS, SentenceModel
from probsent.inference.arrays import FLOAT32_MAX
from probsent.data.vocab import Vocabulary
from probsent.models import build_model

WORDS = ["<unk>", "up", "down", "x", "y"]
SCALE = [[1.0, 1.0, 1.0], [3.0, 2.5, -2.0], [0.2, 0.3, -0.25], [1.1, 0.9, -1.0], [0.95, 1.05, 0.8]]
SHIFT = [[0.0, 0.0, 0.0], [0.1, -0.2, 0.3], [0.5, 0.4, -0.3], [1.0, -1.0, 0.5], [-0.7, 0.2, 0.1]]


@pytest.fixture(scope="module")
def model() -> SentenceModel:
    encoder = build_model({"type": "wlo", "vocab_size": len(WORDS), "dim": 3})
    with torch.no_grad():
        encoder.scale.weight.copy_(torch.tensor(SCALE))
        encoder.shift.weight.copy_(torch.tensor(SHIFT))
    return SentenceModel(encoder, Vocabulary(WORDS))


def recurrence(sentence: str) -> tuple[list, list]:
    """(mean, variance) per dimension, z_i = A_i (z_{i-1} + B_i) from N(0, I), word by word,
    with the model's float32 weights as exact numbers."""
    mpmath.mp.dps = 60
    scale = np.array(SCALE, dtype=np.float32).astype(np.float64)
    shift = np.array(SHIFT, dtype=np.float32).astype(np.float64)
    mean, var = [mpmath.mpf(0)] * 3, [mpmath.mpf(1)] * 3
    for word in sentence.split():
        i = WORDS.index(word)
        for d in range(3):
            a = mpmath.mpf(float(scale[i, d]))
            mean[d] = a * (mean[d] + mpmath.mpf(float(shift[i, d])))
            var[d] = a * a * var[d]
    return mean, var


def as_float32(value) -> float:
    """``value`` saturated at float32's largest finite magnitude."""
    return float(mpmath.sign(value)) * min(float(min(abs(value), mpmath.mpf(1e300))), FLOAT32_MAX)


SENTENCES = [" ".join(["up"] * n) for n in (10, 40, 80, 300, 2000)] + [
    " ".join(["down"] * 200 + ["x"]), " ".join(["down"] * 300 + ["up"] * 350 + ["y"]),
    " ".join(["x", "up", "down", "y"] * 700), " ".join(["y"] * 5000),
]


@pytest.mark.parametrize("sentence", SENTENCES, ids=lambda s: f"{len(s.split())} words")
def test_long_sentence_against_the_recurrence(model, sentence) -> None:
    mean_ref, var_ref = recurrence(sentence)
    mean, variance = model.encode(sentence)
    _, log_variance = model.encode(sentence, log_variance=True)
    assert np.isfinite(mean).all() and np.isfinite(variance).all() and np.isfinite(log_variance).all()
    n = len(sentence.split())
    for d in range(3):
        assert log_variance[d] == pytest.approx(float(mpmath.log(var_ref[d])), rel=1e-5, abs=1e-4 * n)
        assert variance[d] == pytest.approx(as_float32(var_ref[d]), rel=1e-3 + 1e-6 * n)
        assert mean[d] == pytest.approx(as_float32(mean_ref[d]), rel=1e-3 + 1e-6 * n, abs=1e-6)
    entropy_ref = sum(0.5 * float(mpmath.log(2 * mpmath.pi * mpmath.e * v)) for v in var_ref)
    assert model.entropy(sentence) == pytest.approx(entropy_ref, rel=1e-5, abs=1e-4 * n)
    assert model.specificity(sentence) == -model.entropy(sentence)


def similarity_reference(a: str, b: str) -> float:
    """log N(0; mu_a - mu_b, Sigma_a + Sigma_b), with 60 digits (saturated at float32's range)."""
    (ma, va), (mb, vb) = recurrence(a), recurrence(b)
    total = mpmath.mpf(0)
    for d in range(3):
        s = va[d] + vb[d]
        total += mpmath.log(2 * mpmath.pi) + mpmath.log(s) + (ma[d] - mb[d]) ** 2 / s
    return max(float(-total / 2), -FLOAT32_MAX)


@pytest.mark.parametrize("a, b", [
    (" ".join(["up"] * 50), " ".join(["up"] * 50)),  # variance beyond float32, mean within
    (" ".join(["up"] * 50), " ".join(["up"] * 49 + ["x"])),
    (" ".join(["up"] * 3000), " ".join(["up"] * 3000)),  # both beyond float32: the same sentence
    (" ".join(["down"] * 300), "x y"),
    (" ".join(["down"] * 300 + ["x"]), " ".join(["down"] * 290 + ["y"])),
    # means far beyond float32 (and float64): from their logarithms
    (" ".join(["up"] * 3000), " ".join(["up"] * 2999 + ["x"])),
    (" ".join(["up"] * 1000 + ["y"] * 5), " ".join(["up"] * 1001 + ["x"])),
    (" ".join(["down"] * 800 + ["up"] * 1200), " ".join(["up"] * 1000 + ["y"])),
])
def test_similarity_of_long_sentences_against_the_recurrence(model, a, b) -> None:
    for got in (model.similarity(a, b, measure="expected_inner_product"),  # the matrix's path, the pairs'
                model.similarity_pairwise(a, b, measure="expected_inner_product")):
        assert math.isfinite(got)
        assert got == pytest.approx(similarity_reference(a, b), rel=1e-4, abs=1e-3)


def test_sentences_count_their_first_max_tokens(model) -> None:
    capped = " ".join(["x", "up", "down"] * (MAX_TOKENS // 3 + 1))  # MAX_TOKENS + 2 tokens
    head = " ".join(capped.split()[:MAX_TOKENS])
    for got, want in zip(model.encode([capped, head], log_variance=True), model.encode([head, head], log_variance=True)):
        np.testing.assert_array_equal(got[0], want[1])
    assert len(model.explain(capped).words) == MAX_TOKENS
    assert model.explain(capped).entropy == pytest.approx(model.entropy(head), rel=1e-6)


def test_long_and_short_sentences_batch_like_single_ones(model) -> None:
    """Batches are cut by padded positions (long sentences come in small batches); every
    sentence still gets its own result."""
    rng = np.random.default_rng(0)
    sentences = [" ".join(rng.choice(WORDS[1:], size=n)) for n in (3, 9000, 5, 4000, 1, 7000, 2)]
    together = model.encode(sentences, batch_size=256, log_variance=True)
    for i, sentence in enumerate(sentences):
        alone = model.encode(sentence, log_variance=True)
        np.testing.assert_allclose(together[1][i], alone[1], rtol=1e-5)
        np.testing.assert_allclose(together[0][i], alone[0], rtol=1e-4)
