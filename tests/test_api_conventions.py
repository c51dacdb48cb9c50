"""sentence-transformers-style calls: the similarity matrix, similarity_pairwise, encode's
progress bar and tensors, load's device; and every input shape (iterables, NumPy, pandas
with nulls), each against an independent reference."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import multivariate_normal

import probsent
import probsent.api as api
from probsent.errors import InvalidValueError
from tests.rounding import expected_inner_product_bound

SENTENCES = ["The cat sat on the mat.", "A dog ran in the park", "a man plays guitar", "3 apples",
             "the", "", "zebras unknown entirely", "The Dow fell 2.3 % to 10,421.67 on Tuesday."]
OTHERS = ["Things happen.", "A man is playing a guitar.", "up up up down", "the cat"]


def gaussian_matrix_reference(model, a: list[str], b: list[str]) -> np.ndarray:
    """log N(0; mu_i - mu_j, S_i + S_j) by a float64 loop over every pair, from encode's output."""
    (ma, va), (mb, vb) = model.encode(a), model.encode(b)
    out = np.empty((len(a), len(b)))
    for i in range(len(a)):
        for j in range(len(b)):
            t = va[i].astype(np.float64) + vb[j]
            d = ma[i].astype(np.float64) - mb[j]
            out[i, j] = -0.5 * sum(math.log(2 * math.pi * t[k]) + d[k] ** 2 / t[k] for k in range(len(t)))
    return out


@pytest.fixture(scope="module")
def shipped():
    return probsent.load()


