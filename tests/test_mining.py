"""Mined negatives: never the sentence itself or its partner, and the brute-force argmax."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from probsent.models.base import Encoding
from probsent.training.mining import mine_negatives, partners_of_stacked_pairs


def brute_force(mean: np.ndarray, var: np.ndarray | None, partner: np.ndarray) -> np.ndarray:
    """Argmax over every other sentence j, one sentence i at a time, with the similarity written out
    here (the cosine, or log N(0; mu_i - mu_j, Sigma_i + Sigma_j) summed over dimensions)."""
    n = len(mean)
    best = np.empty(n, dtype=int)
    norms = np.linalg.norm(mean, axis=1)
    for i in range(n):
        if var is None:
            scores = mean @ mean[i] / (norms * norms[i])
        else:
            t = var[i] + var  # row j: Sigma_i + Sigma_j
            scores = -0.5 * np.sum(np.log(2 * np.pi * t) + (mean[i] - mean) ** 2 / t, axis=1)
        scores[[i, partner[i]]] = -math.inf
        best[i] = int(np.argmax(scores))
    return best


@pytest.mark.parametrize("probabilistic", [False, True])
def test_mining_is_brute_force_argmax(probabilistic: bool) -> None:
    gen = torch.Generator().manual_seed(4)
    pairs = 60
    mean = torch.randn(2 * pairs, 5, generator=gen, dtype=torch.float64)
    mean[pairs:] = mean[:pairs] + 0.1 * torch.randn(pairs, 5, generator=gen, dtype=torch.float64)
    logvar = torch.randn(2 * pairs, 5, generator=gen, dtype=torch.float64) if probabilistic else None
    partner = partners_of_stacked_pairs(pairs)
    got = mine_negatives(Encoding(mean, logvar), partner).numpy()
    expected = brute_force(mean.numpy(), None if logvar is None else logvar.exp().numpy(), partner.numpy())
    assert np.array_equal(got, expected)
    rows = np.arange(2 * pairs)
    assert not np.any(got == rows)
    assert not np.any(got == partner.numpy())


def test_mining_excludes_identical_partner() -> None:
    # the partner is an exact copy (the most similar possible): it must still be skipped
    mean = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.7, 0.7]])
    logvar = torch.zeros_like(mean)
    partner = partners_of_stacked_pairs(3)
    for enc in (Encoding(mean), Encoding(mean, logvar)):
        got = mine_negatives(enc, partner)
        assert not torch.any(got == torch.arange(6)) and not torch.any(got == partner)


def gaussians(count: int, dim: int, seed: int, dtype: torch.dtype = torch.float64,
              spread: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    pairs = count // 2
    mean = torch.randn(count, dim, generator=gen, dtype=dtype)
    mean[pairs:] = mean[:pairs] + 0.3 * torch.randn(pairs, dim, generator=gen, dtype=dtype)
    logvar = spread * torch.randn(count, dim, generator=gen, dtype=dtype)
    return mean, logvar


@pytest.mark.parametrize("seed,spread", [(0, 1.0), (1, 0.1), (2, 4.0), (3, 12.0)])
def test_mining_of_spread_and_extreme_gaussians_is_brute_force_argmax(seed: int, spread: float) -> None:
    pairs = 90
    mean, logvar = gaussians(2 * pairs, 6, seed, spread=spread)
    if seed == 3:  # extreme variances: beyond the floor e^-80, and huge
        logvar[:5, :2] = -150.0
        logvar[5:10, 2:] = 60.0
        mean[10:15] *= 1e4
    partner = partners_of_stacked_pairs(pairs)
    got = mine_negatives(Encoding(mean, logvar), partner).numpy()
    expected = brute_force(mean.numpy(), logvar.clamp_min(-80).exp().numpy(), partner.numpy())
    assert np.array_equal(got, expected)
