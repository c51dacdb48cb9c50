"""Evaluation metrics against hand-computed cases (no data needed)."""
import math

import numpy as np
import pytest

from reproduction.evaluation import metrics


def test_pearson_hand_computed():
    # dx = (-1, 0, 1), dy = (-4/3, -1/3, 5/3): cov 3, var 2 and 42/9.
    assert metrics.pearson([1, 2, 3], [1, 2, 4]) == pytest.approx(9 / math.sqrt(84))


def test_constant_input_is_nan_without_a_warning(recwarn):
    assert math.isnan(metrics.pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(metrics.spearman([1, 2, 3], [4, 4, 4]))
    assert not recwarn.list


def test_spearman_with_ties():
    # Average ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4): r = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10).
    assert metrics.spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(3 / math.sqrt(10))
    assert metrics.spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    # Only the order counts: any increasing map of either input leaves it unchanged.
    assert metrics.spearman([0.1, 5, 7, 7.5], [2, 1, 4, 3]) == pytest.approx(0.6)  # 1 - 6 * 4 / 60


def test_correlations_reject_mismatched_or_too_short_input():
    with pytest.raises(ValueError, match="length mismatch: 3 vs 2"):
        metrics.spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least two values"):
        metrics.pearson([1], [2])


def test_accuracy_and_f1():
    predicted, gold = [True, True, False, False], [True, False, True, False]
    assert metrics.accuracy(predicted, gold) == 0.5
    assert metrics.f1_score(predicted, gold) == pytest.approx(0.5)  # tp 1, 2 predicted, 2 gold
    assert metrics.f1_score([True, True, True], [True, True, False]) == pytest.approx(0.8)
    assert metrics.f1_score([False, False], [True, False]) == 0.0


def test_threshold_midpoint():
    assert metrics.tune_threshold([1, 2, 3, 4], [False, False, True, True]) == 2.5


def test_threshold_accuracy_tie_goes_to_lowest():
    # 1.5 and 2.5 both reach 3/4 on the training data; the lower one wins.
    assert metrics.tune_threshold([1, 2, 2, 3], [False, True, False, True]) == 1.5
    # Both ends tie at 1/2 (and 1.5 reaches 0): "everything specific" is the lowest.
    assert metrics.tune_threshold([1, 2], [True, False]) == -math.inf


def test_threshold_ends():
    assert metrics.tune_threshold([5, 5, 5], [True, False, True]) == -math.inf
    assert metrics.tune_threshold([5, 5, 5], [False, False, True]) == math.inf
    assert metrics.tune_threshold([3, 1, 2], [False, False, False]) == math.inf


def test_threshold_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = rng.integers(0, 6, 15).astype(float)
        labels = rng.integers(0, 2, 15).astype(bool)
        distinct = np.unique(scores)
        candidates = [-math.inf, *((distinct[1:] + distinct[:-1]) / 2), math.inf]
        correct = [np.sum((scores > t) == labels) for t in candidates]
        assert metrics.tune_threshold(scores, labels) == candidates[int(np.argmax(correct))]


def test_threshold_rejects_empty_input():
    with pytest.raises(ValueError, match="non-empty"):
        metrics.tune_threshold([], [])


def test_predict_specific_is_strictly_greater():
    assert metrics.predict_specific([1.0, 1.5, 2.0], 1.5).tolist() == [False, False, True]


def test_length_normalized_toy_pool():
    lengths = [1, 1, 2, 2, 2, 3, 3, 5]
    scores = [0.1, 0.9, 0.2, 0.6, 0.8, 0.5, 0.7, 1.0]
    specific = [False, True, False, True, True, False, True, True]
    result = metrics.length_normalized_accuracy(lengths, scores, specific)
    # Length 2 tunes 0.4 -> length 1: 2/2 right. Length 3 tunes 0.6 -> length 2: 0.6 is not
    # above 0.6, so 2/3 right. Lengths 3 and 5 have no longer neighbour: untested.
    assert result.accuracy == pytest.approx(4 / 5)
    assert (result.pool_size, result.n_tested, result.n_untested, result.n_groups_tested) == (8, 5, 3, 2)
    # Floor: length 2's majority (specific) on length 1 -> 1/2; length 3 ties -> specific on
    # length 2 -> 2/3. Best constant per tested group: 1 + 2.
    assert result.majority_floor == pytest.approx(3 / 5)
    assert result.tested_group_majority == pytest.approx(3 / 5)


def test_length_normalized_needs_a_neighbouring_group():
    with pytest.raises(ValueError, match="one token longer"):
        metrics.length_normalized_accuracy([1, 3], [0.1, 0.2], [True, False])


def test_accuracy_at_tuned_threshold_by_hand() -> None:
    from reproduction.evaluation.metrics import accuracy_at_tuned_threshold

    assert accuracy_at_tuned_threshold([1.0, 2.0, 3.0, 4.0], [False, False, True, True]) == 1.0
    # no threshold separates these: the best one (between 1 and 2) gets 3 of 4 right
    assert accuracy_at_tuned_threshold([1.0, 2.0, 3.0, 4.0], [False, True, False, True]) == 0.75
    assert accuracy_at_tuned_threshold([5.0, 5.0, 5.0], [True, False, True]) == 2 / 3  # all specific
