"""Gaussian quantities against Monte Carlo and hand-computed values."""
from __future__ import annotations

import math

import torch

from probsent.gaussian import entropy, expected_inner_product, kl_to_standard_normal


def test_expected_inner_product_hand_computed() -> None:
    # 1-D: mu1 = 0, mu2 = 1, s1 = s2 = 1/2: N(0; -1, 1) = exp(-1/2) / sqrt(2 pi)
    value = expected_inner_product(torch.tensor([0.0]), torch.tensor([math.log(0.5)]),
                                   torch.tensor([1.0]), torch.tensor([math.log(0.5)]))
    assert math.isclose(float(value), -0.5 - 0.5 * math.log(2 * math.pi), rel_tol=1e-6)
    # 2-D, independent dimensions multiply: N(0; 2, 3) * N(0; 0, 1)
    value = expected_inner_product(torch.tensor([1.0, 5.0]), torch.tensor([0.0, math.log(0.25)]),
                                   torch.tensor([3.0, 5.0]), torch.tensor([math.log(2.0), math.log(0.75)]))
    expected = (-0.5 * math.log(2 * math.pi * 3) - 4 / 6) + (-0.5 * math.log(2 * math.pi))
    assert math.isclose(float(value), expected, rel_tol=1e-6)


def test_expected_inner_product_matches_monte_carlo() -> None:
    gen = torch.Generator().manual_seed(0)
    mu1, mu2 = torch.tensor([0.3, -0.5, 1.0]), torch.tensor([0.1, 0.4, 0.2])
    var1, var2 = torch.tensor([0.5, 1.5, 0.8]), torch.tensor([1.2, 0.3, 2.0])
    # integral of N(x; mu1, S1) N(x; mu2, S2) dx = E_{x ~ N(mu1, S1)} N(x; mu2, S2)
    x = mu1 + var1.sqrt() * torch.randn(2_000_000, 3, generator=gen, dtype=torch.float64)
    density = torch.exp(-0.5 * ((x - mu2) ** 2 / var2).sum(1)) / torch.sqrt((2 * math.pi * var2).prod())
    monte_carlo = math.log(float(density.mean()))
    exact = float(expected_inner_product(mu1, var1.log(), mu2, var2.log()))
    assert abs(exact - monte_carlo) < 0.01


def test_kl_hand_computed() -> None:
    # 1-D: mu = 1, var = 2: 1/2 (2 + 1 - 1 - log 2)
    kl = kl_to_standard_normal(torch.tensor([1.0]), torch.tensor([math.log(2.0)]))
    assert math.isclose(float(kl), 0.5 * (2 - math.log(2)), rel_tol=1e-6)
    assert float(kl_to_standard_normal(torch.zeros(4), torch.zeros(4))) == 0.0


def test_entropy_hand_computed() -> None:
    assert math.isclose(float(entropy(torch.zeros(1))), 0.5 * math.log(2 * math.pi * math.e), rel_tol=1e-6)
    # scaling every variance by e^2 adds 1 nat per dimension
    assert math.isclose(float(entropy(torch.full((3,), 2.0)) - entropy(torch.zeros(3))), 3.0, rel_tol=1e-6)
