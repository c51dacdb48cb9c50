"""The compiled Gaussian mining kernel: the argmax of a float64 brute force written out here,
the torch reference's choice, lowest index on exact ties, and no dependence on threads.

Near-ties. The kernel computes d(i, j) in float32, so where two candidates' exact values
differ by less than its rounding it may pick either. Its error on one value is bounded by
about dim * eps32 * S, S = 1/2 sum_d (|log 2 pi t_d| + u_d^2 / t_d) the size of the terms
(sequential float32 products and sums over dim terms; measured errors stay ~10x below the
bound used here), i.e. ~1e-5 relative or ~1e-4 nats on realistic inputs. A choice that differs from
the float64 argmax is accepted only when the two exact values are within twice that bound
(both values may be off by it), and such near-ties must be rare.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest
import torch

from probsent.models.base import Encoding
from probsent.training.fast import mining_kernels as fast_mining
from probsent.training.fast.mining_kernels import mine_gaussian_negatives, mine_gaussian_negatives_with_values
from probsent.training.mining import mine_negatives

EPS32 = float(np.finfo(np.float32).eps)


def stacked_partner(n: int) -> np.ndarray:
    """Row i pairs with i + n/2 (first half) and i - n/2 (second half); odd n: the last row
    has no partner (-1)."""
    half = n // 2
    partner = np.concatenate([np.arange(half) + half, np.arange(half), [-1] * (n % 2)])
    return partner.astype(np.int64)


def float64_similarity(mean: np.ndarray, logvar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d(i, j) in float64 from the formula (variance floor e^-80), and the size S(i, j) of
    its terms, 1/2 sum_d (|log 2 pi t_d| + u_d^2 / t_d)."""
    m = mean.astype(np.float64)
    v = np.exp(np.maximum(logvar.astype(np.float64), -80.0))
    n = len(m)
    d, size = np.empty((n, n)), np.empty((n, n))
    for i in range(n):
        t = v[i] + v
        log_term = np.log(2.0 * np.pi * t)
        quad = (m[i] - m) ** 2 / t
        d[i] = -0.5 * (log_term + quad).sum(1)
        size[i] = 0.5 * (np.abs(log_term) + quad).sum(1)
    return d, size


