"""The Python API: encode / entropy / specificity / similarity, save and load."""
from __future__ import annotations

import numpy as np
import pytest

import probsent
from probsent import ProbsentError
from probsent.models import MODEL_TYPES

SENTENCES = ["The cat sat on the mat.", "A dog ran in the park", "a man plays guitar",
             "3 apples", "the", "zebras unknown entirely", "The cat sat on the mat, the dog ran in the park."]


# The tolerances of this file compare float32 results (what users get) with float64 references of
# well-conditioned quantities on fixed sentences: rtol 1e-5 is ~170 float32 roundings (u = 6e-8) against
# the few the conversion makes (tests/rounding.py's audit); the Gaussian similarity's 1e-4 leaves room for
# its mean difference, which the reference takes from float32 means and the API from float64 ones.
@pytest.mark.parametrize("kind", list(MODEL_TYPES))
def test_batch_size_and_order_invariance(kind: str, make_model) -> None:
    model = make_model(kind)
    reference = model.encode(SENTENCES, batch_size=len(SENTENCES))
    order = np.random.default_rng(0).permutation(len(SENTENCES))
    for batch_size in (1, 2, 3):
        shuffled = model.encode([SENTENCES[i] for i in order], batch_size=batch_size)
        if model.probabilistic:
            for got, ref in zip(shuffled, reference):
                np.testing.assert_allclose(got, ref[order], rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_allclose(shuffled, reference[order], rtol=1e-5, atol=1e-5)
    single = model.encode(SENTENCES[2])
    if model.probabilistic:
        assert single[0].shape == (model.encoder.dim,)
        np.testing.assert_allclose(single[0], reference[0][2], rtol=1e-5, atol=1e-6)
    else:
        assert single.shape == (model.encoder.dim,)


def test_entropy_and_specificity_of_probabilistic_model(make_model) -> None:
    model = make_model("wlo")
    mean, var = model.encode(SENTENCES)
    assert np.all(var > 0)
    expected = 0.5 * np.log(2 * np.pi * np.e * var.astype(np.float64)).sum(1)
    np.testing.assert_allclose(model.entropy(SENTENCES), expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(model.specificity(SENTENCES), -model.entropy(SENTENCES), rtol=1e-6)
    assert isinstance(model.entropy("the cat"), float)


def test_deterministic_model_uses_norm_and_has_no_entropy(make_model) -> None:
    model = make_model("wordsum")
    vectors = model.encode(SENTENCES)
    np.testing.assert_allclose(model.specificity(SENTENCES), np.linalg.norm(vectors, axis=1), rtol=1e-5)
    with pytest.raises(ProbsentError):
        model.entropy(SENTENCES)


def test_similarity(make_model) -> None:
    vec = make_model("wordavg")
    a, b = vec.encode(SENTENCES[0]), vec.encode(SENTENCES[1])
    assert np.isclose(vec.similarity(SENTENCES[0], SENTENCES[1]),
                      a @ b / np.linalg.norm(a) / np.linalg.norm(b), rtol=1e-5)
    gauss = make_model("wlo")
    (m1, v1), (m2, v2) = gauss.encode(SENTENCES[0]), gauss.encode(SENTENCES[1])
    t = (v1 + v2).astype(np.float64)
    expected = -0.5 * np.sum(np.log(2 * np.pi * t) + (m1 - m2) ** 2 / t)
    assert np.isclose(gauss.similarity(SENTENCES[0], SENTENCES[1], measure="expected_inner_product"), expected,
                      rtol=1e-4)
    # the default read-out: the cosine of the means
    assert np.isclose(gauss.similarity(SENTENCES[0], SENTENCES[1]),
                      m1 @ m2 / np.linalg.norm(m1) / np.linalg.norm(m2), rtol=1e-5)
    with pytest.raises(ValueError):
        gauss.similarity_pairwise(SENTENCES[:2], SENTENCES[:3])


def test_empty_and_unknown_input(make_model) -> None:
    model = make_model("wlo")
    mean, var = model.encode([])
    assert mean.shape == (0, 8) and var.shape == (0, 8)
    # no token at all: a blank sentence, encoded like a null (zero mean, NaN variance)
    m0, v0 = model.encode("")
    np.testing.assert_allclose(m0, 0.0)
    assert np.isnan(v0).all()
    np.testing.assert_allclose(model.encode("zebras")[1], model.encode("giraffes")[1])


@pytest.mark.parametrize("kind", list(MODEL_TYPES))
def test_save_load_round_trip(kind: str, tmp_path, make_model) -> None:
    model = make_model(kind, seed=3)
    model.save(tmp_path / "m")
    loaded = probsent.load(tmp_path / "m")
    assert loaded.encoder.config() == model.encoder.config()
    assert loaded.vocab.words == model.vocab.words
    for got, ref in zip(np.atleast_1d(loaded.specificity(SENTENCES)), model.specificity(SENTENCES)):
        assert got == pytest.approx(ref, rel=1e-6)
