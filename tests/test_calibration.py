"""P(specific): the logistic fit, `probsent calibrate` (deterministic, the shipped files reproduced,
a progress bar), the calibration file (this version's and earlier ones), `--probability`."""
from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from scipy.optimize import minimize

from probsent.api import load as probsent_load
from probsent.cli import main
from probsent.errors import InvalidValueError
from probsent.readouts.calibration import Calibration, feature_matrix, fit_logistic_features
from probsent.model_directory import DEFAULT_MODEL
from probsent.api import scoring_engine


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


# -- the fit against independent references ---------------------------------------------------

def test_one_binary_feature_gives_the_closed_form_maximum_likelihood() -> None:
    """With one 0/1 feature the maximum-likelihood logistic fit has a closed form: the intercept
    is the log-odds of the label where x = 0, the slope the difference of the log-odds."""
    x = np.array([0.0] * 10 + [1.0] * 10)
    y = np.array([1] * 3 + [0] * 7 + [1] * 8 + [0] * 2)  # shares 3/10 and 8/10
    (slope,), intercept = fit_logistic_features(x[:, None], y)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    # the ridge (1e-6 x rows, on standardized weights of order 1) moves the optimum by about
    # ridge / curvature = 2e-5 / (20 x 0.2) ~ 5e-6: 1e-4 is twenty times that
    assert intercept == pytest.approx(logit(0.3), abs=1e-4)
    assert slope == pytest.approx(logit(0.8) - logit(0.3), abs=1e-4)


def test_two_features_match_a_generic_optimizer_and_recover_the_parameters() -> None:
    rng = np.random.default_rng(0)
    score = rng.normal(40.0, 8.0, size=20_000)
    log_tokens = np.log(rng.integers(3, 60, size=20_000))
    labels = rng.random(20_000) < sigmoid(0.08 * score + 0.6 * log_tokens - 5.5)
    x = np.stack([score, log_tokens], axis=1)
    weights, intercept = fit_logistic_features(x, labels)

    def negative_log_likelihood(w):
        z = x @ w[:2] + w[2]
        return np.sum(np.logaddexp(0, z)) - np.sum(labels * z)

    def gradient(w):
        residual = sigmoid(x @ w[:2] + w[2]) - labels
        return np.append(x.T @ residual, residual.sum())

    reference = minimize(negative_log_likelihood, x0=[0.0, 0.0, 0.0], jac=gradient, method="BFGS",
                         options={"gtol": 1e-6, "maxiter": 10_000}).x
    ours = np.append(weights, intercept)
    # the optimizer stops where the gradient is below 1e-6; Newton at a step below 1e-10: the
    # likelihood (about 13,000 nats) agrees to far better than 1e-4 nats (the ridge's cost is 1e-6 x n x |w|^2)
    assert negative_log_likelihood(ours) <= negative_log_likelihood(reference) + 1e-4
    np.testing.assert_allclose(ours, reference, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ours, [0.08, 0.6, -5.5], rtol=0.15)  # 20,000 draws recover the truth


def test_separable_data_gives_finite_parameters() -> None:
    (slope,), intercept = fit_logistic_features(np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([0, 0, 1, 1]))
    assert np.isfinite(slope) and np.isfinite(intercept) and slope > 0


def test_the_features_are_what_their_names_say() -> None:
    scores, counts = np.array([10.0, -4.0]), np.array([1, 8])
    got = feature_matrix(("score", "log_tokens", "tokens", "score_per_token", "score_x_log_tokens"), scores, counts)
    np.testing.assert_array_equal(got, [[10.0, 0.0, 1.0, 10.0, 0.0],
                                        [-4.0, math.log(8), 8.0, -0.5, -4.0 * math.log(8)]])


def test_the_probability_is_the_logistic_of_the_features_and_nan_without_tokens() -> None:
    calibration = Calibration(("score", "log_tokens"), (0.1, 0.5), -4.0, "x", 2)
    got = calibration.probability(np.array([30.0, 45.0, np.nan, 12.0]), np.array([10, 20, 5, 0]))
    expected = [1 / (1 + math.exp(-(0.1 * 30 + 0.5 * math.log(10) - 4))),
                1 / (1 + math.exp(-(0.1 * 45 + 0.5 * math.log(20) - 4)))]
    np.testing.assert_allclose(got[:2], expected, rtol=1e-14)  # a few roundings of numbers near 1
    assert np.isnan(got[2]) and np.isnan(got[3])


