"""The paper's evaluations, run on any scorer or encoder; each returns its typed result
(:mod:`reproduction.evaluation.results`).

A *scorer* is anything with ``specificity(sentences) -> np.ndarray`` (higher = more
specific); if it also has ``prepare(sentences)``, that is called once with every sentence an
experiment will score. An *encoder* (for STS) has ``encode(sentences)`` returning a 2-D array,
or a ``(mean, var)`` pair of 2-D arrays when ``probabilistic`` is true (and may also have
``prepare``, and ``encode_log_variance`` returning ``(mean, log var)``).
Accuracies, F1 and correlations are reported x100.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np
import torch

from probsent.errors import ProbsentError
from reproduction.evaluation import datasets as ds
from reproduction.evaluation import metrics
from reproduction.evaluation.length_controlled import read_two_columns
from reproduction.evaluation.results import (LengthNormalizedNews, NewsAccuracy, RatedCorrelation, ShorterSpecific,
                                         SnliEntailment, Specificity, Sts, StsTable)
from probsent.gaussian import expected_inner_product
from probsent.api import tokenize

DataLike = ds.DataDir | str | os.PathLike[str] | None

SNLI_EQUAL_LENGTH_COUNTS = {"entailment": 120, "neutral": 192, "contradiction": 208}
"""Pairs per label among SNLI test pairs whose two sentences have equally many tokens."""

SNLI_DEV_EQUAL_LENGTH_COUNTS = {"entailment": 139, "neutral": 184, "contradiction": 218}
"""The same among the SNLI development pairs."""

_SNLI_EQUAL_LENGTH = {"test": SNLI_EQUAL_LENGTH_COUNTS, "dev": SNLI_DEV_EQUAL_LENGTH_COUNTS}


class Scorer(Protocol):
    name: str

    def specificity(self, sentences: list[str]) -> np.ndarray: ...


class Encoder(Protocol):
    def encode(self, sentences: list[str]) -> Any: ...


def _prepare(scorer: Scorer | Encoder, *groups: Sequence[str]) -> None:
    """Give a scorer with a ``prepare`` method every sentence it will see, in one call."""
    prepare = getattr(scorer, "prepare", None)
    if callable(prepare):
        prepare([s for group in groups for s in group])


def _scores(scorer: Scorer, sentences: Sequence[str]) -> np.ndarray:
    """Call the scorer and check it returned one finite number per sentence."""
    values = np.asarray(scorer.specificity(list(sentences)), dtype=np.float64)
    if values.shape != (len(sentences),):
        raise ProbsentError(
            f"scorer {getattr(scorer, 'name', scorer)!r} returned shape {values.shape} for {len(sentences)} sentences"
        )
    if not np.all(np.isfinite(values)):
        raise ProbsentError(f"scorer {getattr(scorer, 'name', scorer)!r} returned non-finite specificity scores")
    return values


def _pct(value: float) -> float:
    return 100.0 * float(value)


def _threshold(value: float) -> float | None:
    """Thresholds of +-inf (all one class) are reported as None, which JSON can hold."""
    return float(value) if np.isfinite(value) else None


# --- specificity -------------------------------------------------------------------------

def news_experiment(scorer: Scorer, data: DataLike = None) -> NewsAccuracy:
    """News accuracy and F1 (x100) with the threshold tuned on the cleaned news-train rows.

    Training rows: PDTB-derived rows 0..2795 minus those equal to test sentences; a sentence
    is predicted specific iff its score > threshold (paper Tables 2 and 7).
    """
    data = ds.as_data_dir(data)
    train, test = ds.load_news_train(data), ds.load_news_test(data)
    _prepare(scorer, train.sentences, test.sentences)
    threshold = metrics.tune_threshold(_scores(scorer, train.sentences), train.specific)
    predicted = metrics.predict_specific(_scores(scorer, test.sentences), threshold)
    return NewsAccuracy(accuracy=_pct(metrics.accuracy(predicted, test.specific)),
                        f1=_pct(metrics.f1_score(predicted, test.specific)),
                        threshold=_threshold(threshold), n_train=len(train.sentences), n_test=len(test.sentences))


def specificity_experiment(scorer: Scorer, data: DataLike = None) -> Specificity:
    """News accuracy/F1 and Spearman correlations on Twitter, Yelp and Movie (paper Table 2).

    News is :func:`news_experiment`; each Ko et al. (2019) domain gives the Spearman
    correlation (x100) of the score with the mean human rating.
    """
    data = ds.as_data_dir(data)
    rated = {d: ds.load_ko2019(data, d) for d in ds.KO2019_DOMAINS}
    train, test = ds.load_news_train(data), ds.load_news_test(data)
    _prepare(scorer, train.sentences, test.sentences, *(r.sentences for r in rated.values()))
    news = news_experiment(scorer, data)
    domains = {domain: RatedCorrelation(_pct(metrics.spearman(_scores(scorer, sample.sentences), sample.ratings)),
                                        len(sample.sentences))
               for domain, sample in rated.items()}
    return Specificity(news, **domains)


def majority_baseline(data: DataLike = None) -> Specificity:
    """News accuracy/F1 of predicting the majority class of the cleaned training rows."""
    data = ds.as_data_dir(data)
    train, test = ds.load_news_train(data), ds.load_news_test(data)
    majority_specific = 2 * int(train.specific.sum()) >= train.specific.size
    predicted = np.full(len(test.sentences), majority_specific)
    return Specificity(NewsAccuracy(accuracy=_pct(metrics.accuracy(predicted, test.specific)),
                                    f1=_pct(metrics.f1_score(predicted, test.specific)),
                                    majority="specific" if majority_specific else "general"))


def speciteller_baseline(data: DataLike = None) -> Specificity:
    """News accuracy/F1 of SPECITELLER's own probabilities (``ref.probs``) thresholded at 0.5."""
    test = ds.load_news_test(ds.as_data_dir(data))
    predicted = metrics.predict_specific(test.speciteller_probs, 0.5)
    return Specificity(NewsAccuracy(accuracy=_pct(metrics.accuracy(predicted, test.specific)),
                                    f1=_pct(metrics.f1_score(predicted, test.specific))))


