"""The probability measures against values computed by hand on small cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

from reproduction.evaluation.probability_metrics import (accuracy_at_half, auc, brier, expected_calibration_error,
                                                     log_loss, probability_measures, reliability)

P = np.array([0.05, 0.15, 0.15, 0.55, 0.62, 0.95, 1.0])
Y = np.array([False, False, True, True, False, True, True])


def test_accuracy_at_half() -> None:
    # predicted specific: 0.55, 0.62, 0.95, 1.0; right: rows 0, 1, 3, 5, 6 -> 5 of 7
    assert accuracy_at_half(P, Y) == pytest.approx(5 / 7, abs=1e-15)


def test_auc_counts_pairs_and_ties_half() -> None:
    # positives 0.15, 0.55, 0.95, 1.0; negatives 0.05, 0.15, 0.62. Pairs won: 0.15 beats 0.05, ties
    # 0.15 (half); 0.55 beats 0.05, 0.15; 0.95 and 1.0 beat all three: 1.5 + 2 + 3 + 3 = 9.5 of 12
    assert auc(P, Y) == pytest.approx(9.5 / 12, abs=1e-15)
    assert math.isnan(auc(P, np.ones(7, dtype=bool)))


def test_brier() -> None:
    by_hand = (0.05**2 + 0.15**2 + 0.85**2 + 0.45**2 + 0.62**2 + 0.05**2 + 0.0**2) / 7
    assert brier(P, Y) == pytest.approx(by_hand, rel=1e-14)


def test_log_loss_and_its_floor() -> None:
    by_hand = -(math.log(0.95) + math.log(0.85) + math.log(0.15) + math.log(0.55) + math.log(0.38)
                + math.log(0.95) + math.log(1 - 1e-15)) / 7
    assert log_loss(P, Y) == pytest.approx(by_hand, rel=1e-12)
    # a certain mistake is finite: -log(1e-15); 1 - 1e-15 is stored to within 2^-53 (1.1e-16), so its
    # complement is 1e-15 to within 1.1e-16, and the log to within 1.1e-16 / 1e-15 = 0.11
    assert log_loss([1.0], [False]) == pytest.approx(-math.log(1e-15), abs=0.12)


def test_reliability_bins_and_ece() -> None:
    table = reliability(P, Y)
    assert [b.count for b in table] == [1, 2, 0, 0, 0, 1, 1, 0, 0, 2]  # 1.0 falls in the last bin
    assert table[1].mean_probability == pytest.approx(0.15) and table[1].share_positive == 0.5
    assert math.isnan(table[2].mean_probability)
    # |0.05 - 0| x 1 + |0.15 - 0.5| x 2 + |0.55 - 1| x 1 + |0.62 - 0| x 1 + |0.975 - 1| x 2, over 7
    by_hand = (0.05 + 0.7 + 0.45 + 0.62 + 0.05) / 7
    assert expected_calibration_error(P, Y) == pytest.approx(by_hand, rel=1e-12)


def test_a_perfectly_calibrated_constant_has_no_calibration_error() -> None:
    assert expected_calibration_error(np.full(10, 0.3), np.arange(10) < 3) == pytest.approx(0.0, abs=1e-15)


def test_the_measures_refuse_what_is_not_a_probability() -> None:
    with pytest.raises(ValueError, match="probabilities"):
        brier([0.5, np.nan], [True, False])
    with pytest.raises(ValueError, match="as many"):
        brier([0.5], [True, False])
    measures = probability_measures(P, Y)
    assert measures["min"] == 0.05 and measures["max"] == 1.0 and measures["n"] == 7
