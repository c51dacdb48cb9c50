"""Inference without torch (probsent/inference): the NumPy closed forms against an independent
recurrence, and the NumPy model against the torch model on every evaluation set's sentences and
on random models, with float16 and float32 weights."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch

from probsent.api import SentenceModel, load
from probsent.readouts.calibration import Calibration
from probsent.readouts.percentiles import PercentileTable
from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.errors import InvalidValueError
from probsent.inference.array_encoder import ArrayEncoder
from probsent.inference.arrays import ArrayEncoding, saturated
from probsent.inference.closed_form import wlo_encoding
from probsent.readouts.similarity import expected_inner_product_blocks, measure_pairs, paired_expected_inner_product
from probsent.inference.torch_encoder import TorchEncoder
from probsent.model_directory import read_model
from probsent.model_directory import write_model_dir
from probsent.models import Encoding, build_model
from probsent.models.training_similarity import paired_similarity as torch_paired_similarity
from tests.helpers import evaluation_sets, wlo_recurrence
from tests.rounding import (UNIT, encoding_magnitudes, expected_inner_product_bound, log_abs_mean_bound,
                            mean_rounding_bound)

REPO = Path(__file__).resolve().parents[1]


def test_closed_form_equals_the_recurrence() -> None:
    rng = np.random.default_rng(0)
    lengths = np.array([0, 1, 2, 7, 13, 30])
    width, dim = int(lengths.max()), 5
    scale = rng.normal(0.9, 0.6, (width, len(lengths), dim))  # negative scales included
    shift = rng.normal(0.0, 0.5, (width, len(lengths), dim))
    enc = wlo_encoding(scale, shift, lengths, start_variance=0.3)
    for k, n in enumerate(lengths):
        means, variances = wlo_recurrence(scale[:n, k], shift[:n, k], 0.3)
        mean, var = means[-1], variances[-1]
        np.testing.assert_allclose(enc.mean[k], mean, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.exp(enc.logvar[k]), var, rtol=1e-12)
        with np.errstate(divide="ignore"):  # the empty sentence: log 0
            np.testing.assert_allclose(enc.log_abs_mean[k], np.log(np.abs(mean)), rtol=1e-12)


def test_closed_form_beyond_float64_matches_high_precision() -> None:
    """A 400-word sentence of scales ~ +-30: the mean is beyond float64's range; its log|mean|
    and log-variance still equal the recurrence in 60-digit arithmetic."""
    rng = np.random.default_rng(1)
    n, dim = 400, 3
    scale = rng.choice([-1.0, 1.0], (n, 1, dim)) * rng.uniform(20, 40, (n, 1, dim))
    shift = rng.normal(0.0, 1.0, (n, 1, dim))
    enc = wlo_encoding(scale, shift, np.array([n]), start_variance=1.0)
    mpmath.mp.dps = 60
    for d in range(dim):
        mean, var = mpmath.mpf(0), mpmath.mpf(1)
        for i in range(n):
            a = mpmath.mpf(float(scale[i, 0, d]))
            mean, var = a * (mean + float(shift[i, 0, d])), a * a * var
        assert enc.log_abs_mean[0, d] == pytest.approx(float(mpmath.log(abs(mean))), rel=1e-12)
        assert enc.logvar[0, d] == pytest.approx(float(mpmath.log(var)), rel=1e-12)
        assert np.isinf(enc.mean[0, d]) and np.sign(enc.mean[0, d]) == np.sign(float(mean))
    assert np.all(np.abs(saturated(enc.mean)) == np.float32(3.4028235e38))


def _random_model(tmp_path: Path, kind: str, dtype: torch.dtype, seed: int) -> Path:
    """A random model of ``kind`` over the shipped model's vocabulary, written in ``dtype``."""
    torch.manual_seed(seed)
    vocab = load().vocab
    settings = {"type": kind, "vocab_size": len(vocab), "dim": 16}
    encoder = build_model(settings)
    if kind == "wlo":
        with torch.no_grad():  # scales around 1 with some negative ones, shifts of all sizes
            encoder.scale.weight.copy_(torch.randn_like(encoder.scale.weight) * 0.4 + 0.95)
            encoder.shift.weight.copy_(torch.randn_like(encoder.shift.weight))
    path = tmp_path / f"{kind}-{seed}"
    path.mkdir()
    write_model_dir(path, encoder, vocab, dtype=dtype)
    return path


