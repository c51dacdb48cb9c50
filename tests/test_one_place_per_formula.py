"""One place per formula: the Gaussian formulas and their constants are written once, in
probsent/gaussian.py, for NumPy arrays and torch tensors alike (inference's float64 references
and training's autograd are the same lines). Every other function that computes with the
constants is a compiled kernel declared here with its role and held to the reference. A new
definition of a constant, a new log(2 pi), or a new function using the constants fails here:
call the reference (or declare the kernel and test it against it).

The compiled kernels: ``gaussian_matrix`` is the compiled twin of the expected inner product
(the N x M matrix of inference's ``similarity`` and of the hardness cap's re-mining, float64).
The training engine's two kernels compute it inside larger computations whose references are
torch's (tests/test_fast_mining.py, tests/test_fast_engine.py): the mining kernel the argmax
over a mega-batch's pairs (float32, each unordered pair once, no division: the matrix kernel
then an argmax is about 25x slower, benchmarks/lean_numbers.py), the step kernel the loss with
the gradient terms of each pair in the same pass.
"""
from __future__ import annotations

import ast
import functools
import math

import numpy as np
import torch

from probsent.gaussian import (SCALE_FLOOR, entropy, expected_inner_product, kl_to_standard_normal,
                               log_abs_difference, log_abs_scale)
from probsent.gaussian_matrix import expected_inner_product_matrix
from probsent.inference.arrays import ArrayEncoding, gaussian_entropy
from probsent.inference.closed_form import wlo_word_terms
from probsent.readouts.similarity import paired_expected_inner_product
from probsent.models import WLO
from probsent.readouts.word_terms import prior_entropy
from tests.rounding import expected_inner_product_bound
from tests.helpers import REPO

PACKAGE = REPO / "probsent"
CONSTANTS = {"LOG_2PI", "VARIANCE_FLOOR_LOG", "SCALE_FLOOR"}
HOME = "probsent/gaussian.py"
# every function outside HOME that uses a Gaussian constant: file::function -> its role
USES = {
    "probsent/gaussian_matrix.py::expected_inner_product_matrix": "expected inner product: the compiled twin (N x M)",
    "probsent/training/fast/mining_kernels.py::_prepare": "expected inner product: inside the compiled mining argmax",
    "probsent/training/fast/wlo_kernels.py::_similarity": "expected inner product: inside the compiled loss step",
    "probsent/training/negatives.py::_similarity_rows": "the variance floor of the hardness cap's re-mining",
    # the step kernel's log|A| (log_abs_scale's compiled twin, per row and dimension), tested
    # against the torch WLO in tests/test_fast_engine.py
    "probsent/training/fast/wlo_kernels.py::encode_final": "the scale floor: a mega-batch's log-variances",
    "probsent/training/fast/wlo_kernels.py::_sum_log_abs": "the scale floor: a word's entropy term",
    "probsent/training/fast/wlo_kernels.py::_load_rows": "the scale floor: no gradient below it",
    "probsent/training/fast/wlo_kernels.py::_final": "the scale floor: a sentence's log-variance beyond float32",
}