# -- probsent calibrate ---------------------------------------------------------------------

def test_calibrate_then_probability(tmp_path, capsys, make_model, data_dir) -> None:
    from probsent.readouts.percentiles import reference_sample

    make_model("wlo").save(tmp_path / "m")
    assert main(["specificity", "--model", str(tmp_path / "m"), "--probability", "a cat"]) == 2
    assert "probsent calibrate" in capsys.readouterr().err
    assert main(["calibrate", "--model", str(tmp_path / "m"), "--data-dir", str(data_dir)]) == 0
    printed = capsys.readouterr().out
    used = len(reference_sample(data_dir / "paraphrase" / "pairs.tsv.gz"))
    assert f"from {used:,} reference sentences" in printed  # the sentences scored, not the 4,400 kept
    saved = json.loads((tmp_path / "m" / "calibration.json").read_text())
    assert saved["features"] == ["score", "log_tokens"] and saved["sentences"] == 4342 - 939
    sentences = ["a cat", "the dog", "a man is playing a guitar .", "the cat sat on the mat ."]
    assert main(["specificity", "--model", str(tmp_path / "m"), "--probability", *sentences]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    model = probsent_load(tmp_path / "m")
    for (score, probability, sentence), count in zip(rows, [2, 2, 7, 7]):  # whitespace tokens, as written
        if model.note(sentence):  # withheld (too short, or words the toy model lacks): so is P
            assert probability == "nan"
            continue
        by_hand = sigmoid(saved["coefficients"][0] * float(score) + saved["coefficients"][1] * math.log(count)
                          + saved["intercept"])
        # P and the score are printed to 4 decimals: P is off by at most 5e-5 from its rounding, and the
        # score's rounding (5e-5) moves P by at most 5e-5 x |slope| x max p(1 - p) = 1.25e-5 x |slope|
        assert float(probability) == pytest.approx(by_hand, abs=5e-5 + 1.25e-5 * abs(saved["coefficients"][0]) + 1e-12)


def test_the_fit_on_the_news_rows_matches_a_generic_optimizer(tmp_path, make_model, data_dir) -> None:
    make_model("wlo").save(tmp_path / "m")
    assert main(["calibrate", "--model", str(tmp_path / "m"), "--data-dir", str(data_dir)]) == 0
    model = probsent_load(tmp_path / "m")
    sentences = (data_dir / "specificity/news-train/data.txt").read_text(encoding="utf-8").splitlines()
    labels = (data_dir / "specificity/news-train/label.txt").read_text().split()
    dropped = {int(r) for r in (data_dir / "specificity/news-train/DERIVED_rows_overlapping_news_test.txt")
               .read_text().split()}
    rows = [i for i in range(len(sentences)) if i not in dropped]
    specific = np.array([labels[i] == "2" for i in rows])
    scores = np.asarray(model.specificity([sentences[i] for i in rows]), dtype=np.float64)
    counts = scoring_engine(model).token_counts([sentences[i] for i in rows])  # the tokenizer is not what this tests
    x = np.stack([scores, np.log(counts)], axis=1)

    def negative_log_likelihood(w):
        z = x @ w[:2] + w[2]
        return np.sum(np.logaddexp(0, z)) - np.sum(specific * z)

    reference = minimize(negative_log_likelihood, x0=[0.0, 0.0, 0.0], method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-10, "maxiter": 40_000}).x
    fitted = model.calibration
    ours = np.append(fitted.coefficients, fitted.intercept)
    assert negative_log_likelihood(ours) <= negative_log_likelihood(reference) + 1e-4


