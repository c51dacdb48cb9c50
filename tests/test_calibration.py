"""P(specific): the logistic fit and `probsent calibrate` / `specificity --probability`."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import minimize

from probsent.api import load as probsent_load
from probsent.readouts.calibration import fit_logistic
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
    assert saved["sentences"] == 2730 and "length_slope" not in saved
    capsys.readouterr()
    assert main(["specificity", "--model", str(tmp_path / "m"), "--probability", "a cat", "the dog",
                 "a man is playing a guitar ."]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    model = probsent_load(tmp_path / "m")
    for score, probability, sentence in rows:  # a function of the percentile for the length alone
        percentile = model.percentile(sentence)
        if np.isnan(percentile):  # withheld (too short, or words the toy model lacks): so is P
            assert probability == "nan"
            continue
        expected = 1 / (1 + np.exp(-(saved["percentile_slope"] * percentile + saved["percentile_intercept"])))
        assert float(probability) == pytest.approx(expected, abs=1e-3)


def test_the_fit_on_the_news_rows_matches_a_generic_optimizer(tmp_path, make_model, data_dir) -> None:
    from probsent.api import load
    from probsent.evaluation.datasets import DataDir, load_news_train

    make_model("wlo").save(tmp_path / "m")
    assert main(["calibrate", "--model", str(tmp_path / "m"), "--data-dir", str(data_dir)]) == 0
    model = load(tmp_path / "m")
    news = load_news_train(DataDir(data_dir))
    scores = np.asarray(model.specificity(news.sentences))

    def negative_log_likelihood(w):
        z = w[0] * scores + w[1]
        return np.sum(np.logaddexp(0, z)) - np.sum(news.specific * z)

    reference = minimize(negative_log_likelihood, x0=[0.0, 0.0], method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 20_000}).x
    fitted = model.calibration
    assert negative_log_likelihood([fitted.slope, fitted.intercept]) <= negative_log_likelihood(reference) + 1e-4
    accuracy = ((1 / (1 + np.exp(-(fitted.slope * scores + fitted.intercept))) > 0.5) == news.specific).mean()
    assert fitted.accuracy_at_half == pytest.approx(accuracy)


@pytest.mark.parametrize("slope", [0.7, -0.2, 1e-300, 1e300])
def test_the_probability_is_in_the_score_order_for_any_fit(slope) -> None:
    from probsent.readouts.calibration import Calibration

    scores = np.sort(np.random.default_rng(0).normal(40.0, 10.0, 2000))
    probability = Calibration(slope, -3.0, "x", 2, 1.0).probability(scores)
    assert np.isfinite(probability).all() and ((probability >= 0) & (probability <= 1)).all()
    steps = np.diff(probability)
    assert (steps >= 0).all() if slope > 0 else (steps <= 0).all()  # monotone: never reorders


def test_the_shipped_probabilities_follow_the_score_and_the_percentile() -> None:
    from probsent.api import load

    model = load()
    assert model.calibration.slope > 0
    sentences = [line for line in open("examples/sentences.txt", encoding="utf-8").read().splitlines() if line]
    sentences += ["Things happen.", "She said it was fine.", "Tokyo's population reached 37 million.",
                  "Many people think that a lot of things are often not really very good at all."]
    order = np.argsort(model.specificity(sentences), kind="stable")
    assert (np.diff(np.asarray(model.news_probability(sentences))[order]) >= 0).all()
    read = [s for s in sentences if model.note(s) == ""]
    order = np.argsort(model.percentile(read), kind="stable")  # P(specific) follows the percentile for the length
    assert (np.diff(np.asarray(model.probability(read))[order]) >= 0).all()


def test_a_length_aware_calibration_file_is_refused_with_the_command(tmp_path) -> None:
    from probsent.readouts.calibration import Calibration
    from probsent.errors import InvalidValueError

    (tmp_path / "calibration.json").write_text(json.dumps(
        {"slope": 0.5, "intercept": 1.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0,
         "length_slope": 0.04}))
    with pytest.raises(InvalidValueError, match="probsent calibrate --model"):
        Calibration.load(tmp_path)


def test_a_score_only_calibration_file_still_loads(tmp_path) -> None:
    from probsent.readouts.calibration import Calibration

    (tmp_path / "calibration.json").write_text(json.dumps(
        {"slope": 0.5, "intercept": 1.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0}))
    calibration = Calibration.load(tmp_path)
    assert calibration.probability(np.array([0.0])) == pytest.approx([1 / (1 + np.exp(-1.0))])