def float64_argmax(d: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """Argmax over j not in {i, partner[i]}, lowest index on ties."""
    masked = d.copy()
    rows = np.arange(len(d))
    masked[rows, rows] = -np.inf
    has = (partner >= 0) & (partner < len(d))
    masked[rows[has], partner[has]] = -np.inf
    return masked.argmax(1)


def tolerance(size: np.ndarray, dim: int) -> np.ndarray:
    """Bound on a float32 computation's error on d given the size of its terms."""
    return (dim + 4) * EPS32 * size + 1e-6


def check_choices(got: np.ndarray, mean: np.ndarray, logvar: np.ndarray, partner: np.ndarray,
                  values: np.ndarray | None = None) -> int:
    """Assert ``got`` is the float64 argmax up to near-ties (see the module docstring) and,
    when given, that ``values`` are d(i, got[i]) up to rounding; returns the near-tie count."""
    n, dim = mean.shape
    rows = np.arange(n)
    assert got.dtype == np.int64 and got.shape == (n,)
    assert not np.any(got == rows) and not np.any(got == partner)
    assert np.all((got >= 0) & (got < n))
    d, size = float64_similarity(mean, logvar)
    expected = float64_argmax(d, partner)
    tol = tolerance(size, dim)
    if values is not None:
        np.testing.assert_array_less(np.abs(values - d[rows, got]), tol[rows, got])
    differ = np.flatnonzero(got != expected)
    gap = d[differ, expected[differ]] - d[differ, got[differ]]
    allowed = 2 * np.maximum(tol[differ, expected[differ]], tol[differ, got[differ]])
    assert np.all(gap <= allowed), f"choices off by {gap[gap > allowed]} (allowed {allowed[gap > allowed]})"
    assert len(differ) <= max(1, n // 100), f"{len(differ)} near-ties of {n} rows"
    return len(differ)


def inputs(kind: str, n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    if kind == "realistic":  # logvar ~ N(0, 3^2), means ~ N(0, 1)
        mean, logvar = gen.standard_normal((n, dim)), 3.0 * gen.standard_normal((n, dim))
    elif kind == "paraphrases":  # trained-like: partners close, logvar ~ N(-2, 2^2)
        mean = gen.standard_normal((n, dim))
        half = n // 2
        mean[half:2 * half] = mean[:half] + 0.3 * gen.standard_normal((half, dim))
        logvar = gen.normal(-2.0, 2.0, (n, dim))
    elif kind == "wide":  # log-variances up to +-40, means up to 100
        mean, logvar = gen.uniform(-100, 100, (n, dim)), gen.uniform(-40, 40, (n, dim))
    elif kind == "tiny":  # variances down to the floor's neighbourhood
        mean, logvar = gen.standard_normal((n, dim)), gen.uniform(-79, -60, (n, dim))
    elif kind == "huge":  # variances beyond float32's exp (e^85), means up to 1e3
        mean, logvar = 1e3 * gen.standard_normal((n, dim)), gen.uniform(60, 85, (n, dim))
    elif kind in ("floor", "floor_far"):  # some log-variances below the floor (-80); floor_far's
        # ordinary means put sum u^2 / t beyond the kernel's range, floor's are close enough for it
        mean = gen.standard_normal((n, dim)) * (1.0 if kind == "floor_far" else 1e-17)
        logvar = np.where(gen.random((n, dim)) < 0.3, -200.0, gen.normal(0.0, 3.0, (n, dim)))
    else:
        raise AssertionError(kind)
    return mean.astype(np.float32), logvar.astype(np.float32)


@pytest.mark.parametrize("kind,n,dim", [
    ("realistic", 3, 50), ("realistic", 4, 50), ("realistic", 7, 50), ("realistic", 7, 2),
    ("realistic", 200, 50), ("realistic", 200, 3), ("realistic", 1000, 50),
    ("paraphrases", 1000, 50), ("wide", 200, 50), ("wide", 257, 4), ("tiny", 200, 50),
    ("huge", 200, 50), ("floor", 300, 50),
])
def test_matches_float64_brute_force(kind: str, n: int, dim: int) -> None:
    mean, logvar = inputs(kind, n, dim, seed=n + dim)
    partner = stacked_partner(n)
    found = mine_gaussian_negatives_with_values(mean, logvar, partner)
    assert found is not None
    check_choices(found[0], mean, logvar, partner, values=found[1])
    assert np.array_equal(mine_gaussian_negatives(mean, logvar, partner), found[0])


def test_near_ties_are_accepted_within_rounding() -> None:
    # sentences 10 and 20 differ from sentence 5 by 1e-6 in one mean: for row 5 their exact
    # values differ far below float32 resolution, so either choice is right
    mean, logvar = inputs("realistic", 200, 50, seed=6)
    mean[[10, 20]], logvar[[10, 20]] = mean[5], logvar[5]
    mean[10, 0] += 1e-6
    mean[20, 1] -= 1e-6
    partner = stacked_partner(200)
    got = mine_gaussian_negatives(mean, logvar, partner)
    assert got[5] in (10, 20)
    check_choices(got, mean, logvar, partner)


def test_any_partner_array() -> None:
    # not an involution, some rows without partner (-1 or out of range)
    mean, logvar = inputs("realistic", 150, 8, seed=1)
    partner = np.random.default_rng(2).integers(-1, 160, 150)
    partner[partner == np.arange(150)] = -1
    check_choices(mine_gaussian_negatives(mean, logvar, partner), mean, logvar, partner)


def test_variance_floor() -> None:
    mean, logvar = inputs("realistic", 100, 10, seed=3)
    logvar[:, :4] = -80.0
    floored = mine_gaussian_negatives_with_values(mean, logvar, stacked_partner(100))
    logvar[::2, :4] = -1e4  # below the floor: the same variances
    below = mine_gaussian_negatives_with_values(mean, logvar, stacked_partner(100))
    assert np.array_equal(floored[0], below[0]) and np.array_equal(floored[1], below[1])


def test_exact_ties_go_to_the_lowest_index() -> None:
    gen = np.random.default_rng(5)
    n, dim = 300, 50  # three tiles: ties across tiles and within one
    mean = gen.standard_normal((n, dim)).astype(np.float32)
    logvar = gen.normal(0, 1, (n, dim)).astype(np.float32)
    partner = stacked_partner(n)
    # every sentence identical: the lowest index other than itself and its partner
    same = mine_gaussian_negatives(np.repeat(mean[:1], n, 0), np.repeat(logvar[:1], n, 0), partner)
    rows = np.arange(n)
    expected = np.where((rows == 0) | (partner == 0), np.where((rows == 1) | (partner == 1), 2, 1), 0)
    assert np.array_equal(same, expected)
    # copies of one sentence in several tiles, each copy's best is another copy: the lowest
    copies = [7, 140, 150, 299]
    mean[copies], logvar[copies] = mean[copies[0]], logvar[copies[0]]
    got = mine_gaussian_negatives(mean, logvar, partner)
    for c in copies:
        assert got[c] == min(k for k in copies if k != c and k != partner[c])


@pytest.fixture
def one_torch_thread():
    """torch on one thread: its thread pool stalls when another process holds a core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_agrees_with_torch_reference(one_torch_thread: None) -> None:
    # the kernel against the reference's search, at mega-batch sizes
    for kind, n, dim in [("paraphrases", 1000, 50), ("realistic", 400, 20), ("wide", 300, 50)]:
        mean, logvar = inputs(kind, n, dim, seed=11)
        partner = stacked_partner(n)
        got = mine_gaussian_negatives(mean, logvar, partner)
        reference = mine_negatives(Encoding(torch.from_numpy(mean), torch.from_numpy(logvar)),
                                   torch.from_numpy(partner)).numpy()
        differ = np.flatnonzero(got != reference)
        if len(differ):  # both float32: only near-ties may differ
            d, size = float64_similarity(mean, logvar)
            tol = 2 * tolerance(size, dim)
            gap = np.abs(d[differ, got[differ]] - d[differ, reference[differ]])
            assert np.all(gap <= np.maximum(tol[differ, got[differ]], tol[differ, reference[differ]]))
        assert len(differ) <= max(1, n // 100), kind


def test_same_result_on_any_thread_count() -> None:
    mean, logvar = inputs("realistic", 700, 50, seed=8)
    mean[100:110], logvar[100:110] = mean[500], logvar[500]  # exact ties across tiles
    partner = stacked_partner(700)
    before = numba.get_num_threads()
    try:
        results = []
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            results.append(mine_gaussian_negatives_with_values(mean, logvar, partner))
    finally:
        numba.set_num_threads(before)
    for index, value in results[1:]:
        assert np.array_equal(index, results[0][0]) and np.array_equal(value, results[0][1])


@pytest.mark.parametrize("change", ["nan_mean", "inf_mean", "inf_logvar", "neg_inf_logvar",
                                    "nan_logvar", "float32_overflow"])
def test_non_finite_input_falls_back(change: str) -> None:
    mean, logvar = inputs("realistic", 20, 5, seed=4)
    if change == "float32_overflow":  # finite in float64, not in float32
        mean = mean.astype(np.float64)
        mean[3, 1] = 1e39
    else:
        target = mean if change.endswith("mean") else logvar
        target[3, 1] = {"nan": np.nan, "inf": np.inf, "neg": -np.inf}[change.split("_")[0]]
    assert mine_gaussian_negatives(mean, logvar, stacked_partner(20)) is None


@pytest.mark.parametrize("change", ["logvar_span", "far_means", "logvar_beyond_float64_exp"])
def test_out_of_range_falls_back(change: str) -> None:
    mean, logvar = inputs("realistic", 20, 5, seed=4)
    if change == "logvar_span":  # one dimension spans e^-80 .. e^100: no float32 product
        logvar[0, 2], logvar[1, 2] = -80.0, 100.0
    elif change == "far_means":  # (mu_i - mu_j)^2 / t beyond 1e38
        mean[0, 1], logvar[:, 1] = 1e19, -10.0
    else:
        logvar[:] = 800.0
    assert mine_gaussian_negatives(mean, logvar, stacked_partner(20)) is None


def far_pair(log_quad: float, reach: float | None = None, dim: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Three sentences; 0 and 2 (0's only candidate) have means +-a in the first half of the
    dimensions, log-variance -L there and +L in the second half; 1 (0's partner) the other
    way round, means 0. The bound Q on the quadratic sums is e^log_quad, reached by the pair
    (0, 2), whose variance product then reaches the top of its range in the second half. L
    defaults to filling the fraction path's room with K = 2 dimensions per product."""
    ln2 = np.log(2.0)
    if reach is None:  # the room fast_mining._prepare allows, less the rounding of its scale 2^h
        top = fast_mining.FRACTION_LOG_RANGE - ln2 - log_quad
        bottom = fast_mining.DENORMAL_ERROR_LOG + 150 * ln2
        reach = min(fast_mining.PRODUCT_LOG_RANGE, 0.5 * (top + bottom)) / 2 - ln2 - 0.7
    half = dim // 2
    a = np.sqrt(np.exp(log_quad - reach) / (2 * half))  # Q = half (2a)^2 / (2 e^-L)
    mean, logvar = np.zeros((3, dim)), np.zeros((3, dim))
    mean[0, :half], mean[2, :half] = a, -a
    logvar[[0, 2], :half], logvar[[0, 2], half:] = -reach, reach
    logvar[1, :half], logvar[1, half:] = reach, -reach
    return mean.astype(np.float32), logvar.astype(np.float32)


@pytest.mark.parametrize("log_quad", [-20.0, 10.0, 60.0, 85.0])
def test_fraction_path_with_large_quadratic_terms(log_quad: float) -> None:
    # means far apart relative to tiny variances (up to sum u^2 / t ~ 1e37), in the fraction
    # N / D at two dimensions per product: exact up to rounding
    mean, logvar = far_pair(log_quad)
    assert fast_mining._prepare(mean, logvar).block == 2
    partner = stacked_partner(3)
    found = mine_gaussian_negatives_with_values(mean, logvar, partner)
    assert found[0][0] == 2 and np.all(np.isfinite(found[1]))
    check_choices(found[0], mean, logvar, partner, values=found[1])


def test_fraction_path_range_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the far pair's numerator N comes within e^4 of float32's range: claiming e^4 more room
    # than the guard allows overflows it (d = -inf), so the test above is at the limit
    mean, logvar = far_pair(-20.0)
    partner = stacked_partner(3)
    assert np.isfinite(mine_gaussian_negatives_with_values(mean, logvar, partner)[1][0])
    monkeypatch.setattr(fast_mining, "FRACTION_LOG_RANGE", fast_mining.FRACTION_LOG_RANGE + 4.0)
    assert fast_mining._prepare(mean, logvar) is not None
    assert mine_gaussian_negatives_with_values(mean, logvar, partner)[1][0] == -np.inf


def test_fraction_path_one_dimension_per_product() -> None:
    # log-variances spread so far that the product takes one factor at a time (and, with
    # large quadratic terms, only the fraction's room allows one)
    for log_quad, reach in ((-20.0, 50.0), (60.0, 30.0)):
        mean, logvar = far_pair(log_quad, reach)
        assert fast_mining._prepare(mean, logvar).block == 1
        partner = stacked_partner(3)
        found = mine_gaussian_negatives_with_values(mean, logvar, partner)
        check_choices(found[0], mean, logvar, partner, values=found[1])


def mined_by_the_engine(mean: np.ndarray, logvar: np.ndarray, partner: np.ndarray) -> np.ndarray:
    """The negatives training takes: the kernel's, or the reference's where it declines."""
    from probsent.training.fast.engine import mine_fastest

    return mine_fastest(Encoding(torch.from_numpy(mean), torch.from_numpy(logvar)), torch.from_numpy(partner))


@pytest.mark.parametrize("log_quad,reach", [(85.0, 40.0), (60.0, 62.0)])
def test_reference_where_no_fraction_fits(log_quad: float, reach: float) -> None:
    # huge quadratic terms with log-variances spread far in a dimension: no K >= 1 leaves the
    # fraction's numerator in range, so the kernel declines and the reference search mines
    mean, logvar = far_pair(log_quad, reach)
    partner = stacked_partner(3)
    assert fast_mining._prepare(mean, logvar) is None
    assert mine_gaussian_negatives(mean, logvar, partner) is None
    check_choices(mined_by_the_engine(mean, logvar, partner), mean, logvar, partner)


def test_reference_where_no_fraction_fits_within_mega_batches() -> None:
    # the same within mega-batches: one pair of huge, opposite means; log-variances far apart
    mean, logvar = inputs("realistic", 200, 20, seed=12)
    mean[0, 0], mean[1, 0] = 1e9, -1e9  # sum u^2 / t up to ~1e38
    logvar[:, 0] = np.where(np.arange(200) % 2 == 0, -45.0, 45.0)
    partner = stacked_partner(200)
    assert fast_mining._prepare(mean, logvar) is None
    check_choices(mined_by_the_engine(mean, logvar, partner), mean, logvar, partner)
    mean, logvar = inputs("floor_far", 300, 50, seed=350)
    partner = stacked_partner(300)
    assert fast_mining._prepare(mean, logvar) is None
    check_choices(mined_by_the_engine(mean, logvar, partner), mean, logvar, partner)


@pytest.mark.parametrize("far", [False, True])
def test_means_over_many_binades(far: bool) -> None:
    # means from 1e-35 to 1e30: no power of two rescales them all exactly, so the means keep
    # their scale (h = 0); with far means and tiny variances no fraction fits either
    mean, logvar = inputs("realistic", 200, 20, seed=13)
    mean[:, 0] = 1e30
    mean[:, 1] *= 1e-35
    if far:
        mean[:, 2] *= 1e9
        logvar[:, 2] = np.where(np.arange(200) % 2 == 0, -40.0, 30.0)
    prepared = fast_mining._prepare(mean, logvar)
    partner = stacked_partner(200)
    if far:  # the kernel declines: the reference mines
        assert prepared is None
        check_choices(mined_by_the_engine(mean, logvar, partner), mean, logvar, partner)
        return
    assert prepared.quad_scale == 1.0
    found = mine_gaussian_negatives_with_values(mean, logvar, partner)
    check_choices(found[0], mean, logvar, partner, values=found[1])


def test_bad_shapes_raise() -> None:
    mean, logvar = inputs("realistic", 6, 3, seed=0)
    with pytest.raises(ValueError):
        mine_gaussian_negatives(mean[:2], logvar[:2], np.array([1, 0]))
    with pytest.raises(ValueError):
        mine_gaussian_negatives(mean, logvar[:, :2], stacked_partner(6))
    with pytest.raises(ValueError):
        mine_gaussian_negatives(mean, logvar, stacked_partner(5))
