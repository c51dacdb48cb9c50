"""Mined negatives: never the sentence itself or its partner, and the brute-force argmax."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from probsent.models.base import Encoding
from probsent.training.mining import mine_negatives, partners_of_stacked_pairs


def brute_force(mean: np.ndarray, var: np.ndarray | None, partner: np.ndarray) -> np.ndarray:
    """Argmax by a double loop, with the similarity written out here."""
    n = len(mean)
    best = np.empty(n, dtype=int)
    for i in range(n):
        scores = []
        for j in range(n):
            if j == i or j == partner[i]:
                scores.append(-math.inf)
            elif var is None:
                scores.append(mean[i] @ mean[j] / (np.linalg.norm(mean[i]) * np.linalg.norm(mean[j])))
            else:
                t = var[i] + var[j]
                scores.append(-0.5 * np.sum(np.log(2 * np.pi * t) + (mean[i] - mean[j]) ** 2 / t))
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


# -- bound and prune (large mega-batches) ------------------------------------------------

from probsent.training.mining import (_expected_inner_product_block, _pair_similarity,  # noqa: E402
                                      _upper_bounds)


def gaussians(count: int, dim: int, seed: int, dtype: torch.dtype = torch.float64,
               spread: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    pairs = count // 2
    mean = torch.randn(count, dim, generator=gen, dtype=dtype)
    mean[pairs:] = mean[:pairs] + 0.3 * torch.randn(pairs, dim, generator=gen, dtype=dtype)
    logvar = spread * torch.randn(count, dim, generator=gen, dtype=dtype)
    return mean, logvar


@pytest.mark.parametrize("seed,spread", [(0, 1.0), (1, 0.1), (2, 4.0), (3, 12.0)])
def test_pruned_mining_is_brute_force_argmax(seed: int, spread: float) -> None:
    pairs = 90
    mean, logvar = gaussians(2 * pairs, 6, seed, spread=spread)
    if seed == 3:  # extreme variances: beyond the floor e^-80, and huge
        logvar[:5, :2] = -150.0
        logvar[5:10, 2:] = 60.0
        mean[10:15] *= 1e4
    partner = partners_of_stacked_pairs(pairs)
    got = mine_negatives(Encoding(mean, logvar), partner, prune=True).numpy()
    expected = brute_force(mean.numpy(), logvar.clamp_min(-80).exp().numpy(), partner.numpy())
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pruned_mining_equals_full_computation_float32_ties(dtype: torch.dtype) -> None:
    # float32 near-ties and exact ties (duplicated sentences): the pruned search computes the
    # same values to the last bit, so it picks what the full computation picks
    pairs = 400
    mean, logvar = gaussians(2 * pairs, 50, 5, dtype=dtype, spread=0.3)
    mean, logvar = 0.05 * mean, logvar  # sentences all alike, as with an untrained model
    mean[100:110], logvar[100:110] = mean[0], logvar[0]  # exact ties: lowest index wins
    mean[500:505], logvar[500:505] = mean[3], logvar[3]
    partner = partners_of_stacked_pairs(pairs)
    encoded = Encoding(mean, logvar)
    assert torch.equal(mine_negatives(encoded, partner, prune=True), mine_negatives(encoded, partner, prune=False))
    assert mine_negatives(encoded, partner).equal(mine_negatives(encoded, partner, prune=False))  # default: pruned


def test_pair_similarity_is_the_block_value_to_the_last_bit() -> None:
    mean, logvar = gaussians(300, 50, 6, dtype=torch.float32)
    block, _ = _expected_inner_product_block(Encoding(mean, logvar))
    full = block(torch.arange(0, 8), 0)
    rows = torch.arange(8).repeat_interleave(300)
    cols = torch.arange(300).repeat(8)
    var = logvar.clamp_min(-80).exp()
    assert torch.equal(_pair_similarity(mean, var, rows, cols).view(8, 300), full)
    assert torch.equal(_pair_similarity(mean, var, cols, rows).view(8, 300), full)  # symmetric


@pytest.mark.parametrize("dtype,spread", [(torch.float32, 1.0), (torch.float32, 3.0), (torch.float64, 1.0),
                                          (torch.float64, 20.0)])
def test_upper_bounds_hold_for_every_pair(dtype: torch.dtype, spread: float) -> None:
    count, dim = 240, 12
    mean, logvar = gaussians(count, dim, 7, dtype=dtype, spread=spread)
    logvar = logvar.clamp_min(-80)
    var = logvar.exp()
    sizes = [1, 60, 80, 99]  # any grouping is valid, a single column included
    bounds = _upper_bounds(mean, logvar, var, sizes)  # U[j, i] >= d(i, j)
    rows = torch.arange(count).repeat_interleave(count)
    cols = torch.arange(count).repeat(count)
    exact = _pair_similarity(mean, var, rows, cols).view(count, count)  # exact[i, j]
    assert torch.all(bounds.T >= exact)
    if spread <= 1.0:  # and they are not vacuous: within a few nats of d for most pairs
        assert float((bounds.T - exact).median()) < 10.0


@pytest.mark.parametrize("wide_rows", [3, 80])
def test_pruned_mining_with_wide_sentences_float32(wide_rows: int) -> None:
    # a few sentences with huge variances or means are compared with everyone exactly (the
    # rest keeps float32 bounds); many of them make every bound float64: the same argmax
    pairs = 300
    mean, logvar = gaussians(2 * pairs, 20, 8, dtype=torch.float32, spread=0.5)
    logvar[:wide_rows, 3] = 25.0
    logvar[pairs + 1, 4] = -30.0  # the partner of a wide sentence is wide too
    mean[10:10 + wide_rows // 3 + 1] *= 5e3
    partner = partners_of_stacked_pairs(pairs)
    encoded = Encoding(mean, logvar)
    assert torch.equal(mine_negatives(encoded, partner, prune=True), mine_negatives(encoded, partner, prune=False))
