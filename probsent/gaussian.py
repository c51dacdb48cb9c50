"""Closed-form quantities of diagonal Gaussians, all taking log-variances for stability.

Every function reduces over the last (feature) dimension and broadcasts over the others.
"""
from __future__ import annotations

import torch
from torch import Tensor

from probsent.gaussian_constants import LOG_2PI, VARIANCE_FLOOR_LOG


def entropy(logvar: Tensor) -> Tensor:
    """Differential entropy of N(mu, diag(exp(logvar))): 1/2 sum_d log(2 pi e sigma_d^2)."""
    return 0.5 * (logvar + LOG_2PI + 1.0).sum(-1)


def kl_to_standard_normal(mean: Tensor, logvar: Tensor) -> Tensor:
    """KL(N(mean, diag(exp(logvar))) || N(0, I)) = 1/2 sum_d (sigma^2 + mu^2 - 1 - log sigma^2)."""
    return 0.5 * (logvar.exp() + mean.square() - 1.0 - logvar).sum(-1)


def expected_inner_product(mean1: Tensor, logvar1: Tensor, mean2: Tensor, logvar2: Tensor,
                           log_abs_diff: Tensor | None = None) -> Tensor:
    """log of the integral of N(x; mu1, S1) N(x; mu2, S2) dx = log N(0; mu1 - mu2, S1 + S2).

    -1/2 sum_d [log 2 pi + log(s1_d + s2_d) + (mu1_d - mu2_d)^2 / (s1_d + s2_d)]

    By default (training) s1 + s2 is floored at e^-80, so float32 cannot overflow to inf.
    Given ``log_abs_diff`` = log|mu1 - mu2| (inference, without gradients; see
    :func:`log_abs_difference`), the quadratic term is exp(2 log|mu1 - mu2| - log(s1 + s2)),
    with no floor: it overflows to inf only where the true value does.
    """
    log_sum_var = torch.logaddexp(logvar1, logvar2)  # log(s1 + s2) without overflow
    if log_abs_diff is not None:
        quad = torch.exp(2.0 * log_abs_diff - log_sum_var)
    else:
        quad = (mean1 - mean2).square() * torch.exp(-log_sum_var.clamp_min(VARIANCE_FLOOR_LOG))
    return -0.5 * (LOG_2PI + log_sum_var + quad).sum(-1)


def log_abs_difference(sign1: Tensor, log_abs1: Tensor, sign2: Tensor, log_abs2: Tensor) -> Tensor:
    """log|mu1 - mu2| from each mu's sign and log|mu| (float64), whatever their magnitude;
    -inf where the two are equal."""
    top = torch.maximum(log_abs1, log_abs2)
    top = torch.where(top.isinf(), 0.0, top)  # both zero
    return (sign1 * (log_abs1 - top).exp() - sign2 * (log_abs2 - top).exp()).abs().log() + top