@pytest.mark.parametrize("kind", ["wlo", "lstmgaussian", "shipped"])
def test_matrix_is_the_gaussian_formula_and_its_diagonal_the_pairwise_call(kind, make_model, shipped) -> None:
    model = shipped if kind == "shipped" else make_model(kind, seed=2)
    matrix = model.similarity(SENTENCES, OTHERS, measure="expected_inner_product")
    assert matrix.shape == (len(SENTENCES), len(OTHERS)) and matrix.dtype == np.float32
    np.testing.assert_allclose(matrix, gaussian_matrix_reference(model, SENTENCES, OTHERS), rtol=1e-5, atol=1e-4)
    # scipy's density of a diagonal Gaussian, for one pair
    (m1, v1), (m2, v2) = model.encode(SENTENCES[0]), model.encode(OTHERS[1])
    expected = multivariate_normal(mean=np.zeros(len(m1)), cov=np.diag(v1.astype(np.float64) + v2)).logpdf(
        m1.astype(np.float64) - m2)
    assert matrix[0, 1] == pytest.approx(expected, rel=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a square call warns about nothing (no DeprecationWarning)
        square = model.similarity(SENTENCES, SENTENCES[::-1], measure="expected_inner_product")
        pairs = model.similarity_pairwise(SENTENCES, SENTENCES[::-1], measure="expected_inner_product")
    assert pairs.shape == (len(SENTENCES),)
    np.testing.assert_allclose(np.diagonal(square), pairs, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(pairs, np.diagonal(gaussian_matrix_reference(model, SENTENCES, SENTENCES[::-1])),
                               rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind", ["wordavg", "wordsum", "lstmavg"])
def test_matrix_of_deterministic_models_is_the_cosine(kind, make_model) -> None:
    model = make_model(kind, seed=4)
    va, vb = model.encode(SENTENCES).astype(np.float64), model.encode(OTHERS).astype(np.float64)
    expected = np.zeros((len(SENTENCES), len(OTHERS)))
    for i in range(len(SENTENCES)):
        for j in range(len(OTHERS)):
            norms = np.linalg.norm(va[i]) * np.linalg.norm(vb[j])
            expected[i, j] = va[i] @ vb[j] / norms if norms else 0.0  # a zero vector: 0
    expected[[i for i, s in enumerate(SENTENCES) if not s.strip()]] = np.nan  # a blank sentence: NaN
    np.testing.assert_allclose(model.similarity(SENTENCES, OTHERS), expected, rtol=1e-5, atol=1e-6)
    pairs = model.similarity_pairwise(SENTENCES[:4], OTHERS)
    np.testing.assert_allclose(pairs, np.diagonal(expected), rtol=1e-5, atol=1e-6)


def test_matrix_blocks_never_change_a_value(shipped, monkeypatch) -> None:
    whole = shipped.similarity(SENTENCES, OTHERS)
    for cells in (1, 50, 120, 999):  # one pair a block, a row, 2 x 1, ragged edges
        monkeypatch.setattr(api, "MAX_SIMILARITY_CELLS", cells)
        np.testing.assert_array_equal(shipped.similarity(SENTENCES, OTHERS), whole)


def test_single_strings_drop_their_axis(shipped) -> None:
    matrix = shipped.similarity(SENTENCES, OTHERS)  # a cosine: near 0, float32 encodings' last bits show
    assert isinstance(shipped.similarity(SENTENCES[1], OTHERS[2]), float)
    assert shipped.similarity(SENTENCES[1], OTHERS[2]) == pytest.approx(matrix[1, 2], rel=1e-6, abs=1e-6)
    np.testing.assert_allclose(shipped.similarity(SENTENCES[1], OTHERS), matrix[1], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(shipped.similarity(SENTENCES, OTHERS[2]), matrix[:, 2], rtol=1e-6, atol=1e-6)
    assert shipped.similarity([], OTHERS).shape == (0, len(OTHERS))


def test_encode_progress_bar_and_tensors(shipped, capsys, monkeypatch) -> None:
    mean, var = shipped.encode(SENTENCES, show_progress_bar=True)
    assert "encode" in capsys.readouterr().err
    shipped.encode(SENTENCES, show_progress_bar=False)
    shipped.encode(SENTENCES)  # default: only on a terminal, and pytest's stderr is none
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(api, "ENCODE_CHUNK", 3)  # several chunks: the same values
    tmean, tvar = shipped.encode(SENTENCES, convert_to_tensor=True, show_progress_bar=True)
    assert "8/8" in capsys.readouterr().err
    assert isinstance(tmean, torch.Tensor) and tmean.device == shipped.device
    np.testing.assert_allclose(tmean.numpy(), mean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tvar.numpy(), var, rtol=1e-6)


def test_load_on_a_device() -> None:
    assert probsent.load(device="cpu").device == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert probsent.load(device="auto").device.type == expected
    for bad in ("gpu", "cuda:x", "cpu:0", 3):
        with pytest.raises((InvalidValueError, TypeError)):
            probsent.load(device=bad)
    if not torch.cuda.is_available():
        with pytest.raises(probsent.ProbsentError, match="no CUDA device"):
            probsent.load(device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_results_match_the_cpu(shipped) -> None:
    gpu = probsent.load(device="cuda")
    for cpu_value, gpu_value in ((shipped.encode(SENTENCES), gpu.encode(SENTENCES)),
                                 ((shipped.similarity(SENTENCES, OTHERS),), (gpu.similarity(SENTENCES, OTHERS),)),
                                 ((shipped.specificity(SENTENCES),), (gpu.specificity(SENTENCES),))):
        for c, g in zip(cpu_value, gpu_value):
            np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-4)
    assert gpu.explain(SENTENCES[0]).entropy == pytest.approx(shipped.explain(SENTENCES[0]).entropy)


def test_any_iterable_and_numpy_arrays(shipped) -> None:
    expected = shipped.specificity(SENTENCES)
    for given in (tuple(SENTENCES), iter(SENTENCES), (s for s in SENTENCES), np.array(SENTENCES),
                  np.array(SENTENCES, dtype=object)):
        np.testing.assert_array_equal(shipped.specificity(given), expected)
    np.testing.assert_array_equal(shipped.similarity(np.array(SENTENCES), iter(OTHERS)),
                                  shipped.similarity(SENTENCES, OTHERS))


def test_series_with_nulls_keeps_its_index(shipped) -> None:
    index = pd.Index([30, 10, 20, 99, 7], name="row")
    series = pd.Series([SENTENCES[0], None, SENTENCES[2], np.nan, pd.NA], index=index, dtype=object)
    for method, name in ((shipped.specificity, "specificity"), (shipped.entropy, "entropy"),
                         (shipped.probability, "probability")):
        got = method(series)
        assert isinstance(got, pd.Series) and got.name == name and got.index.equals(index)
        assert got.isna().tolist() == [False, True, False, True, True]
        assert got.loc[30] == method(SENTENCES[0]) and got.loc[20] == method(SENTENCES[2])
    # assigned to a shuffled frame, values follow the index, not the position
    frame = pd.DataFrame({"text": series}).sample(frac=1.0, random_state=0)
    frame["specificity"] = shipped.specificity(series)
    assert frame.loc[20, "specificity"] == shipped.specificity(SENTENCES[2])


def test_nulls_are_zero_vectors_nan_variances_and_nan_scores(shipped, make_model) -> None:
    given = ["a cat", None, float("nan"), "the Dow fell"]
    mean, var = shipped.encode(given)
    _, log_var = shipped.encode(given, log_variance=True)
    assert (mean[[1, 2]] == 0).all() and np.isnan(var[[1, 2]]).all() and np.isnan(log_var[[1, 2]]).all()
    np.testing.assert_array_equal(mean[[0, 3]], shipped.encode(["a cat", "the Dow fell"])[0])
    matrix = shipped.similarity(given, ["x", None])
    assert np.isnan(matrix[[1, 2]]).all() and np.isnan(matrix[:, 1]).all() and np.isfinite(matrix[[0, 3], 0]).all()
    pairs = shipped.similarity_pairwise(given, ["x", "y", "z", None])
    assert np.isnan(pairs).tolist() == [False, True, True, True]
    vectors = make_model("wordavg").encode(given)
    assert (vectors[[1, 2]] == 0).all()


@pytest.mark.slow
def test_compiled_kernel_equals_the_log_space_path(shipped, make_model, monkeypatch) -> None:
    from probsent.readouts import similarity
    from probsent.readouts.similarity import expected_inner_product_blocks

    monkeypatch.setattr(similarity, "COMPILED_PAIRS", 1)  # the kernel even for this small matrix
    for model in (shipped, make_model("wlo", seed=5), make_model("lstmgaussian", seed=5)):
        a, b = model._encode(SENTENCES, 3), model._encode(OTHERS + SENTENCES[:2], 3)
        kernel, torch_path = np.full((len(SENTENCES), 6), np.nan), np.full((len(SENTENCES), 6), np.nan)
        for compiled, out in ((True, kernel), (False, torch_path)):
            for rows, columns, block in expected_inner_product_blocks(a, b, 64, compiled=compiled):
                out[rows, columns] = block
        # the kernel subtracts the means, the other path takes their difference in log space: an
        # ulp of exp or log amplified by each difference's condition (tests/rounding.py)
        bound = expected_inner_product_bound(a.rows((slice(None), None)), b.rows((None, slice(None))))
        same = kernel == torch_path
        with np.errstate(invalid="ignore"):
            assert np.all(same | (np.abs(kernel - torch_path) <= bound))
