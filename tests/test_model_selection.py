"""Training's model selection (probsent/training/model_selection.py) reads its data through the
product's loaders and scores through the public read-outs. ``best/`` is chosen by the Pearson r
of ``cosine_concat`` (the cosine of concat(mean, variance)) for a probabilistic model, as before
issue 51 (a cosine of the means would pick other checkpoints), and of the vectors' cosine for a
deterministic one; ``best-news/`` by the accuracy at a threshold tuned on the same rows. The
references are computed here from ``encode()`` with NumPy and by counting."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from probsent.data.development_sets import LabelledSentences, StsPairs
from probsent.training.model_selection import (NewsValidator, StsValidator, accuracy_at_tuned_threshold,
                                               tune_threshold)

FIRST = ["the cat sat on the mat .", "a man plays guitar", "the dog ran in the park", "3 apples", "a woman"]
SECOND = ["a cat sat on a mat", "a woman plays guitar .", "the man ran", "the park , the mat", "a man"]
GOLD = np.array([4.8, 3.5, 1.2, 0.4, 2.0])


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.parametrize("kind", ["wlo", "wordavg"])
def test_the_sts_validator_is_pearson_of_the_concat_cosine(make_model, kind):
    model = make_model(kind, seed=2)
    if model.probabilistic:
        (m1, v1), (m2, v2) = model.encode(FIRST), model.encode(SECOND)
        a, b = np.hstack([m1, v1]).astype(np.float64), np.hstack([m2, v2]).astype(np.float64)
    else:
        a, b = (np.asarray(model.encode(s), dtype=np.float64) for s in (FIRST, SECOND))
    expected = stats.pearsonr(_cosines(a, b), GOLD).statistic
    score = StsValidator(model.vocab, StsPairs("toy", FIRST, SECOND, GOLD))(model.encoder)
    # the read-out's similarities are float32 (relative rounding 6e-8 each); a correlation of five
    # values in [-1, 1] moves by at most a few times that: 1e-6 leaves a wide margin
    assert score == pytest.approx(expected, abs=1e-6)


def test_the_threshold_and_accuracy_by_counting():
    scores, specific = np.array([0.1, 0.4, 0.35, 0.8]), np.array([False, True, False, True])
    # "specific iff score > t": t between 0.35 and 0.4 gets all four right
    assert tune_threshold(scores, specific) == pytest.approx(0.375)
    assert accuracy_at_tuned_threshold(scores, specific) == 1.0
    # no threshold separates [F, T, F]: the best gets 2 of 3 (t = -inf calls all specific: 1 of 3)
    assert accuracy_at_tuned_threshold([1.0, 2.0, 3.0], [False, True, False]) == pytest.approx(2 / 3)


def test_the_news_validator_is_the_tuned_accuracy_of_the_specificity(make_model):
    model = make_model("wlo", seed=4)
    sentences = FIRST + SECOND
    specific = np.array([True, False, True, False, True, False, True, False, False, True])
    expected = accuracy_at_tuned_threshold(model.specificity(sentences), specific)
    news = LabelledSentences(sentences, specific, np.arange(len(sentences)))
    assert NewsValidator(model.vocab, news)(model.encoder) == pytest.approx(100.0 * expected)
