"""The similarity d(a, b) that training maximizes for paraphrases.

Deterministic models: cosine of the sentence vectors. Probabilistic models: the expected
inner product of the two Gaussians, log N(0; mu1 - mu2, Sigma1 + Sigma2).
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from probsent.gaussian import expected_inner_product, log_abs_difference
from probsent.models.base import Encoding


def paired_similarity(a: Encoding, b: Encoding, exact: bool = False) -> Tensor:
    """d(a_i, b_i) for every row i: a [batch] tensor.

    ``exact`` (inference, float64, no gradients): the Gaussians' mean difference is taken in
    log space, from each encoding's ``log_abs_mean`` where it has one (WLO: exact however far
    the means are beyond the range of their dtype), with no floor on the variances.
    """
    if a.logvar is None or b.logvar is None:
        return F.cosine_similarity(a.mean, b.mean, dim=-1)
    log_abs_diff = None
    if exact:
        log_abs = lambda e: e.mean.abs().log() if e.log_abs_mean is None else e.log_abs_mean  # noqa: E731
        log_abs_diff = log_abs_difference(a.mean.sign(), log_abs(a), b.mean.sign(), log_abs(b))
    return expected_inner_product(a.mean, a.logvar, b.mean, b.logvar, log_abs_diff)


def pairwise_similarity(a: Encoding, b: Encoding) -> Tensor:
    """d(a_i, b_j) for every i, j: an [len(a), len(b)] tensor."""
    if a.logvar is None or b.logvar is None:
        return F.normalize(a.mean, dim=-1) @ F.normalize(b.mean, dim=-1).T
    return expected_inner_product(a.mean[:, None], a.logvar[:, None], b.mean[None], b.logvar[None])


def similarity_blocks(a: Encoding, b: Encoding, max_cells: int,
                      compiled: bool = True) -> Iterator[tuple[slice, slice, Tensor]]:
    """d(a_i, b_j) for every i, j, as (rows, columns, block) with block = d(a[rows], b[columns]);
    every block's work holds at most about ``max_cells`` numbers (or one row by one column).

    Each block is the paired similarity of a's rows broadcast against b's (so the diagonal of
    d(a, a) is exactly ``paired_similarity(a, a, exact=True)``), computed in float64 with the
    exact mean differences; deterministic models take the cosine by a product of unit vectors.
    With ``compiled`` (CPU tensors whose means and log-variances are in its domain), the
    probabilistic blocks come from the fused numba kernel of :mod:`probsent.gaussian_matrix`
    instead (the same float64 formula, about 50x faster, no work tensors).
    """
    width = 1 if a.logvar is None else a.mean.shape[-1]  # numbers per (i, j) pair in a block
    n, m = len(a.mean), len(b.mean)
    rows = min(n, max(1, math.isqrt(max(1, max_cells // width))))
    columns = min(m, max(1, max_cells // (width * max(rows, 1))))
    wide = lambda e: Encoding(e.mean.double(), None if e.logvar is None else e.logvar.double(),  # noqa: E731
                              log_abs_mean=e.log_abs_mean)
    a, b = wide(a), wide(b)
    if a.logvar is None or b.logvar is None:
        a, b = Encoding(F.normalize(a.mean, dim=-1)), Encoding(F.normalize(b.mean, dim=-1))
    elif compiled:
        kernel = _compiled_blocks(a, b, max_cells)
        if kernel is not None:
            yield from kernel
            return
    for i in range(0, n, max(rows, 1)):
        r = slice(i, min(i + rows, n))
        for j in range(0, m, max(columns, 1)):
            c = slice(j, min(j + columns, m))
            if a.logvar is None:
                yield r, c, a.mean[r] @ b.mean[c].T
            else:
                yield r, c, paired_similarity(a.index((r, None)), b.index((None, c)), exact=True)


def _compiled_blocks(a: Encoding, b: Encoding, max_cells: int) -> Iterator[tuple[slice, slice, Tensor]] | None:
    """Blocks of every column by as many rows as hold ``max_cells`` numbers (or one row), from
    the compiled kernel; None where it does
    not apply (a GPU, or a mean or log-variance beyond its domain: then the log-space path)."""
    if a.mean.device.type != "cpu" or b.mean.device.type != "cpu":
        return None
    from probsent.gaussian_matrix import expected_inner_product_matrix, in_domain

    def means(e: Encoding) -> Tensor:  # float64 means, from their logarithms where the model has them
        return e.mean if e.log_abs_mean is None else e.mean.sign() * e.log_abs_mean.exp()

    mean_a, mean_b = means(a).numpy(), means(b).numpy()
    logvar_a, logvar_b = a.logvar.numpy(), b.logvar.numpy()
    if not (in_domain(mean_a, logvar_a) and in_domain(mean_b, logvar_b)):
        return None
    var_a, var_b = np.exp(logvar_a), np.exp(logvar_b)
    rows = max(1, max_cells // max(1, len(mean_b)))  # the kernel needs no work space beyond ``out``

    def blocks() -> Iterator[tuple[slice, slice, Tensor]]:
        for i in range(0, len(mean_a), rows):
            r = slice(i, min(i + rows, len(mean_a)))
            out = np.empty((r.stop - r.start, len(mean_b)))
            expected_inner_product_matrix(mean_a[r], var_a[r], mean_b, var_b, out)
            yield r, slice(0, len(mean_b)), torch.from_numpy(out)
    return blocks()
