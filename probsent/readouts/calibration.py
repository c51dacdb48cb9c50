"""P(specific): the chance that a news annotator calls the sentence specific.

A model is calibrated (``probsent calibrate``) on the cleaned news training sentences (every
row of ``specificity/news-train`` but the 939 equal to news test sentences; general/specific
labels): P(specific) = sigmoid(w . features + b), fitted by maximum likelihood, with the
features reproduction/docs/EXPERIMENTS.md's pre-registered rule chose from the model's score and the
sentence's token count (:data:`FEATURES` names every feature a file may use). The fit is stored
beside the model as ``calibration.json``::

    {"features": ["score", "log_tokens"], "coefficients": [..., ...], "intercept": ...,
     "fitted_on": "...", "sentences": 3403}

It is a probability of the *label*, so it follows what news annotators reward, length among it;
the length-relative reading is the percentile (:mod:`probsent.readouts.percentiles`). Both are
withheld (NaN) together, for the text :mod:`probsent.readouts.withheld` names.

Files written by earlier versions have no ``features`` and are read as that version read them:
one with ``percentile_slope``/``percentile_intercept`` gives P = sigmoid(percentile_slope x
percentile + percentile_intercept) (feature ``percentile``); one with only ``slope``/``intercept``
gives sigmoid(slope x score + intercept) (its news-threshold probability, the only one it has).
A file of the earliest length-aware fit (``length_slope`` other than 0) is refused with the
command that makes a new one.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
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


def _log_tokens(scores: np.ndarray, counts: np.ndarray, percentiles: np.ndarray | None) -> np.ndarray:
    return np.log(np.maximum(counts, 1))


def _percentile(scores: np.ndarray, counts: np.ndarray, percentiles: np.ndarray | None) -> np.ndarray:
    if percentiles is None:
        raise ValueError("this calibration reads the percentile; pass percentiles")
    return percentiles


FEATURES = {  # name -> its values for (scores, token counts, percentiles)
    "score": lambda scores, counts, percentiles: scores,
    "log_tokens": _log_tokens,
    "tokens": lambda scores, counts, percentiles: counts.astype(np.float64),
    "score_per_token": lambda scores, counts, percentiles: scores / np.maximum(counts, 1),
    "score_x_log_tokens": lambda scores, counts, percentiles: scores * _log_tokens(scores, counts, percentiles),
    "percentile": _percentile,  # only in files of an earlier probsent (the length-relative fit)
}


def feature_matrix(names, scores: np.ndarray, counts: np.ndarray,
                   percentiles: np.ndarray | None = None) -> np.ndarray:
    """The (n, len(names)) float64 matrix of the named :data:`FEATURES` of sentences with these
    scores and token counts (and percentiles, for the ``percentile`` feature)."""
    scores = np.asarray(scores, dtype=np.float64)
    counts = np.asarray(counts)
    percentiles = None if percentiles is None else np.asarray(percentiles, dtype=np.float64)
    return np.stack([FEATURES[name](scores, counts, percentiles) for name in names], axis=1) \
        if names else np.zeros((len(scores), 0))


@dataclass(frozen=True)
class Calibration:
    """P(specific) = sigmoid(coefficients . features + intercept), the features named by
    ``features`` (keys of :data:`FEATURES`), fitted on ``sentences`` labelled sentences."""

    features: tuple[str, ...]
    coefficients: tuple[float, ...]
    intercept: float
    fitted_on: str
    sentences: int

    def probability(self, scores: np.ndarray, counts: np.ndarray,
                    percentiles: np.ndarray | None = None) -> np.ndarray:
        """P(specific) for sentences with these scores and token counts (percentiles only for a
        file of an earlier probsent that reads them): float64 in [0, 1], NaN where the score is
        NaN or the count is 0 (and, for such a file, where the percentile is NaN). Never NaN for a
        number, however extreme the fit's finite values (see :meth:`_exact_logit`)."""
        scores = np.asarray(scores, dtype=np.float64)
        counts = np.asarray(counts)
        x = feature_matrix(self.features, scores, counts, percentiles)
        weights = np.asarray(self.coefficients, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            terms = x * weights
            logit = np.array(terms.sum(axis=1) + self.intercept)
            largest = np.maximum(np.abs(terms).max(axis=1, initial=0.0), abs(self.intercept))
            readable = ~np.isnan(x).any(axis=1)
            inexact = readable & (~np.isfinite(logit) | (largest > 2.0**52 * np.abs(logit)))
        if inexact.any():
            logit[inexact] = [self._exact_logit(row) for row in x[inexact]]
        out = _expit(logit)
        out[~readable | (counts <= 0)] = np.nan
        return out

    def _exact_logit(self, row: np.ndarray) -> float:
        """w . x + b in exact arithmetic, where float64 overflows (a coefficient of 1e308) or
        cancels (1e308 - 1e308 hides the rest), clamped to +-1e300, where the sigmoid is 0 or 1
        long before."""
        exact = sum((Fraction(w) * Fraction(v) for w, v in zip(self.coefficients, row)), Fraction(self.intercept))
        return float(max(min(exact, Fraction(10) ** 300), -Fraction(10) ** 300))

    def fields(self) -> dict:
        """The content of ``calibration.json``."""
        return {"features": list(self.features), "coefficients": list(self.coefficients),
                "intercept": self.intercept, "fitted_on": self.fitted_on, "sentences": self.sentences}

    def save(self, model_dir: str | os.PathLike[str]) -> None:
        """Write ``calibration.json`` into the model directory, atomically (the same fit gives the
        same bytes: keys sorted, floats as Python's shortest repr)."""
        write_json(Path(model_dir) / FILE, self.fields())

    @classmethod
    def load(cls, model_dir: str | os.PathLike[str]) -> "Calibration | None":
        """The model's calibration, or None if it has none; a file of an earlier probsent is read
        as that version read it (the module's docstring)."""
        path = Path(model_dir) / FILE
        if not os.path.lexists(path):
            return None
        fields = read_json_file(path, MAX_JSON_BYTES, "calibration")  # a regular file, bounded; one-line errors
        if isinstance(fields, dict) and "features" in fields:
            problem = _calibration_problem(fields)
            if problem:
                raise InvalidValueError(f"{path}: damaged calibration ({problem})")
            return cls(tuple(fields["features"]), tuple(float(c) for c in fields["coefficients"]),
                       float(fields["intercept"]), fields["fitted_on"], fields["sentences"])
        return _earlier_calibration(fields, path)


_FIELDS = {"features": list, "coefficients": list, "intercept": float, "fitted_on": str, "sentences": int}
_EARLIER_FIELDS = {"slope": float, "intercept": float, "fitted_on": str, "sentences": int,
                   "accuracy_at_half": float, "length_slope": float, "percentile_slope": float,
                   "percentile_intercept": float}
# length_slope: only in files of the earliest length-aware fit (refused unless 0); the percentile
# fit: absent from files written before it
_EARLIER_OPTIONAL = {"length_slope", "percentile_slope", "percentile_intercept"}


def _earlier_calibration(fields: object, path: Path) -> Calibration:
    """A calibration file of an earlier probsent (no ``features``), read as it read it: its
    length-relative P where it has one, else its news-threshold probability of the score."""
    problem = _field_problem(fields, _EARLIER_FIELDS, _EARLIER_OPTIONAL)
    if problem is None and ("percentile_slope" in fields) != ("percentile_intercept" in fields):
        problem = "percentile_slope and percentile_intercept come together"
    if problem:
        raise InvalidValueError(f"{path}: damaged calibration ({problem})")
    if fields.get("length_slope", 0.0) != 0.0:
        raise InvalidValueError(f"{path}: fitted with sentence length by an earlier probsent, which can order "
                                f"probabilities against scores; run: probsent calibrate --model {path.parent}")
    if "percentile_slope" in fields:
        return Calibration(("percentile",), (float(fields["percentile_slope"]),),
                           float(fields["percentile_intercept"]), fields["fitted_on"], fields["sentences"])
    return Calibration(("score",), (float(fields["slope"]),), float(fields["intercept"]), fields["fitted_on"],
                       fields["sentences"])


def _calibration_problem(fields: dict) -> str | None:
    """What is wrong with a calibration file's content, or None: every field present and of its
    type, known features named once each, one finite coefficient per feature."""
    problem = _field_problem(fields, _FIELDS, set())
    if problem:
        return problem
    features, coefficients = fields["features"], fields["coefficients"]
    unknown = [name for name in features if not isinstance(name, str) or name not in FEATURES]
    if unknown:
        return f"unknown feature {json.dumps(unknown[0])} (known: {', '.join(FEATURES)})"
    if not features or len(set(features)) != len(features):
        return "features must name at least one feature, each once"
    if len(coefficients) != len(features):
        return f"{len(coefficients)} coefficients for {len(features)} features"
    for value in coefficients:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"coefficients must be finite numbers, not {json.dumps(value)}"
    return None


def _field_problem(fields: object, kinds: dict, optional: set) -> str | None:
    """What is wrong with a JSON object's fields against ``kinds`` (name -> type), or None:
    every field present (but the ``optional`` ones), none unknown, each of its type, every
    number finite (a NaN slope would make every probability NaN)."""
    if not isinstance(fields, dict):
        return f"a JSON object is expected, not {type(fields).__name__}"
    missing = [name for name in kinds if name not in fields and name not in optional]
    unknown = [name for name in fields if name not in kinds]
    if missing or unknown:
        return f"missing field {missing[0]!r}" if missing else f"unknown field {unknown[0]!r}"
    for name, kind in kinds.items():
        if name not in fields:
            continue
        value = fields[name]
        numeric = kind in (int, float) and not isinstance(value, bool)
        if kind is float and not (numeric and isinstance(value, (int, float))):
            return f"{name} must be a number, not {json.dumps(value)}"
        if kind is int and not (numeric and isinstance(value, int)):
            return f"{name} must be a whole number, not {json.dumps(value)}"
        if kind in (str, list) and not isinstance(value, kind):
            return f"{name} must be a {'string' if kind is str else 'list'}, not {json.dumps(value)}"
        if kind is float and not math.isfinite(value):
            return f"{name} must be finite, not {value}"
    return None
