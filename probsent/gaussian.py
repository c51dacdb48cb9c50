"""Closed-form quantities of diagonal Gaussians, all taking log-variances for stability.

Every function reduces over the last (feature) dimension and broadcasts over the others.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

LOG_2PI = math.log(2.0 * math.pi)


def entropy(logvar: Tensor) -> Tensor:
    """Differential entropy of N(mu, diag(exp(logvar))): 1/2 sum_d log(2 pi e sigma_d^2)."""
    return 0.5 * (logvar + LOG_2PI + 1.0).sum(-1)


def kl_to_standard_normal(mean: Tensor, logvar: Tensor) -> Tensor:
    """KL(N(mean, diag(exp(logvar))) || N(0, I)) = 1/2 sum_d (sigma^2 + mu^2 - 1 - log sigma^2)."""
    return 0.5 * (logvar.exp() + mean.square() - 1.0 - logvar).sum(-1)


def expected_inner_product(mean1: Tensor, logvar1: Tensor, mean2: Tensor, logvar2: Tensor,
                           exact: bool = False) -> Tensor:
    """log of the integral of N(x; mu1, S1) N(x; mu2, S2) dx = log N(0; mu1 - mu2, S1 + S2).

    -1/2 sum_d [log 2 pi + log(s1_d + s2_d) + (mu1_d - mu2_d)^2 / (s1_d + s2_d)]

    By default (training) s1 + s2 is floored at e^-80, so float32 cannot overflow to inf.
    ``exact`` (inference, without gradients): no floor, the quadratic term computed as
    exp(2 log|mu1 - mu2| - log(s1 + s2)); it overflows to inf only where the true value does.
    """
    log_sum_var = torch.logaddexp(logvar1, logvar2)  # log(s1 + s2) without overflow
    if exact:
        quad = torch.exp(2.0 * (mean1 - mean2).abs().log() - log_sum_var)
    else:
        quad = (mean1 - mean2).square() * torch.exp(-log_sum_var.clamp_min(-80.0))
    return -0.5 * (LOG_2PI + log_sum_var + quad).sum(-1)
