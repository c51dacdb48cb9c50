"""The WLO model shipped inside the package: loads with no argument, is small, its scores and
its model card's example table are what the paper's recurrence gives on its raw weights, and its
P(specific) reaches the Length baseline's News accuracy."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest
from safetensors.numpy import load_file as load_arrays
from safetensors.torch import load_file

import probsent
from probsent.api import DEFAULT_MODEL
from probsent.models import WLO
from probsent.api import scoring_engine
from probsent.text.tokenize import tokenize
from tests.helpers import REPO, wlo_recurrence

CARD = DEFAULT_MODEL / "MODEL_CARD.md"
SPECIFIC = "The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday after the Federal Reserve raised rates."
GENERAL = "It is good."
WEIGHTS = load_file(str(DEFAULT_MODEL / "model.safetensors"))
# Sigma_0 = s_0 I: the unit the model is written in (config.json; the paper's N(0, I) where absent)
START_VARIANCE = json.loads((DEFAULT_MODEL / "config.json").read_text())["model"].get("start_variance", 1.0)
# the open vocabulary's classes, read from the file as it is: a class's row is its (A, B)
CLASS_SCALES = load_arrays(str(DEFAULT_MODEL / "estimated_words.safetensors"))["scale"]


def scale_row(token: str, estimate: str | None, ids: dict[str, int]) -> np.ndarray:
    """A token's A in float64: its vocabulary entry's row, else its open-vocabulary class's (the
    class ``explain`` names for it: which class a word gets is checked against a naive reference
    in tests/test_open_vocabulary.py)."""
    if token in ids:
        return WEIGHTS["scale.weight"].double().numpy()[ids[token]]
    from probsent.data.vocab import class_names

    return CLASS_SCALES[class_names().index(estimate)].astype(np.float64)


def recurrence_entropy(sentence: str) -> float:
    """The sentence's entropy by the paper's recurrence, word by word in float64 on the raw
    weights: Sigma_0 = s_0 I, Sigma_i = A_i Sigma_{i-1} A_i (diagonal), H = 1/2 sum_d log(2 pi e Sigma_d).
    A word without an entry uses its open-vocabulary class's row."""
    ids = {w: i for i, w in enumerate((DEFAULT_MODEL / "vocab.txt").read_text(encoding="utf-8").splitlines())}
    words = probsent.load().explain(sentence).words
    assert [w.token for w in words] == tokenize(sentence)
    rows = np.array([scale_row(w.token, w.estimate, ids) for w in words]).reshape(-1, len(CLASS_SCALES[0]))
    variance = wlo_recurrence(rows, np.zeros_like(rows), START_VARIANCE)[1][-1]
    return float(0.5 * np.sum(np.log(2 * math.pi * math.e * variance)))


@pytest.fixture(scope="module")
def model() -> probsent.SentenceModel:
    return probsent.load()


def test_loads_with_no_argument_and_is_small(model) -> None:
    assert isinstance(model.encoder, WLO)
    assert model.path == DEFAULT_MODEL
    # the model's own files within 10 MiB; its open vocabulary's table (shipped since issue 49,
    # which bounds the wheel's growth for it at 10 MB) besides
    table = DEFAULT_MODEL / "estimated_words.safetensors"
    assert table.is_file() and model.word_estimates is not None
    size = sum(f.stat().st_size for f in DEFAULT_MODEL.iterdir() if f != table)
    assert size <= 10 * 1024 * 1024, size
    assert table.stat().st_size <= 10 * 10**6
    weights = load_file(str(DEFAULT_MODEL / "model.safetensors"))
    assert {str(t.dtype) for t in weights.values()} == {"torch.float16"}
    assert model.calibration is not None
    assert "research" in CARD.read_text(encoding="utf-8").lower()  # the licence terms are stated