def news_length_pool(data: DataLike = None) -> tuple[list[str], np.ndarray, int]:
    """The length-normalized News pool: test sentences, then news-train rows 0..2795.

    Sentences are de-duplicated by exact text, keeping the first occurrence, so a test
    sentence keeps its test label. Returns sentences, labels (True = specific) and the number
    of dropped duplicates whose label disagreed with the kept one.
    """
    data = ds.as_data_dir(data)
    test = ds.load_news_test(data)
    train = ds.load_news_train(data, pdtb_only=True, drop_test_overlap=False)
    seen: dict[str, bool] = {}
    conflicts = 0
    for sentence, label in zip(test.sentences + train.sentences, np.concatenate([test.specific, train.specific])):
        if sentence in seen:
            conflicts += int(seen[sentence] != bool(label))
        else:
            seen[sentence] = bool(label)
    return list(seen), np.fromiter(seen.values(), dtype=bool, count=len(seen)), conflicts


def length_normalized_news(scorer: Scorer, data: DataLike = None) -> LengthNormalizedNews:
    """News accuracy with sentence length factored out (paper Table 3).

    See :func:`news_length_pool` for the pool and
    :func:`reproduction.evaluation.metrics.length_normalized_accuracy` for the protocol: tune on
    sentences of ``k`` tokens, test on those of ``k - 1``, pool the accuracy.
    """
    sentences, specific, conflicts = news_length_pool(data)
    _prepare(scorer, sentences)
    lengths = [len(tokenize(s)) for s in sentences]
    outcome = metrics.length_normalized_accuracy(lengths, _scores(scorer, sentences), specific)
    return LengthNormalizedNews(
        accuracy=_pct(outcome.accuracy), majority_floor=_pct(outcome.majority_floor),
        tested_group_majority=_pct(outcome.tested_group_majority), pool_size=outcome.pool_size,
        n_tested=outcome.n_tested, n_untested=outcome.n_untested, n_groups_tested=outcome.n_groups_tested,
        duplicate_label_conflicts=conflicts)


def equal_length(snli: ds.NliPairs) -> ds.NliPairs:
    """The pairs whose premise and hypothesis have the same number of Treebank tokens."""
    keep = [i for i, (p, h) in enumerate(zip(snli.premises, snli.hypotheses)) if len(tokenize(p)) == len(tokenize(h))]
    return ds.NliPairs([snli.premises[i] for i in keep], [snli.hypotheses[i] for i in keep], snli.labels[keep])


