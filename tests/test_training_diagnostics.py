"""Training's measures of what moved inside a model and the rarity anchor's terms, against
hand-made cases and SciPy: the word-term statistics a run logs, the rank correlation with average
ranks for ties, and the rarity terms with their initialization of a WLO."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from probsent.models import WLO
from probsent.training.diagnostics import average_ranks, rank_correlation, word_term_statistics
from probsent.training.losses.rarity_anchor import rarity_terms


def test_word_term_statistics_on_hand_made_terms() -> None:
    model = WLO(26, dim=2)
    terms = np.arange(25, dtype=np.float64) / 10.0  # word w (id w + 1) has term w / 10
    with torch.no_grad():
        model.scale.weight[1:] = torch.exp(torch.from_numpy(terms) / 2)[:, None].float()
    counts = np.concatenate([[7], 1000 - np.arange(25)])  # the largest terms are the rarest words
    stats = word_term_statistics(model, counts)
    assert stats["term_count_spearman"] == pytest.approx(-1.0)
    assert stats["frequent_term"] == pytest.approx(np.mean(terms[:20]), abs=1e-5)
    rarest_last = np.concatenate([[7], counts[1:][::-1]])
    assert word_term_statistics(model, rarest_last)["term_count_spearman"] == pytest.approx(1.0)


def test_rank_correlation_is_spearmans_with_average_ranks_for_ties() -> None:
    # by hand: [3, 1, 3, 2, 3] ranks 1 for the 1, 2 for the 2, and the three 3s share (3 + 4 + 5) / 3
    assert average_ranks(np.array([3.0, 1, 3, 2, 3])).tolist() == [4.0, 1.0, 4.0, 2.0, 4.0]
    # y = x reversed in order: -1; ranks [1, 2, 3] and [1.5, 1.5, 3]: Pearson of those = sqrt(3) / 2
    assert rank_correlation(np.arange(5.0), -np.arange(5.0) ** 3) == pytest.approx(-1.0)
    assert rank_correlation(np.array([1.0, 2, 3]), np.array([5.0, 5, 9])) == pytest.approx(np.sqrt(3) / 2)
    assert math.isnan(rank_correlation(np.ones(4), np.arange(4.0)))
    from scipy import stats  # the reference it replaces in training (ties and many values)

    rng = np.random.default_rng(3)
    x = rng.integers(0, 30, 5000).astype(float)
    y = np.where(np.arange(5000) % 4 == 0, 1.0, x + rng.normal(0, 8, 5000))
    assert rank_correlation(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, rel=1e-12)


def test_rarity_terms_and_their_initialization() -> None:
    counts = np.array([5, 1000, 100, 10, 1])
    terms = rarity_terms(counts, 0.2)
    average = np.sum(counts * np.log(counts)) / counts.sum()
    assert terms == pytest.approx(0.2 * (np.log(counts) - average), abs=1e-6)
    assert np.sum(counts * terms) == pytest.approx(0.0, abs=1e-3)  # the average token adds nothing
    model = WLO(5, dim=4)
    before = model.word_entropy_terms().detach().clone()
    model.shift_entropy_terms(torch.from_numpy(terms))
    assert model.word_entropy_terms().detach().numpy() == pytest.approx((before + torch.from_numpy(terms)).numpy(), abs=1e-5)