def _both(path: Path) -> tuple[SentenceModel, SentenceModel]:
    """The model of ``path`` read without torch, and read by the torch reader (with the same
    open vocabulary, where it has one)."""
    fast = load(path)
    assert isinstance(fast._arrays, ArrayEncoder)
    config, vocab, weights = read_model(path)
    return fast, SentenceModel(build_model(config["model"], weights), vocab, config, Calibration.load(path), path,
                               PercentileTable.load(path), fast.word_estimates)


@pytest.fixture(scope="module")
def sentences(data_dir: Path) -> list[str]:
    """Every sentence of every evaluation set (no training pairs)."""
    out = []
    for name, (loader, _) in evaluation_sets(data_dir).items():
        if "train" not in name and "paraphrase" not in name:
            out += loader()
    return out


# The tolerances below are derived from the arithmetic (tests/rounding.py), never fitted to a machine.


@pytest.mark.parametrize("kind,dtype", [("wlo", torch.float16), ("wlo", torch.float32),
                                        ("wordavg", torch.float32), ("wordsum", torch.float16)])
def test_numpy_encodings_equal_torch_in_float64(tmp_path: Path, sentences: list[str], kind: str,
                                                dtype: torch.dtype) -> None:
    """On every evaluation sentence, the NumPy encoder equals the torch module run in float64
    (mean, log-variance, log|mean|) within the rounding each can make (the bounds above), and
    the exact similarity of the two equals torch's within the rounding of their exp and log."""
    fast, reference = _both(_random_model(tmp_path, kind, dtype, seed=3))
    ids, offsets = fast._token_ids(sentences)
    ours = fast._arrays.encode(ids, offsets)
    theirs = TorchEncoder(reference.encoder.double(), 32_768).encode(ids, offsets)
    n, nu, logs = encoding_magnitudes(fast._arrays.weights, kind, ids, offsets)
    mean_bound = mean_rounding_bound(n, nu, logs)
    assert np.all(np.abs(ours.mean - theirs.mean) <= mean_bound)
    if kind == "wlo":
        # log-variance 2 S_n + log s_0: two orders of summing n logs, n u L each, and one rounding
        np.testing.assert_array_less(np.abs(ours.logvar - theirs.logvar),
                                     2 * UNIT * (2 * n * logs + np.abs(theirs.logvar) + 1))
        # log|mean|: the mean's relative error, log(1 + bound/|mu|), plus an ulp of each log
        log_bound = log_abs_mean_bound(n, nu, logs, theirs.log_abs_mean)
        same = ours.log_abs_mean == theirs.log_abs_mean  # -inf (a mean of 0) in both
        with np.errstate(invalid="ignore"):
            assert np.all(same | (np.abs(ours.log_abs_mean - theirs.log_abs_mean) <= log_bound))
    pair_a, pair_b = ours.rows(slice(0, -1)), ours.rows(slice(1, None))
    if kind != "wlo":  # vectors: the cosine, probsent.readouts.similarity's reference, against torch's
        cosine = torch.nn.functional.cosine_similarity(torch.from_numpy(pair_a.mean), torch.from_numpy(pair_b.mean))
        # a dot product and two norms of dim terms, each within dim u of |a||b| (or |a|^2), a
        # square root and a division: |d cos| <= 2 (2 dim + 4) u for the two libraries
        width = pair_a.mean.shape[-1]
        np.testing.assert_allclose(measure_pairs("cosine", (pair_a.mean, None), (pair_b.mean, None)),
                                   cosine.numpy(), rtol=0, atol=2 * (2 * width + 4) * UNIT)
        return
    wide = lambda e: Encoding(torch.from_numpy(e.mean), torch.from_numpy(e.logvar),  # noqa: E731
                              log_abs_mean=torch.from_numpy(e.log_abs_mean))
    expected = torch_paired_similarity(wide(pair_a), wide(pair_b), exact=True).numpy()
    # the same formula on the same encodings: only the libraries' exp and log differ
    ours_similarity = paired_expected_inner_product(pair_a, pair_b)
    np.testing.assert_array_less(np.abs(ours_similarity - expected), expected_inner_product_bound(pair_a, pair_b))


