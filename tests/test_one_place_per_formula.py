"""One place per formula: the Gaussian constants are defined once (probsent/gaussian_constants.py),
every function computing a formula with them is declared here with its role, and each twin
equals its reference. A new definition of LOG_2PI, a new log(2 pi), or a new function using
the constants fails here: call the reference (or declare the twin and test it against it).

The references are the NumPy float64 functions of inference (what a user's scores, similarities
and explanations are computed with, and torch-free); the torch functions of probsent/gaussian.py
are training's twins (autograd, float32), and the numba kernels the compiled twins.
"""
from __future__ import annotations

import ast
import math

import numpy as np
import torch

from probsent.gaussian import entropy as torch_entropy, expected_inner_product, log_abs_difference
from probsent.gaussian_matrix import expected_inner_product_matrix
from probsent.inference.arrays import ArrayEncoding, gaussian_entropy
from probsent.inference.closed_form import wlo_word_terms
from probsent.inference.similarity import paired_similarity
from probsent.models import WLO
from probsent.word_terms import prior_entropy
from tests.helpers import REPO

PACKAGE = REPO / "probsent"
CONSTANTS = {"LOG_2PI", "VARIANCE_FLOOR_LOG"}
HOME = "probsent/gaussian_constants.py"
# every function that uses a Gaussian constant: file::function -> the formula and its role
USES = {
    "probsent/inference/arrays.py::gaussian_entropy": "entropy: the reference",
    "probsent/gaussian.py::entropy": "entropy: torch twin (training, autograd)",
    "probsent/inference/similarity.py::paired_similarity": "expected inner product: the reference",
    "probsent/gaussian.py::expected_inner_product": "expected inner product: torch twin (training's loss)",
    "probsent/gaussian_matrix.py::expected_inner_product_matrix": "expected inner product: compiled twin (N x M)",
    # the compiled engine's kernels: orderings of the same formula for speed, each tested against
    # gaussian.expected_inner_product in test_fast_mining / test_fast_engine (issue 35 item 2: still
    # to fold into the twins above; the torch mining and the hardness cap's re-mining already take
    # the torch twin and gaussian_matrix's)
    "probsent/training/fast/mining_kernels.py::_prepare": "expected inner product: compiled mining",
    "probsent/training/fast/wlo_kernels.py::_similarity": "expected inner product: compiled loss",
    "probsent/training/negatives.py::_similarity_rows": "the variance floor of the hardness cap's re-mining",
}


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


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
                                    (HOME, "VARIANCE_FLOOR_LOG")])


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


def test_the_entropy_twin_and_the_prior_entropy_equal_the_reference() -> None:
    _, logvar = _gaussians(np.random.default_rng(0))
    reference = gaussian_entropy(logvar)
    assert np.allclose(torch_entropy(torch.from_numpy(logvar)).numpy(), reference, rtol=1e-12)
    for dim, start in [(1, 1.0), (300, 1.0), (50, 0.25)]:
        expected = 0.5 * dim * math.log(2 * math.pi * math.e * start)  # written out
        assert math.isclose(prior_entropy(dim, start), expected, rel_tol=1e-12)
        assert prior_entropy(dim, start) == float(gaussian_entropy(np.full(dim, math.log(start))))


def test_the_expected_inner_product_twins_equal_the_reference() -> None:
    rng = np.random.default_rng(1)
    (m1, v1), (m2, v2) = _gaussians(rng), _gaussians(rng)
    reference = paired_similarity(ArrayEncoding(m1, v1), ArrayEncoding(m2, v2))
    written_out = np.array([sum(-0.5 * (math.log(2 * math.pi * (math.exp(a) + math.exp(b))) + (p - q) ** 2
                                         / (math.exp(a) + math.exp(b))) for p, a, q, b in zip(*row))
                            for row in zip(m1, v1, m2, v2)])
    assert np.allclose(reference, written_out, rtol=1e-12)
    t = [torch.from_numpy(x) for x in (m1, v1, m2, v2)]
    assert np.allclose(expected_inner_product(*t).numpy(), reference, rtol=1e-12)
    exact = log_abs_difference(t[0].sign(), t[0].abs().log(), t[2].sign(), t[2].abs().log())
    assert np.allclose(expected_inner_product(*t, log_abs_diff=exact).numpy(), reference, rtol=1e-12)
    matrix = np.empty((len(m1), len(m2)))
    expected_inner_product_matrix(m1, np.exp(v1), m2, np.exp(v2), matrix)
    assert np.allclose(np.diag(matrix), reference, rtol=1e-12)


def test_the_word_terms_twin_equals_the_reference() -> None:
    torch.manual_seed(0)
    model = WLO(30, dim=7, scale_init_std=0.8)
    with torch.no_grad():
        model.scale.weight[3] = 0.0  # |A| floored at 1e-30 by both
    reference = wlo_word_terms(model.scale.weight.detach().numpy())
    twin = model.word_entropy_terms(dtype=torch.float64).detach().numpy()
    assert np.allclose(twin, reference, rtol=1e-12)  # the sums' order may differ
    assert math.isclose(reference[3], 7 * math.log(1e-30), rel_tol=1e-12)
