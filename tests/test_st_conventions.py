"""sentence-transformers' conventions (issue 33, item 4), each with its meaning there:
show_progress_bar on every method that takes many sentences, encode's keywords,
get_sentence_embedding_dimension, a useful repr."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import probsent
from probsent import api

SENTENCES = ["The Dow fell 2.3 % to 10,421.67 on Tuesday.", "It is good.", "A man plays a guitar.", None]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


@pytest.mark.parametrize("call", [
    lambda m, **kw: m.encode(SENTENCES, **kw), lambda m, **kw: m.entropy(SENTENCES, **kw),
    lambda m, **kw: m.specificity(SENTENCES, **kw), lambda m, **kw: m.probability(SENTENCES, **kw),
    lambda m, **kw: m.similarity(SENTENCES, SENTENCES[:2], **kw),
    lambda m, **kw: m.similarity_pairwise(SENTENCES, SENTENCES[::-1], **kw)])
def test_show_progress_bar_on_every_many_sentence_method(model, call, capsys, monkeypatch) -> None:
    quiet = call(model, show_progress_bar=False)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(api, "ENCODE_CHUNK", 3)  # several steps: the same values
    shown = call(model, show_progress_bar=True)
    err = capsys.readouterr().err
    assert "4/4" in err or "2/2" in err
    for a, b in zip(quiet if isinstance(quiet, tuple) else (quiet,), shown if isinstance(shown, tuple) else (shown,)):
        np.testing.assert_array_equal(a, b)


def test_encode_keywords_mean_what_they_mean_in_sentence_transformers(model) -> None:
    mean, variance = model.encode(SENTENCES[:3], batch_size=2, device="cpu")
    unit_mean, unit_variance = model.encode(SENTENCES[:3], normalize_embeddings=True)
    norms = np.linalg.norm(mean.astype(np.float64), axis=1)
    np.testing.assert_allclose(np.linalg.norm(unit_mean, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(unit_mean, mean / norms[:, None], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(unit_variance, variance / norms[:, None] ** 2, rtol=1e-5)  # the same Gaussian, rescaled
    tensor_mean, tensor_variance = model.encode(SENTENCES[:3], convert_to_tensor=True)
    assert isinstance(tensor_mean, torch.Tensor) and tensor_mean.shape == (3, 50)
    np.testing.assert_array_equal(tensor_variance.numpy(), variance)
    rows, _ = model.encode(SENTENCES[:3], convert_to_numpy=False)
    assert isinstance(rows, list) and len(rows) == 3 and all(isinstance(r, torch.Tensor) for r in rows)
    np.testing.assert_array_equal(torch.stack(rows).numpy(), mean)
    one = model.encode("It is good.", convert_to_tensor=True)[0]
    assert one.shape == (50,)
    zero = model.encode([None], normalize_embeddings=True)[0]
    assert np.all(zero == 0)  # a zero mean stays zero


def test_normalized_vectors_of_a_deterministic_model(make_model) -> None:
    model = make_model("wordavg", seed=2)
    vectors = model.encode(["the cat sat", "a dog ran in park", ""], normalize_embeddings=True)
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, rtol=1e-6)
    assert np.all(vectors[2] == 0)


def test_dimension_and_repr(model, make_model) -> None:
    assert model.get_sentence_embedding_dimension() == 50 == model.encode("x")[0].shape[0]
    text = repr(model)
    assert text.startswith("SentenceModel(WLO, Gaussian dim=50, vocabulary=50001, calibrated=True, numpy")
    assert "pretrained/wlo" in text
    for kind in ("wlo", "wordavg", "wordsum", "lstmavg", "lstmgaussian"):
        tiny = make_model(kind, seed=1)
        encoded = tiny.encode("the cat sat")
        assert tiny.get_sentence_embedding_dimension() == (encoded[0] if tiny.probabilistic else encoded).shape[0]
    lstm = make_model("lstmavg", seed=1)
    assert repr(lstm).startswith("SentenceModel(LSTMavg, vector dim=") and "torch, cpu" in repr(lstm)