def test_the_rounding_bounds_catch_a_wrong_weight_and_a_wrong_formula(tmp_path: Path, sentences: list[str]) -> None:
    """The bounds above are tight enough to fail on real mistakes: one scale of the commonest word
    off by a relative 1e-9, and training's floor on the variance sum used at inference."""
    fast, reference = _both(_random_model(tmp_path, "wlo", torch.float32, seed=3))
    ids, offsets = fast._token_ids(sentences)
    theirs = TorchEncoder(reference.encoder.double(), 32_768).encode(ids, offsets)
    weights = dict(fast._arrays.weights)
    bound = mean_rounding_bound(*encoding_magnitudes(weights, "wlo", ids, offsets))
    scale = weights["scale.weight"].astype(np.float64)
    scale[np.bincount(ids).argmax(), 3] *= 1 + 1e-9
    fast._arrays.weights, fast._arrays._tables = {**weights, "scale.weight": scale}, None
    assert np.any(np.abs(fast._arrays.encode(ids, offsets).mean - theirs.mean) > bound)
    a, b = theirs.rows(slice(0, -1)), theirs.rows(slice(1, None))
    wide = lambda e: Encoding(torch.from_numpy(e.mean), torch.from_numpy(e.logvar),  # noqa: E731
                              log_abs_mean=torch.from_numpy(e.log_abs_mean))
    floored = torch_paired_similarity(wide(a), wide(b), exact=False).numpy()
    assert np.any(np.abs(floored - paired_expected_inner_product(a, b)) > expected_inner_product_bound(a, b))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_numpy_model_answers_as_the_torch_model(tmp_path: Path, sentences: list[str], dtype: torch.dtype) -> None:
    """The API's answers (float32, as users get them) of a random WLO read without torch equal
    the torch model's: specificity and explain to 1e-12, encode and similarity to float32's rounding."""
    fast, reference = _both(_random_model(tmp_path, "wlo", dtype, seed=5))
    sample = sentences[::7]
    # the same sums; NumPy's log and torch's differ in the last bit of a few words' terms
    np.testing.assert_allclose(fast.specificity(sample), reference.specificity(sample), rtol=1e-12, atol=1e-12)
    ours, theirs = fast.explain(sample[3]), reference.explain(sample[3])
    assert [w.token for w in ours.words] == [w.token for w in theirs.words]
    assert [w.entropy for w in ours.words] == pytest.approx([w.entropy for w in theirs.words], rel=1e-12)
    mean, var = fast.encode(sample)
    mean_t, var_t = reference.encode(sample)
    assert np.max(np.abs(mean - mean_t) / (np.abs(mean_t).max(-1, keepdims=True) + 1e-30)) < 1e-5
    np.testing.assert_allclose(var, var_t, rtol=1e-5)
    matrix = fast.similarity(sample[:40], sample[40:90])
    np.testing.assert_allclose(matrix, reference.similarity(sample[:40], sample[40:90]), rtol=1e-3)
    assert np.all(np.isfinite(matrix))


def test_shipped_model_reads_without_torch_and_agrees() -> None:
    fast, reference = _both(load().path)
    text = ["The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday.", "It is good.", None, ""]
    np.testing.assert_array_equal(fast.probability(text), reference.probability(text))
    np.testing.assert_allclose(fast.similarity_pairwise(text, text[::-1]),
                               reference.similarity_pairwise(text, text[::-1]), rtol=1e-5)
    # words without an entry (a price, a drug, a year, an identifier): the torch module (a GPU's
    # path) reads each as its open-vocabulary class's row, as NumPy does, so its variances are
    # the entropy the score reports (float32's rounding: 1e-5, as for the random models above)
    estimated = ["She takes warfarin and 5mg of ibuprofen.", "Kubernetes 1.29 shipped in 2023 to 10,421.67 users."]
    assert all(any(w.estimate for w in fast.explain(s).words) for s in estimated)
    mean, var = fast.encode(estimated)
    mean_t, var_t = reference.encode(estimated)
    np.testing.assert_allclose(var_t, var, rtol=1e-5)
    assert np.max(np.abs(mean_t - mean) / np.abs(mean).max(-1, keepdims=True)) < 1e-5
    entropy_of_var = 0.5 * np.log(2 * np.pi * np.e * var_t.astype(np.float64)).sum(-1)
    np.testing.assert_allclose(entropy_of_var, fast.entropy(estimated), rtol=1e-5)


