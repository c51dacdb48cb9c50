"""The similarity d(a, b) that training maximizes for paraphrases.

Deterministic models: cosine of the sentence vectors. Probabilistic models: the expected
inner product of the two Gaussians, log N(0; mu1 - mu2, Sigma1 + Sigma2).
"""
from __future__ import annotations

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
