"""P(specific): the logistic fit and `probsent calibrate` / `specificity --probability`."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import minimize

from probsent.calibration import fit_logistic
from probsent.cli import main


def test_fit_matches_a_generic_optimizer_and_recovers_parameters() -> None:
    rng = np.random.default_rng(0)
    scores = rng.normal(-60.0, 4.0, size=20_000)
    labels = rng.random(20_000) < 1 / (1 + np.exp(-(0.5 * scores + 31.0)))
    slope, intercept = fit_logistic(scores, labels)

    def negative_log_likelihood(w):
        z = w[0] * scores + w[1]
        return np.sum(np.logaddexp(0, z)) - np.sum(labels * z)

    reference = minimize(negative_log_likelihood, x0=[0.0, 0.0], method="BFGS",
                         options={"gtol": 1e-8, "maxiter": 10_000}).x
    assert slope == pytest.approx(reference[0], rel=1e-3) and intercept == pytest.approx(reference[1], rel=1e-3)
    assert negative_log_likelihood([slope, intercept]) <= negative_log_likelihood(reference) + 1e-4  # the ridge's cost
    assert slope == pytest.approx(0.5, rel=0.1) and intercept == pytest.approx(31.0, rel=0.1)


def test_separable_data_gives_finite_parameters() -> None:
    slope, intercept = fit_logistic(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 1, 1]))
    assert np.isfinite(slope) and np.isfinite(intercept) and slope > 0


def test_calibrate_then_probability(tmp_path, capsys, make_model, data_dir) -> None:
    model = make_model("wlo")
    model.save(tmp_path / "m")
    assert main(["specificity", "--model", str(tmp_path / "m"), "--probability", "a cat"]) == 2
    assert "probsent calibrate" in capsys.readouterr().err
    assert main(["calibrate", "--model", str(tmp_path / "m"), "--data-dir", str(data_dir)]) == 0
    saved = json.loads((tmp_path / "m" / "calibration.json").read_text())
    assert saved["sentences"] == 2730
    capsys.readouterr()
    assert main(["specificity", "--model", str(tmp_path / "m"), "--probability", "a cat", "the dog"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    for score, probability, sentence in rows:
        tokens = len(sentence.split())  # "a cat", "the dog": one token a word
        expected = 1 / (1 + np.exp(-(saved["slope"] * float(score) + saved["length_slope"] * tokens
                                     + saved["intercept"])))
        assert float(probability) == pytest.approx(expected, abs=1e-3)


def test_two_feature_fit_matches_a_generic_optimizer() -> None:
    from probsent.calibration import fit_logistic_features

    rng = np.random.default_rng(1)
    scores, lengths = rng.normal(-60.0, 4.0, size=20_000), rng.integers(3, 40, size=20_000).astype(float)
    labels = rng.random(20_000) < 1 / (1 + np.exp(-(0.3 * scores + 0.1 * lengths + 17.0)))
    (slope, length_slope), intercept = fit_logistic_features(np.stack([scores, lengths], 1), labels)

    def negative_log_likelihood(w):
        z = w[0] * scores + w[1] * lengths + w[2]
        return np.sum(np.logaddexp(0, z)) - np.sum(labels * z)

    reference = minimize(negative_log_likelihood, x0=[0.0, 0.0, 0.0], method="BFGS",
                         options={"gtol": 1e-8, "maxiter": 10_000}).x
    assert [slope, length_slope, intercept] == pytest.approx(reference, rel=1e-3)
    assert [slope, length_slope, intercept] == pytest.approx([0.3, 0.1, 17.0], rel=0.15)


def test_length_aware_probability_uses_the_token_counts(tmp_path, capsys, make_model, data_dir) -> None:
    from probsent.api import load
    from probsent.text.tokenize import tokenize

    make_model("wlo").save(tmp_path / "m")
    assert main(["calibrate", "--model", str(tmp_path / "m"), "--data-dir", str(data_dir)]) == 0
    saved = json.loads((tmp_path / "m" / "calibration.json").read_text())
    assert saved["length_slope"] != 0.0
    sentences = ["a cat", "the dog sat on the mat ."]
    model = load(tmp_path / "m")
    scores = model.specificity(sentences)
    expected = [1 / (1 + np.exp(-(saved["slope"] * s + saved["length_slope"] * len(tokenize(t)) + saved["intercept"])))
                for s, t in zip(scores, sentences)]
    assert model.probability(sentences) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="token counts"):
        model.calibration.probability(scores)


def test_a_score_only_calibration_file_still_loads(tmp_path) -> None:
    from probsent.calibration import Calibration

    (tmp_path / "calibration.json").write_text(json.dumps(
        {"slope": 0.5, "intercept": 1.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0}))
    calibration = Calibration.load(tmp_path)
    assert calibration.probability(np.array([0.0])) == pytest.approx([1 / (1 + np.exp(-1.0))])