def test_similarity_blocks_equal_pairs_without_the_kernel() -> None:
    """The NumPy blocks (used without numba, or beyond the kernel's domain) are the paired values."""
    rng = np.random.default_rng(2)
    a = ArrayEncoding(rng.normal(size=(7, 4)) * 1e200, rng.normal(size=(7, 4)), None)
    b = ArrayEncoding(rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), None)
    out = np.empty((7, 5))
    for rows, columns, block in expected_inner_product_blocks(a, b, max_cells=12):
        out[rows, columns] = block
    expected = [[paired_expected_inner_product(a.rows([i]), b.rows([j]))[0] for j in range(5)] for i in range(7)]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_load_reads_numpy_models_without_torch_and_others_with_it(tmp_path: Path) -> None:
    """An LSTM becomes a torch module, a WLO NumPy tables; a damaged WLO is the reader's one-line
    error on either path (one check of the files, not a blame on torch)."""
    vocab = Vocabulary([UNKNOWN, "a"])
    for kind in ("lstmavg", "wlo"):
        path = tmp_path / kind
        path.mkdir()
        write_model_dir(path, build_model({"type": kind, "vocab_size": 2, "dim": 4}), vocab)
        assert (load(path)._arrays is None) == (kind == "lstmavg")
    (tmp_path / "wlo" / "model.safetensors").write_bytes(b"damaged")
    with pytest.raises(InvalidValueError, match="damaged weights file") as numpy_reader:
        load(tmp_path / "wlo")
    with pytest.raises(InvalidValueError) as torch_reader:
        load(tmp_path / "wlo", device=torch.device("cpu"))
    assert str(numpy_reader.value) == str(torch_reader.value)


def test_encoding_the_module_after_touching_it() -> None:
    """A model read without torch builds its torch module on first use, then encodes with it:
    a change to the module's weights is what the next result sees."""
    model = load()
    before = model.specificity("It is good.")
    with torch.no_grad():
        model.encoder.scale.weight.mul_(2.0)
    assert model._arrays is None
    assert model.specificity("It is good.") == pytest.approx(before - model.encoder.dim * math.log(2.0) * 4, rel=1e-9)


def test_load_and_score_import_no_torch() -> None:
    """In a fresh process: load, encode, score, explain and compare with the shipped model, and
    torch is never imported (sys.modules after each call)."""
    code = """
import sys
import probsent
model = probsent.load()
calls = [lambda: model.encode(["It is good.", "A man plays a guitar."]),
         lambda: model.specificity(["It is good."]), lambda: model.probability("It is good."),
         lambda: model.explain("It is good."), lambda: model.similarity(["a"], ["b", "c"]),
         lambda: model.similarity_pairwise(["a"], ["b"]), lambda: model.entropy("x"), lambda: repr(model)]
for call in calls:
    call()
    heavy = [name for name in ("torch", "pyspark", "spacy") if name in sys.modules]
    assert not heavy, heavy
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == "ok", out.stderr


def test_save_keeps_the_model_numpy_and_round_trips(tmp_path: Path) -> None:
    model = load()
    model.save(tmp_path / "copy")
    assert model._arrays is not None  # saving built a torch module for the files, not for the model
    again = load(tmp_path / "copy")
    text = ["The Dow fell 2.3 % on Tuesday.", "It is good."]
    np.testing.assert_array_equal(again.specificity(text), model.specificity(text))
    np.testing.assert_array_equal(again.encode(text)[0], model.encode(text)[0])