@functools.cache  # parsed once for the tests below (they only read the trees)
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    return tuple((path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
                 for path in sorted(PACKAGE.rglob("*.py")))


def _is_log_2pi(node: ast.AST) -> bool:
    """A call log(2 * pi) or log(2.0 * math.pi), in any module's spelling."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.BinOp)):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    text = ast.unparse(node.args[0]).replace(" ", "")
    return name == "log" and text.startswith("2") and text.endswith("pi")


def test_the_constants_are_defined_once() -> None:
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AnnAssign, ast.AugAssign)) else []
            found += [(name, t.id) for t in targets if isinstance(t, ast.Name) and t.id in CONSTANTS]
            if _is_log_2pi(node):
                found.append((name, ast.unparse(node)))
    assert sorted(found) == sorted([(HOME, "LOG_2PI"), (HOME, "math.log(2.0 * math.pi)"),
                                    (HOME, "VARIANCE_FLOOR_LOG"), (HOME, "SCALE_FLOOR")])


def test_every_function_using_them_is_declared() -> None:
    uses = set()

    def visit(node: ast.AST, name: str, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not owner else owner
            if isinstance(child, ast.Name) and child.id in CONSTANTS and isinstance(child.ctx, ast.Load):
                uses.add(f"{name}::{owner}")
            visit(child, name, inner)

    for name, tree in _modules():
        if name != HOME:
            visit(tree, name, "")
    assert uses == set(USES), (uses - set(USES), set(USES) - uses)


def _gaussians(rng: np.random.Generator, n: int = 40, dim: int = 6):
    return rng.normal(0, 3, (n, dim)), rng.normal(0, 2, (n, dim))


def _same_on_torch(formula, *arrays: np.ndarray) -> np.ndarray:
    """``formula`` on NumPy arrays, checked equal to it on torch tensors (the training path,
    whose gradient must exist); returns the NumPy value."""
    value = formula(*arrays)
    tensors = [torch.from_numpy(a).requires_grad_() for a in arrays]
    on_torch = formula(*tensors)
    assert isinstance(value, np.ndarray) and isinstance(on_torch, torch.Tensor)
    np.testing.assert_allclose(on_torch.detach().numpy(), value, rtol=1e-13)
    on_torch.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in tensors)
    return value


def test_the_entropy_kl_and_prior_entropy_equal_written_out_sums() -> None:
    mean, logvar = _gaussians(np.random.default_rng(0))
    written = [0.5 * sum(math.log(2 * math.pi * math.e * math.exp(v)) for v in row) for row in logvar]
    np.testing.assert_allclose(_same_on_torch(entropy, logvar), written, rtol=1e-12)
    assert np.array_equal(gaussian_entropy(logvar.astype(np.float32)), entropy(logvar.astype(np.float32).astype(float)))
    written = [0.5 * sum(math.exp(v) + m * m - 1 - v for m, v in zip(*row)) for row in zip(mean, logvar)]
    np.testing.assert_allclose(_same_on_torch(kl_to_standard_normal, mean, logvar), written, rtol=1e-12)
    for dim, start in [(1, 1.0), (300, 1.0), (50, 0.25)]:
        expected = 0.5 * dim * math.log(2 * math.pi * math.e * start)  # written out
        assert math.isclose(prior_entropy(dim, start), expected, rel_tol=1e-12)


def test_the_expected_inner_product_and_its_compiled_twin_equal_a_written_out_sum() -> None:
    rng = np.random.default_rng(1)
    (m1, v1), (m2, v2) = _gaussians(rng), _gaussians(rng)
    written = np.array([sum(-0.5 * (math.log(2 * math.pi * (math.exp(a) + math.exp(b))) + (p - q) ** 2
                                     / (math.exp(a) + math.exp(b))) for p, a, q, b in zip(*row))
                        for row in zip(m1, v1, m2, v2)])
    np.testing.assert_allclose(_same_on_torch(expected_inner_product, m1, v1, m2, v2), written, rtol=1e-12)

    # inference takes the mean difference in log space: an ulp of exp or log is amplified by the
    # condition of each difference, so the comparisons bound it as tests/rounding.py derives
    inference = paired_expected_inner_product(ArrayEncoding(m1, v1), ArrayEncoding(m2, v2))
    bound = expected_inner_product_bound(ArrayEncoding(m1, v1), ArrayEncoding(m2, v2))
    assert np.all(np.abs(inference - written) <= bound)
    t = [torch.from_numpy(x) for x in (m1, m2)]
    difference = log_abs_difference(t[0].sign(), t[0].abs().log(), t[1].sign(), t[1].abs().log())
    on_torch = expected_inner_product(None, torch.from_numpy(v1), None, torch.from_numpy(v2), difference)
    assert np.all(np.abs(on_torch.numpy() - inference) <= bound)
    matrix = np.empty((len(m1), len(m2)))
    expected_inner_product_matrix(m1, np.exp(v1), m2, np.exp(v2), matrix)
    np.testing.assert_allclose(np.diag(matrix), written, rtol=1e-12)


def test_the_word_terms_are_the_scale_formula_in_both_readers() -> None:
    torch.manual_seed(0)
    model = WLO(30, dim=7, scale_init_std=0.8)
    with torch.no_grad():
        model.scale.weight[3] = 0.0  # |A| floored at 1e-30
    scale = model.scale.weight.detach().numpy()
    written = [sum(math.log(max(abs(float(a)), 1e-30)) for a in row) for row in scale]
    np.testing.assert_allclose(wlo_word_terms(scale), written, rtol=1e-12)
    np.testing.assert_allclose(model.word_entropy_terms(dtype=torch.float64).detach().numpy(), written, rtol=1e-12)
    assert SCALE_FLOOR == 1e-30 and math.isclose(written[3], 7 * math.log(1e-30), rel_tol=1e-12)
    _same_on_torch(log_abs_scale, scale.astype(np.float64))