def snli_equal_length_pairs(data: DataLike = None, split: str = "test") -> ds.NliPairs:
    """SNLI pairs of ``split`` (test or dev) whose premise and hypothesis have the same number
    of Treebank tokens, checked against the known count per label."""
    data = ds.as_data_dir(data)
    pairs = equal_length(ds.load_snli(data, split))
    counts = {name: int(np.sum(pairs.labels == k)) for k, name in enumerate(ds.SNLI_LABELS)}
    if counts != _SNLI_EQUAL_LENGTH[split]:
        raise ProbsentError(
            f"{data.root / 'snli'}: equal-length SNLI {split} pairs per label are {counts},"
            f" expected {_SNLI_EQUAL_LENGTH[split]}; is this the SNLI 1.0 {split} set?"
        )
    return pairs


def snli_entailment(scorer: Scorer, data: DataLike = None, split: str = "test") -> SnliEntailment:
    """Per SNLI label, % of equal-length pairs (of ``split``: test, or dev to choose with) whose
    hypothesis is less specific than its premise.

    "Less specific" means a strictly lower specificity score (for a probabilistic model: a
    larger entropy; for a deterministic one: a smaller norm). Ties count as not less.
    """
    pairs = snli_equal_length_pairs(data, split)
    _prepare(scorer, pairs.premises, pairs.hypotheses)
    less = _scores(scorer, pairs.hypotheses) < _scores(scorer, pairs.premises)
    less_by_label = {name: _pct(np.mean(less[pairs.labels == k])) for k, name in enumerate(ds.SNLI_LABELS)}
    counts = {name: int(np.sum(pairs.labels == k)) for k, name in enumerate(ds.SNLI_LABELS)}
    return SnliEntailment(**less_by_label, n=counts)


SHORTER_SPECIFIC = Path(__file__).with_name("data") / "shorter_specific_pairs.tsv"


def load_shorter_specific(path: str | os.PathLike[str] = SHORTER_SPECIFIC) -> tuple[list[str], list[str]]:
    """The (specific, vague) sentence pairs of probsent's own set in which the specific sentence
    has fewer tokens (lines starting with ``#`` and the header are skipped)."""
    return read_two_columns(path, "specific\tvague")


def shorter_specific_experiment(scorer: Scorer, path: str | os.PathLike[str] = SHORTER_SPECIFIC) -> ShorterSpecific:
    """% of pairs of :func:`load_shorter_specific` whose specific (shorter) sentence scores
    strictly higher than the long vague one. Length scores 0 by construction: a score that
    mostly counts words fails here."""
    specific, vague = load_shorter_specific(path)
    _prepare(scorer, specific, vague)
    higher = _scores(scorer, specific) > _scores(scorer, vague)
    return ShorterSpecific(accuracy=_pct(np.mean(higher)), n=len(specific))


# --- STS ---------------------------------------------------------------------------------

def rows_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity; 0 where either vector is zero."""
    dot = np.einsum("ij,ij->i", a, b)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.divide(dot, norms, out=np.zeros_like(dot), where=norms > 0)


def _encode(model: Encoder, sentences: list[str], probabilistic: bool) -> tuple[np.ndarray, np.ndarray | None]:
    output = model.encode(sentences)
    if probabilistic:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise ProbsentError("a probabilistic model's encode() must return a (mean, var) tuple")
        mean, var = (np.asarray(x, dtype=np.float64) for x in output)
        if mean.shape != var.shape or mean.ndim != 2 or mean.shape[0] != len(sentences):
            raise ProbsentError(f"encode() returned mean {mean.shape} and var {var.shape} for {len(sentences)} sentences")
        if np.any(var <= 0):
            raise ProbsentError("encode() returned non-positive variances")
        return mean, var
    vectors = np.asarray(output, dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(sentences):
        raise ProbsentError(f"encode() returned shape {vectors.shape} for {len(sentences)} sentences")
    return vectors, None


def gaussians(model: Encoder, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Means and log-variances of a probabilistic model's sentences.

    A model with ``encode_log_variance(sentences) -> (mean, logvar)`` supplies log-variances
    directly (no underflow for very specific sentences); otherwise they are ``log(var)`` of
    ``encode``.
    """
    encode_log = getattr(model, "encode_log_variance", None)
    if not callable(encode_log):
        mean, var = _encode(model, sentences, probabilistic=True)
        return mean, np.log(var)
    mean, logvar = (np.asarray(x, dtype=np.float64) for x in encode_log(sentences))
    if mean.shape != logvar.shape or mean.ndim != 2 or mean.shape[0] != len(sentences):
        raise ProbsentError(f"encode_log_variance() returned mean {mean.shape} and log-variance"
                            f" {logvar.shape} for {len(sentences)} sentences")
    if not np.all(np.isfinite(logvar)):
        raise ProbsentError("encode_log_variance() returned non-finite log-variances")
    return mean, logvar


