"""The word-score ceiling on hand-made data: the logistic fit's gradient against finite
differences, and cross-validated accuracy where the answer is known."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from reproduction.experiments.word_score_ceiling import cross_validated_accuracy, fit_logistic, word_count_matrix


def test_word_count_matrix_counts_known_words_only() -> None:
    counts = word_count_matrix([["a", "b", "a"], ["c", "zz"]], {"a": 0, "b": 1, "c": 2}).toarray()
    assert counts.tolist() == [[2, 1, 0], [0, 0, 1]]


def test_fit_minimizes_the_regularized_logistic_loss() -> None:
    rng = np.random.default_rng(0)
    counts = word_count_matrix([list(rng.choice(list("abcdef"), size=rng.integers(1, 8))) for _ in range(60)],
                               {w: i for i, w in enumerate("abcdef")})
    labels = rng.random(60) < 0.5
    l2 = 0.05

    def loss(params: np.ndarray) -> float:  # the objective written out, without the fit's gradient
        z = counts.toarray() @ params[:-1] + params[-1]
        return float(np.mean(np.log1p(np.exp(z)) - labels * z) + 0.5 * l2 * params[:-1] @ params[:-1])

    weights, bias = fit_logistic(counts, labels, l2)
    optimum = np.concatenate([weights, [bias]])
    assert np.abs(approx_fprime(optimum, loss, 1e-7)).max() < 1e-4  # a stationary point of the objective
    for _ in range(5):  # and no nearby point does better
        assert loss(optimum + 0.01 * rng.standard_normal(optimum.shape)) > loss(optimum)


def test_cross_validation_finds_a_marker_word_and_a_length_rule() -> None:
    rng = np.random.default_rng(1)
    plain = [list(rng.choice(["the", "a", "of", "to", "is"], size=rng.integers(3, 9))) for _ in range(200)]
    marked = [s + ["nokia"] if i % 2 else s for i, s in enumerate(plain)]
    assert cross_validated_accuracy(marked, np.arange(200) % 2 == 1, l2=1e-3) == pytest.approx(100.0)
    long_ones = np.array([len(s) > 5 for s in plain])  # a sum of equal word terms is the length
    assert cross_validated_accuracy(plain, long_ones, l2=1e-3) >= 95.0