def test_scores_and_the_card_examples_follow_the_recurrence(model) -> None:
    rows = re.findall(r"^\| (.+?) \| (-?\d+\.\d{3}) \| (\d+|– \(.+?\)) \| (\d\.\d{3}|–) \|$",
                      CARD.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert len(rows) >= 5, "the model card lists example scores"
    sentences = [r[0] for r in rows]
    expected = np.array([recurrence_entropy(s) for s in sentences])
    calibration = json.loads((DEFAULT_MODEL / "calibration.json").read_text())
    assert calibration["features"] == ["score", "log_tokens"]
    (a, b), c = calibration["coefficients"], calibration["intercept"]
    counts = scoring_engine(model).token_counts(sentences)
    assert model.entropy(sentences) == pytest.approx(expected, abs=1e-4)
    # the card prints three decimals; P(specific) = sigmoid(a * score + b * log tokens + c), score =
    # -entropy, or "–" with the note
    assert [float(r[1]) for r in rows] == pytest.approx(expected, abs=5.1e-4)
    percentile = model.percentile(sentences)
    for (sentence, _, shown_percentile, shown_probability), value, entropy, count in zip(rows, percentile, expected,
                                                                                          counts):
        if np.isnan(value):
            assert shown_percentile == f"– ({model.note(sentence)})" and shown_probability == "–"
            continue
        probability = 1 / (1 + np.exp(-(a * -entropy + b * np.log(count) + c)))
        assert int(shown_percentile) == round(value) and float(shown_probability) == pytest.approx(probability, abs=5.1e-4)


def test_specific_scores_above_general(model) -> None:
    assert model.specificity(SPECIFIC) > model.specificity(GENERAL)
    assert model.probability(SPECIFIC) > model.probability(GENERAL)


def test_word_shares_are_the_log_scales_and_sum_to_the_entropy(model) -> None:
    explanation = model.explain(SPECIFIC)
    scale = WEIGHTS["scale.weight"].double().numpy()
    dim = scale.shape[1]
    assert explanation.prior_entropy == pytest.approx(dim / 2 * math.log(2 * math.pi * math.e * START_VARIANCE),
                                                      abs=1e-9)
    assert any(w.estimate for w in explanation.words)  # 10,421.67: a number without an entry
    ids = {w: i for i, w in enumerate(model.vocab.words)}
    for word in explanation.words:
        row = scale[ids[word.word]] if word.word is not None else scale_row(word.token, word.estimate, ids)
        assert word.entropy == pytest.approx(np.log(np.abs(row)).sum(), abs=1e-4), word.token
    total = explanation.prior_entropy + sum(w.entropy for w in explanation.words)
    assert total == pytest.approx(recurrence_entropy(SPECIFIC), abs=1e-4)
    assert explanation.entropy == pytest.approx(recurrence_entropy(SPECIFIC), abs=1e-4)


def test_cli_uses_the_shipped_model_without_data(tmp_path) -> None:
    # run from an empty directory: nothing of the repository or ../shared is needed
    result = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity", "--probability"],
                            input=f"{GENERAL}\n{SPECIFIC}\n", capture_output=True, text=True,
                            cwd=tmp_path, check=True)
    scores = [float(line.split("\t")[0]) for line in result.stdout.splitlines()]
    assert scores[1] > scores[0]
    explained = subprocess.run([sys.executable, "-m", "probsent.cli", "explain", SPECIFIC],
                               capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "entropy" in explained.stdout and "2.3" in explained.stdout


def test_news_accuracy_is_documented_and_the_probability_reaches_the_length_baseline(model, data_dir) -> None:
    """The News accuracy that results/shipped/evaluation.json (and so the model card and
    reproduction/docs/RESULTS.md) reports is what the shipped model's entropy gives, and its P(specific) (a
    logistic of the score and the log token count fitted on the news training rows) is at least as
    accurate on News as the Length baseline."""
    from reproduction.evaluation.baselines import LengthScorer
    from reproduction.evaluation.model_scorer import ModelScorer, ProbabilityScorer
    from reproduction.evaluation.results import load_evaluation
    from reproduction.evaluation.tables import news_experiment

    shipped = news_experiment(ModelScorer("shipped", model), data_dir).accuracy
    documented = load_evaluation(REPO / "reproduction" / "results" / "shipped" / "evaluation.json").results.first_model()
    assert shipped == pytest.approx(documented.specificity.news.accuracy, abs=1e-9)
    assert model.calibration is not None and model.calibration.coefficients[0] > 0
    probability = news_experiment(ProbabilityScorer(model), data_dir).accuracy
    length = news_experiment(LengthScorer(), data_dir).accuracy
    assert probability >= length, (probability, length)


def test_the_sts_benchmark_similarity_is_documented_and_reaches_55(model, data_dir) -> None:
    """The STS Benchmark test Pearson of the cosine of concat(mean, var) that
    results/shipped/evaluation.json (the model card, RESULTS) reports is what the shipped model
    gives, computed here from its encodings and SciPy's Pearson, and it is at least 55."""
    from scipy.stats import pearsonr

    from reproduction.evaluation import datasets as ds
    from reproduction.evaluation.results import load_evaluation

    pairs = ds.load_sts_benchmark(ds.as_data_dir(data_dir), "test")
    (mean1, var1), (mean2, var2) = model.encode(pairs.first), model.encode(pairs.second)
    first, second = np.hstack([mean1, var1]).astype(np.float64), np.hstack([mean2, var2]).astype(np.float64)
    cosine = (first * second).sum(1) / np.linalg.norm(first, axis=1) / np.linalg.norm(second, axis=1)
    pearson = 100.0 * pearsonr(cosine, pairs.scores).statistic
    documented = load_evaluation(REPO / "reproduction" / "results" / "shipped" / "evaluation.json").results.first_model()
    assert pearson == pytest.approx(documented.sts.pearson["cosine"].stsb_test, abs=0.05)
    assert pearson >= 55.0


@pytest.mark.slow
def test_the_readme_shows_what_make_run_prints() -> None:
    """README.md's sample output is what the shipped model prints for ``make run``'s commands
    (regenerated by ``python -m reproduction.experiments.readme_sample``)."""
    from reproduction.experiments import readme_sample

    assert readme_sample.shown() == readme_sample.render()


def test_no_readme_example_word_seen_20_times_in_training_is_unknown(model, data_dir) -> None:
    """Every word of the README's examples that the shared training pairs hold 20 times or more
    has its own entry in the shipped model (its own term in ``explain``). The words the model
    lacks are counted in the pairs file, the lines that may hold one tokenized as training does."""
    import gzip

    from reproduction.experiments.readme_sample import EXAMPLES, EXPLAINED

    sentences = [*EXAMPLES.read_text(encoding="utf-8").splitlines(), EXPLAINED]
    unknown = {t for s in sentences for t in tokenize(s)} - set(model.vocab.index)
    counts = dict.fromkeys(unknown, 0)
    with gzip.open(data_dir / "paraphrase" / "pairs.tsv.gz", "rt", encoding="utf-8") as pairs:
        for line in pairs:
            lowered = line.lower()
            if any(word in lowered for word in unknown):
                for side in line.rstrip("\n").split("\t")[:2]:
                    for token in tokenize(side):
                        if token in counts:
                            counts[token] += 1
    assert all(count < 20 for count in counts.values()), counts


def test_the_information_content_row_is_the_shipped_models_training_counts(model, data_dir) -> None:
    """The information-content row of results/shipped/evaluation.json (and so of the model card
    and reproduction/docs/RESULTS.md) is, on News, what -log p(w) summed over the tokens gives with p from the
    counts of the shipped model's training pairs, add-one smoothed as documented: p(w) = (c(w) + 1)
    / (N + V + 1), computed here from the pairs' word counts (training used every pair)."""
    from probsent.data.mapped_pairs import load_mapped_pairs
    from reproduction.evaluation.results import load_evaluation
    from reproduction.evaluation.tables import news_experiment

    settings = model.config["training"]["config"]
    assert not settings.get("source_caps")  # the mixture is the file
    mapped = load_mapped_pairs(data_dir / "paraphrase" / "pairs.tsv.gz", settings["max_pairs"])
    counts = dict(zip(mapped.words, mapped.counts.tolist()))
    log_total = math.log(sum(counts.values()) + len(counts) + 1)

    class ByHand:
        name = "information content by hand"

        def specificity(self, sentences: list[str]) -> np.ndarray:
            return np.array([sum(log_total - math.log(counts.get(t, 0) + 1) for t in tokenize(s)) for s in sentences])

    systems = load_evaluation(REPO / "reproduction" / "results" / "shipped" / "evaluation.json").results.systems
    documented = systems["Information content (training counts of WLO)"].specificity
    assert news_experiment(ByHand(), data_dir).accuracy == pytest.approx(documented.news.accuracy, abs=1e-9)
    row = (f"| Information content baseline, training counts of WLO (computed) | {documented.news.accuracy:.1f} | "
           f"{documented.twitter.spearman:.1f} | {documented.yelp.spearman:.1f} | {documented.movie.spearman:.1f} |")
    assert row in CARD.read_text(encoding="utf-8")


def test_the_shipped_config_holds_only_settings(model) -> None:
    """Its recorded training settings are today's (issue 42 rewrote the recorded configs once,
    without the settings issue 35 removed): they read back as themselves (a setting added since
    takes its default)."""
    from probsent.settings import TrainConfig

    settings = model.config["training"]["config"]
    read = TrainConfig.from_dict(settings).to_dict()
    assert {name: read[name] for name in settings} == settings