def sts_similarities(model: Encoder, pairs: ds.StsPairs, probabilistic: bool) -> dict[str, np.ndarray]:
    """Similarity of every pair under each measure the model supports.

    The expected inner product is :func:`probsent.gaussian.expected_inner_product`, the
    similarity probabilistic models are trained with.
    """
    if not probabilistic:
        vectors1, _ = _encode(model, pairs.first, probabilistic)
        vectors2, _ = _encode(model, pairs.second, probabilistic)
        return {"cosine": rows_cosine(vectors1, vectors2)}
    mean1, logvar1 = gaussians(model, pairs.first)
    mean2, logvar2 = gaussians(model, pairs.second)
    eip = expected_inner_product(*(torch.from_numpy(x) for x in (mean1, logvar1, mean2, logvar2)))
    return {
        "cosine": rows_cosine(np.hstack([mean1, np.exp(logvar1)]), np.hstack([mean2, np.exp(logvar2)])),
        "cosine_mean": rows_cosine(mean1, mean2),
        "expected_inner_product": eip.numpy(),
    }


def sts_experiment(model: Encoder, data: DataLike = None) -> Sts:
    """Pearson x100 between similarities and gold scores (paper Table 8).

    Sets: STS Benchmark test, STS17 track 5, and each STS12-16 set, with the mean of each
    year, the mean over all STS12-16 sets and the mean of the five year means. "cosine" is
    the cosine of concat(mean, var) for a probabilistic model (``model.probabilistic``),
    of the vectors otherwise; probabilistic models add "cosine_mean" (means only) and
    "expected_inner_product".
    """
    data = ds.as_data_dir(data)
    probabilistic = bool(getattr(model, "probabilistic", False))
    collections: dict[str, ds.StsPairs] = {"STSB-test": ds.load_sts_benchmark(data, "test"), "STS17": ds.load_sts17(data)}
    years = {year: ds.load_senteval_sts(data, year) for year in ds.SENTEVAL_STS_SETS}
    every_set = [*collections.values(), *(p for sets in years.values() for p in sets.values())]
    _prepare(model, *(s for pairs in every_set for s in (pairs.first, pairs.second)))

    def correlations(pairs: ds.StsPairs) -> dict[str, float]:
        similarities = sts_similarities(model, pairs, probabilistic)
        return {measure: _pct(metrics.pearson(sim, pairs.scores)) for measure, sim in similarities.items()}

    whole = {key: correlations(pairs) for key, pairs in collections.items()}  # set -> measure -> r
    per_year = {year: {name: correlations(pairs) for name, pairs in sets.items()} for year, sets in years.items()}
    tables: dict[str, StsTable] = {}
    for measure in whole["STSB-test"]:
        by_year = {year: {name: rs[measure] for name, rs in sets.items()} for year, sets in per_year.items()}
        all_sets = [r for sets in by_year.values() for r in sets.values()]
        for sets in by_year.values():
            sets["mean"] = float(np.mean(list(sets.values())))
        tables[measure] = StsTable(stsb_test=whole["STSB-test"][measure], sts17=whole["STS17"][measure],
                                   sets_mean=float(np.mean(all_sets)),
                                   years_mean=float(np.mean([sets["mean"] for sets in by_year.values()])),
                                   years=by_year)
    return Sts(is_probabilistic=probabilistic, pearson=tables)
