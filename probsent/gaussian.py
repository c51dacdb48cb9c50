"""The formulas of diagonal Gaussians, each written once for NumPy arrays and torch tensors alike.

Every function takes log-variances, reduces over the last (feature) dimension, broadcasts over
the others and computes with the library of its first argument: NumPy arrays give NumPy
arrays (inference, float64, no torch), torch tensors give tensors (training, with autograd).
This module imports no torch. The compiled kernels that compute the same quantities in their
own order (``gaussian_matrix`` and the training engine's) import their constants from here;
tests/test_one_place_per_formula.py finds every definition and holds each kernel to these.
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

# public: a Gaussian's entropy, its KL to N(0, I) and two Gaussians' expected inner product, for the
# (mean, log-variance) that ``SentenceModel.encode(..., log_variance=True)`` gives and for model plug-ins
__all__ = ["entropy", "kl_to_standard_normal", "expected_inner_product"]

# log(2 pi): in the entropy 1/2 sum_d (log 2 pi + 1 + log sigma_d^2) and the expected inner
# product -1/2 sum_d [log 2 pi + log(s1_d + s2_d) + (mu1_d - mu2_d)^2 / (s1_d + s2_d)]
LOG_2PI = math.log(2.0 * math.pi)
# training's floor on the log of a variance sum in the expected inner product: s1 + s2 >= e^-80,
# so float32 cannot overflow to inf (inference takes no floor)
VARIANCE_FLOOR_LOG = -80.0
# WLO's floor on |A| in log|A|: a scale below it adds log(1e-30) per dimension (and no gradient)
SCALE_FLOOR = 1e-30

Array = Any  # a NumPy array or a torch tensor


def _library(array: Array) -> Any:
    """torch for a torch tensor, else numpy (torch is never imported here: a tensor means the
    caller already did)."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(array, torch.Tensor) else np


def entropy(logvar: Array) -> Array:
    """Differential entropy of N(mu, diag(exp(logvar))): 1/2 sum_d log(2 pi e sigma_d^2)."""
    return 0.5 * (LOG_2PI + 1.0 + logvar).sum(-1)


def log_abs_scale(scale: Array) -> Array:
    """log max(|A|, 1e-30) elementwise: what a diagonal scale A adds to the log-standard-deviation
    (so sum_d of it is what it adds to the entropy: WLO's word term)."""
    xp = _library(scale)
    return xp.log(xp.clip(xp.abs(scale), SCALE_FLOOR, None))


def kl_to_standard_normal(mean: Array, logvar: Array) -> Array:
    """KL(N(mean, diag(exp(logvar))) || N(0, I)) = 1/2 sum_d (sigma^2 + mu^2 - 1 - log sigma^2)."""
    xp = _library(logvar)
    return 0.5 * (xp.exp(logvar) + xp.square(mean) - 1.0 - logvar).sum(-1)


def expected_inner_product(mean1: Array, logvar1: Array, mean2: Array, logvar2: Array,
                           log_abs_diff: Array | None = None) -> Array:
    """log of the integral of N(x; mu1, S1) N(x; mu2, S2) dx = log N(0; mu1 - mu2, S1 + S2).

    -1/2 sum_d [log 2 pi + log(s1_d + s2_d) + (mu1_d - mu2_d)^2 / (s1_d + s2_d)]

    By default (training) s1 + s2 is floored at e^-80 in the quadratic term, so float32 cannot
    overflow to inf. Given ``log_abs_diff`` = log|mu1 - mu2| (inference; see
    :func:`log_abs_difference`), the quadratic term is exp(2 log|mu1 - mu2| - log(s1 + s2)),
    with no floor: it overflows to inf only where the true value does. The means are then
    not used (pass None).
    """
    xp = _library(logvar1)
    log_sum_var = xp.logaddexp(logvar1, logvar2)  # log(s1 + s2) without overflow
    if log_abs_diff is not None:
        quad = xp.exp(2.0 * log_abs_diff - log_sum_var)
    else:
        quad = xp.square(mean1 - mean2) * xp.exp(-xp.clip(log_sum_var, VARIANCE_FLOOR_LOG, None))
    return -0.5 * (LOG_2PI + log_sum_var + quad).sum(-1)


def log_abs_difference(sign1: Array, log_abs1: Array, sign2: Array, log_abs2: Array) -> Array:
    """log|mu1 - mu2| from each mu's sign and log|mu| (float64), whatever their magnitude;
    -inf where the two are equal."""
    xp = _library(log_abs1)
    top = xp.maximum(log_abs1, log_abs2)
    top = xp.where(xp.isinf(top), 0.0, top)  # both zero
    return xp.log(xp.abs(sign1 * xp.exp(log_abs1 - top) - sign2 * xp.exp(log_abs2 - top))) + top
