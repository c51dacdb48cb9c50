"""P(specific): logistic fits on labelled news sentences, each monotone in what it reads.

SPECITELLER reports probabilities; probsent's scores are entropies or norms. A model is
calibrated (``probsent calibrate``) on the cleaned news training sentences (general/specific
labels, rows 0..2795 without the test sentences), and both fits are stored beside the model
as ``calibration.json``:

- **P(specific) for the sentence's length** (``model.probability``, the command line's
  ``--probability``): sigmoid(``percentile_slope`` x percentile + ``percentile_intercept``), a
  function of the percentile for the sentence's length (:mod:`probsent.readouts.percentiles`), so it is
  in the percentile's order for any sentences, short or long. It means: the share of news
  sentences *at that percentile for their length* that annotators called specific. A short
  precise sentence at the top of its length reads as specific (the fit's value at 100), a
  vague one at the bottom as general; it is withheld (NaN) with the percentile, for the text
  :mod:`probsent.readouts.withheld` names.
- **the news-threshold probability** (``model.news_probability``): sigmoid(``slope`` x score +
  ``intercept``), of the raw score, in the score's order: the share of *news* sentences with
  that score called specific. News sentences average 22 tokens, so it calls most short
  sentences general however precise; it is the number behind the paper's News accuracy
  (a threshold on the score), kept by that name.

Files written before the length fit have no ``percentile_slope``: their news probability
still works, and P(specific) for the length names the command that adds it. An earlier
version also fed the token count to the score's fit, which could put a long general sentence
above a short specific one; a calibration file with a ``length_slope`` other than 0 is
refused with the command that makes a new one.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from probsent.errors import InvalidValueError, ProbsentError
from probsent.files.atomic_writes import write_json
from probsent.files.untrusted import read_json_file
from probsent.model_directory import CALIBRATION, MAX_JSON_BYTES

FILE = CALIBRATION


def made_by_calibrate(part, model_dir, file: str):
    """``part`` (a model's calibration or percentile table), or the one-line error that says the
    model directory has no ``file`` and which command makes it."""
    if part is None:
        raise ProbsentError(f"{model_dir or 'this model'} has no {file}; run: probsent calibrate --model {model_dir or 'DIR'}")
    return part


def _expit(values: np.ndarray) -> np.ndarray:
    """The logistic sigmoid 1 / (1 + exp(-x)) in NumPy (no SciPy import on the scoring path:
    ``explain`` prints P(specific) too), without overflow: exp of a negative number only; NaN
    stays NaN."""
    values = np.asarray(values, dtype=np.float64)
    small = np.exp(-np.abs(values))  # in (0, 1]
    with np.errstate(invalid="ignore"):
        return np.where(values >= 0, 1.0 / (1.0 + small), small / (1.0 + small))


def logistic(slope: float, intercept: float, scores: np.ndarray) -> np.ndarray:
    """sigmoid(slope * score + intercept) for each score (no overflow for extreme scores)."""
    return _expit(slope * np.asarray(scores, dtype=np.float64) + intercept)


def fit_logistic(scores: np.ndarray, labels: np.ndarray, iterations: int = 100) -> tuple[float, float]:
    """Maximum-likelihood (slope, intercept) of P(label = 1) = sigmoid(slope * score + intercept)
    (:func:`fit_logistic_features` with one feature)."""
    coefficients, intercept = fit_logistic_features(np.asarray(scores, dtype=np.float64)[:, None]
                                                    if np.ndim(scores) == 1 else np.asarray(scores),
                                                    labels, iterations)
    return float(coefficients[0]), intercept


def fit_logistic_features(features: np.ndarray, labels: np.ndarray,
                          iterations: int = 100) -> tuple[np.ndarray, float]:
    """Maximum-likelihood (coefficients, intercept) of P(label = 1) = sigmoid(features @ w + b)
    for an (n, k) feature matrix.

    Newton's method with the exact Hessian on standardized features, with a tiny ridge so that
    separable data still gives finite, well-defined parameters. Written here rather than
    handed to ``scipy.optimize.minimize`` because, on raw scores (entropies near -60), BFGS
    stops with "precision loss" (``success=False``) although near the optimum, and on separable
    data it returns wherever it stopped; Newton converges in a few steps. tests/test_calibration.py
    checks the fit against that generic optimizer's likelihood and on separable data.
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if x.ndim != 2 or y.shape != (len(x),) or len(x) < 2:
        raise ValueError("need an (n, k) feature matrix and n labels, n >= 2")
    center = x.mean(axis=0)
    scale = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    design = np.hstack([(x - center) / scale, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    ridge = 1e-6 * len(x)
    for _ in range(iterations):
        p = _expit(design @ weights)
        gradient = design.T @ (y - p) - ridge * weights
        hessian = (design * (p * (1 - p))[:, None]).T @ design + ridge * np.eye(design.shape[1])
        step = np.linalg.solve(hessian, gradient)
        weights += step
        if np.abs(step).max() < 1e-10:
            break
    coefficients = weights[:-1] / scale  # back to the raw features' units
    return coefficients, float(weights[-1] - coefficients @ center)


@dataclass
class Calibration:
    """A fitted logistic map from specificity score to P(specific)."""

    slope: float  # the news-threshold probability: sigmoid(slope * score + intercept)
    intercept: float
    fitted_on: str
    sentences: int
    accuracy_at_half: float  # of the news-threshold probability, on the sentences it was fitted on
    percentile_slope: float | None = None  # P(specific) for the length: sigmoid(. * percentile + .)
    percentile_intercept: float | None = None  # (None in files written before the length fit)

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """P(specific) for each score (NaN for a NaN score), in the scores' order; never NaN for
        a number, however extreme the fit's finite values (see :meth:`_exact_logit`)."""
        scores = np.asarray(scores, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            product = self.slope * scores
            logit = np.array(product + self.intercept)
            inexact = ~np.isnan(scores) & (~np.isfinite(logit)
                                           | (np.maximum(np.abs(product), abs(self.intercept)) > 2.0**52 * np.abs(logit)))
        if inexact.any():
            logit[inexact] = [self._exact_logit(score) for score in scores[inexact]]
        return _expit(logit)

    def for_length(self, percentiles: np.ndarray) -> np.ndarray:
        """P(specific) for the sentence's length of each percentile (0-100; NaN stays NaN), in
        the percentiles' order; a one-line error for a file without the length fit."""
        if self.percentile_slope is None or self.percentile_intercept is None:
            raise ProbsentError("this calibration has no fit for the sentence's length (written by an earlier "
                                "probsent); run: probsent calibrate --model DIR (model.news_probability() "
                                "gives the news-threshold probability meanwhile)")
        return logistic(self.percentile_slope, self.percentile_intercept, percentiles)

    def _exact_logit(self, score: float) -> float:
        """slope * score + intercept in exact arithmetic, where float64 overflows (a slope of
        1e308) or cancels (1e308 - 1e308 hides the rest), clamped to +-1e300, where the sigmoid
        is 0 or 1 long before."""
        exact = Fraction(self.slope) * Fraction(score) + Fraction(self.intercept)
        return float(max(min(exact, Fraction(10) ** 300), -Fraction(10) ** 300))

    def save(self, model_dir: str | os.PathLike[str]) -> None:
        """Write ``calibration.json`` into the model directory, atomically."""
        write_json(Path(model_dir) / FILE, {k: v for k, v in asdict(self).items() if v is not None})

    @classmethod
    def load(cls, model_dir: str | os.PathLike[str]) -> "Calibration | None":
        """The model's calibration, or None if it has none."""
        path = Path(model_dir) / FILE
        if not os.path.lexists(path):
            return None
        fields = read_json_file(path, MAX_JSON_BYTES, "calibration")  # a regular file, bounded; one-line errors
        problem = _calibration_problem(fields)
        if problem:
            raise InvalidValueError(f"{path}: damaged calibration ({problem})")
        if fields.pop("length_slope", 0.0) != 0.0:
            raise InvalidValueError(f"{path}: fitted with sentence length by an earlier probsent, which can order "
                                    f"probabilities against scores; run: probsent calibrate --model {path.parent}")
        return cls(**fields)


_FIELDS = {"slope": float, "intercept": float, "fitted_on": str, "sentences": int, "accuracy_at_half": float,
           "length_slope": float, "percentile_slope": float, "percentile_intercept": float}
# length_slope: only in files of the earlier length-aware fit (refused unless 0); the percentile
# fit: absent from files written before it
_OPTIONAL = {"length_slope", "percentile_slope", "percentile_intercept"}


def _calibration_problem(fields: object) -> str | None:
    """What is wrong with a calibration file's content, or None: every field present (but the
    optional ones), of its type, and every number finite (a NaN slope would make every
    probability NaN)."""
    if not isinstance(fields, dict):
        return f"a JSON object is expected, not {type(fields).__name__}"
    missing = [name for name in _FIELDS if name not in fields and name not in _OPTIONAL]
    unknown = [name for name in fields if name not in _FIELDS]
    if missing or unknown:
        return f"missing field {missing[0]!r}" if missing else f"unknown field {unknown[0]!r}"
    if ("percentile_slope" in fields) != ("percentile_intercept" in fields):
        return "percentile_slope and percentile_intercept come together"
    for name, kind in _FIELDS.items():
        if name not in fields:
            continue
        value = fields[name]
        numeric = kind in (int, float) and not isinstance(value, bool)
        if kind is float and not (numeric and isinstance(value, (int, float))):
            return f"{name} must be a number, not {json.dumps(value)}"
        if kind is int and not (numeric and isinstance(value, int)):
            return f"{name} must be a whole number, not {json.dumps(value)}"
        if kind is str and not isinstance(value, str):
            return f"{name} must be a string, not {json.dumps(value)}"
        if kind is float and not math.isfinite(value):
            return f"{name} must be finite, not {value}"
    return None
