"""The similarity d(a, b) that training maximizes for paraphrases.

Deterministic models: cosine of the sentence vectors. Probabilistic models: the expected
inner product of the two Gaussians, log N(0; mu1 - mu2, Sigma1 + Sigma2).
"""
from __future__ import annotations

import math
from typing import Iterator

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


def similarity_blocks(a: Encoding, b: Encoding, max_cells: int) -> Iterator[tuple[slice, slice, Tensor]]:
    """d(a_i, b_j) for every i, j, as (rows, columns, block) with block = d(a[rows], b[columns]);
    every block's work holds at most about ``max_cells`` numbers (or one row by one column).

    Each block is the paired similarity of a's rows broadcast against b's (so the diagonal of
    d(a, a) is exactly ``paired_similarity(a, a, exact=True)``), computed in float64 with the
    exact mean differences; deterministic models take the cosine by a product of unit vectors.
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
    for i in range(0, n, max(rows, 1)):
        r = slice(i, min(i + rows, n))
        for j in range(0, m, max(columns, 1)):
            c = slice(j, min(j + columns, m))
            if a.logvar is None:
                yield r, c, a.mean[r] @ b.mean[c].T
            else:
                yield r, c, paired_similarity(a.index((r, None)), b.index((None, c)), exact=True)
