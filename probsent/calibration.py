"""P(specific | score): a logistic fit of the specificity score on labelled sentences.

SPECITELLER reports probabilities; probsent's scores are entropies or norms. A model is
calibrated by fitting P(specific) = sigmoid(slope * score + intercept) by maximum likelihood
on the news training sentences (general/specific labels), and the fit is stored beside the
model as ``calibration.json``.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from probsent.errors import ProbsentError
from probsent.io import write_json

FILE = "calibration.json"


def logistic(slope: float, intercept: float, scores: np.ndarray) -> np.ndarray:
    """sigmoid(slope * score + intercept) for each score (no overflow for extreme scores)."""
    from scipy.special import expit  # here: scipy's import is the probability's cost alone

    return expit(slope * np.asarray(scores, dtype=np.float64) + intercept)


def fit_logistic(scores: np.ndarray, labels: np.ndarray, iterations: int = 100) -> tuple[float, float]:
    """Maximum-likelihood (slope, intercept) of P(label = 1) = sigmoid(slope * score + intercept).

    Newton's method with the exact Hessian on standardized scores, with a tiny ridge so that
    separable data still gives finite, well-defined parameters. Written here rather than
    handed to ``scipy.optimize.minimize`` because, on raw scores (entropies near -60), BFGS
    stops with "precision loss" (``success=False``) although near the optimum, and on separable
    data it returns wherever it stopped; Newton converges in a few steps. tests/test_calibration.py
    checks the fit against that generic optimizer's likelihood and on separable data.
    """
    from scipy.special import expit

    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError("need two equally long 1-D arrays with at least two entries")
    center, scale = x.mean(), x.std() or 1.0
    design = np.stack([(x - center) / scale, np.ones_like(x)], 1)
    weights = np.zeros(2)
    ridge = 1e-6 * len(x)
    for _ in range(iterations):
        p = expit(design @ weights)
        gradient = design.T @ (y - p) - ridge * weights
        hessian = (design * (p * (1 - p))[:, None]).T @ design + ridge * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        weights += step
        if np.abs(step).max() < 1e-10:
            break
    slope = weights[0] / scale
    return float(slope), float(weights[1] - slope * center)


@dataclass
class Calibration:
    """A fitted logistic map from specificity score to P(specific)."""

    slope: float
    intercept: float
    fitted_on: str
    sentences: int
    accuracy_at_half: float  # on the sentences it was fitted on

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """P(specific) for each score."""
        return logistic(self.slope, self.intercept, scores)

    def save(self, model_dir: str | os.PathLike[str]) -> None:
        """Write ``calibration.json`` into the model directory, atomically."""
        write_json(Path(model_dir) / FILE, asdict(self))

    @classmethod
    def load(cls, model_dir: str | os.PathLike[str]) -> "Calibration | None":
        """The model's calibration, or None if it has none."""
        path = Path(model_dir) / FILE
        if not path.exists():
            return None
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError) as exc:
            raise ProbsentError(f"{path}: damaged calibration ({exc})") from None