def test_calibrate_is_a_function_of_its_inputs(tmp_path, make_model, data_dir, capsys) -> None:
    """Two calibrations of the same model and data write the same bytes, whatever the chunking
    of the scoring and whether a progress bar is drawn (on standard error)."""
    from probsent.training import model_calibration

    make_model("wlo").save(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    model_calibration.calibrate(probsent_load(tmp_path / "a"), data_dir, progress=False)
    assert capsys.readouterr().err == ""
    model_calibration.calibrate(probsent_load(tmp_path / "b"), data_dir, progress=True)
    assert "100%" in capsys.readouterr().err  # tqdm's bar, on standard error
    for name in ("calibration.json", "percentiles.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


@pytest.mark.slow
def test_the_shipped_calibration_is_what_calibrate_writes(tmp_path, data_dir) -> None:
    """issue 50 item 18: `cp -r probsent/pretrained/wlo m && probsent calibrate --model m` gives
    the shipped files. The percentile table is compared byte for byte (scores rounded to 4
    decimals); the fit's numbers to 1e-8: Newton stops at a step below 1e-10 on standardized
    features, and back in raw units that is multiplied by at most |center| / scale (about 10
    for these features), so two machines whose BLAS sums in another order agree to ~1e-9."""
    shutil.copytree(DEFAULT_MODEL, tmp_path / "m")
    assert main(["calibrate", "--model", str(tmp_path / "m"), "--data-dir", str(data_dir)]) == 0
    written = tmp_path / "m"
    assert (written / "percentiles.json").read_bytes() == (DEFAULT_MODEL / "percentiles.json").read_bytes()
    ours = json.loads((written / "calibration.json").read_text())
    shipped = json.loads((DEFAULT_MODEL / "calibration.json").read_text())
    numbers = ("coefficients", "intercept")
    assert {k: v for k, v in ours.items() if k not in numbers} == {k: v for k, v in shipped.items() if k not in numbers}
    np.testing.assert_allclose(np.append(ours["coefficients"], ours["intercept"]),
                               np.append(shipped["coefficients"], shipped["intercept"]), rtol=0, atol=1e-8)


def test_a_missing_news_file_writes_nothing(tmp_path, make_model, data_dir) -> None:
    from probsent.training import model_calibration

    make_model("wlo").save(tmp_path / "m")
    data = tmp_path / "data"
    (data / "paraphrase").mkdir(parents=True)
    shutil.copy(data_dir / "paraphrase" / "pairs.tsv.gz", data / "paraphrase" / "pairs.tsv.gz")
    with pytest.raises(Exception, match="news-train"):
        model_calibration.calibrate(probsent_load(tmp_path / "m"), data, progress=False)
    assert not (tmp_path / "m" / "percentiles.json").exists() and not (tmp_path / "m" / "calibration.json").exists()
    assert not (tmp_path / "m" / "estimated_words.safetensors").exists()  # the open vocabulary neither (issue 49)


# -- the calibration file ---------------------------------------------------------------------

def test_a_calibration_saves_and_loads_the_same(tmp_path) -> None:
    calibration = Calibration(("score", "log_tokens"), (0.07691435770143787, 0.5700329116567023),
                              -5.594556915170117, "x", 3403)
    calibration.save(tmp_path)
    assert Calibration.load(tmp_path) == calibration
    first = (tmp_path / "calibration.json").read_bytes()
    Calibration.load(tmp_path).save(tmp_path)
    assert (tmp_path / "calibration.json").read_bytes() == first


@pytest.mark.parametrize("content,problem", [
    ({"features": ["score", "wordiness"], "coefficients": [1, 2]}, "unknown feature \"wordiness\""),
    ({"features": ["score"], "coefficients": [1, 2]}, "2 coefficients for 1 features"),
    ({"features": ["score", "score"], "coefficients": [1, 2]}, "each once"),
    ({"features": ["score"], "coefficients": [float("nan")]}, "finite"),
    ({"features": "score", "coefficients": [1]}, "features must be a list"),
])
def test_a_damaged_calibration_is_refused_with_its_file(tmp_path, content, problem) -> None:
    fields = {"intercept": 0.0, "fitted_on": "x", "sentences": 2, **content}
    (tmp_path / "calibration.json").write_text(json.dumps(fields))
    with pytest.raises(InvalidValueError, match="calibration.json: damaged calibration") as caught:
        Calibration.load(tmp_path)
    assert problem in str(caught.value)


def test_an_earlier_length_relative_file_is_read_as_it_was(tmp_path) -> None:
    """A calibration.json of an earlier probsent (the percentile fit) still loads, and P is its
    logistic of the percentile for the length, as that version read it."""
    shutil.copytree(DEFAULT_MODEL, tmp_path / "m")
    (tmp_path / "m" / "calibration.json").write_text(json.dumps(
        {"accuracy_at_half": 0.678, "fitted_on": "news-train rows 0..2795 without test overlaps",
         "intercept": -4.93780511915928, "percentile_intercept": -0.6647181994605881,
         "percentile_slope": 0.010734094791459382, "sentences": 2730, "slope": 0.09921766279692049}))
    model = probsent_load(tmp_path / "m")
    sentences = ["Einstein was born in Ulm in 1879.", "It is a thing that happens.", "lol ok"]
    percentile = model.percentile(sentences)
    expected = sigmoid(0.010734094791459382 * percentile - 0.6647181994605881)  # NaN stays NaN
    np.testing.assert_allclose(model.probability(sentences), expected, rtol=1e-14)
    assert np.isnan(expected[2])


def test_an_earlier_score_only_file_gives_its_news_threshold_probability(tmp_path) -> None:
    shutil.copytree(DEFAULT_MODEL, tmp_path / "m")
    (tmp_path / "m" / "calibration.json").write_text(json.dumps(
        {"slope": 0.1, "intercept": -5.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0}))
    model = probsent_load(tmp_path / "m")
    sentence = "Einstein was born in Ulm in 1879."
    assert model.probability(sentence) == pytest.approx(sigmoid(0.1 * model.specificity(sentence) - 5.0), rel=1e-12)


def test_a_length_aware_calibration_file_is_refused_with_the_command(tmp_path) -> None:
    (tmp_path / "calibration.json").write_text(json.dumps(
        {"slope": 0.5, "intercept": 1.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0,
         "length_slope": 0.04}))
    with pytest.raises(InvalidValueError, match="probsent calibrate --model"):
        Calibration.load(tmp_path)


# -- the shipped calibration ------------------------------------------------------------------

def test_the_shipped_probability_rises_with_the_score_at_each_length() -> None:
    model = probsent_load()
    calibration = model.calibration
    assert calibration.features == ("score", "log_tokens") and calibration.coefficients[0] > 0
    counts = np.repeat(np.arange(1, 200), 50)
    scores = np.tile(np.linspace(-80.0, 120.0, 50), 199)
    p = calibration.probability(scores, counts).reshape(199, 50)
    assert (np.diff(p, axis=1) > 0).all()


def test_probsent_calibrate_fits_the_features_the_shipped_calibration_has() -> None:
    """``probsent calibrate``'s default features are those the pre-registered choice took and the
    shipped model was calibrated with (the wing's probability report checks the model against
    the recorded choice)."""
    from probsent.training.model_calibration import FEATURES

    assert tuple(FEATURES) == probsent_load().calibration.features == ("score", "log_tokens")


def test_the_shipped_probability_reads_a_long_precise_news_sentence_as_specific() -> None:
    """P is the chance that a news annotator calls the sentence specific: a long sentence of
    figures is, a short vague one is not (a short precise one sits between: annotators reward length)."""
    model = probsent_load()
    p = model.probability(["The company said its third-quarter net income rose 12 % to $ 45.6 million , or 89 cents "
                           "a share , from $ 40.7 million , or 80 cents a share , a year earlier .", "It is good."])
    assert p[0] > 0.75 and p[1] < 0.15, p


def test_news_probability_is_probability_with_a_deprecation_warning() -> None:
    model = probsent_load()
    sentences = ["Einstein was born in Ulm in 1879.", "It is a thing that happens."]
    with pytest.warns(DeprecationWarning, match="probability"):
        folded = model.news_probability(sentences)
    np.testing.assert_array_equal(folded, model.probability(sentences))
