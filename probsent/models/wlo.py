"""Word Linear Operator (WLO) model (Chen & Gimpel, 2020).

Each word w owns a diagonal scale A_w and a translation B_w in R^k. A sentence starts as
z_0 ~ N(0, I) (the paper; ``start_variance`` s_0 makes it N(0, s_0 I), below) and word i
applies z_i = A_i (z_{i-1} + B_i). For diagonal Gaussians this gives

    mu_i      = A_i (mu_{i-1} + B_i)          mu_0 = 0
    sigma^2_i = A_i^2 sigma^2_{i-1}           sigma^2_0 = s_0 (the paper: 1)

Unrolled, with S_i = sum_{l<=i} log|A_l| and s_i = prod_{l<=i} sign(A_l):

    log sigma^2_i = 2 S_i + log s_0
    mu_i = sum_{j<=i} (prod_{l=j..i} A_l) B_j = s_i e^{S_i} sum_{j<=i} s_{j-1} B_j e^{-S_{j-1}}

While every |S_i| <= 30 the products P_i = A_1 ... A_i (signs included) stay far inside
float32's range and mu_i = P_i sum_{j<=i} B_j / P_{j-1} is computed from them directly (a
cumulative product and a cumulative sum). Beyond that, the sum is computed in log space, in
float64, after dividing every term by the largest e^{-S_{j-1}} of the sentence, so nothing
overflows however long the sentence. Padding gets A = 1 and B = 0, which leaves every
quantity unchanged; the last position therefore holds each sentence's final distribution.

The sentence entropy is k/2 log(2 pi e s_0) + sum_d S_n,d: an exact sum of per-word terms
sum_d log|A_w,d|, which is what makes WLO's specificity explainable word by word.

The unit of z. Scaling every B_w by c and s_0 by c^2 scales every mean by c and every variance
by c^2 (:meth:`WLO.set_start_variance`). Training's margin loss cannot see it: the similarity
log N(0; mu1 - mu2, S1 + S2) of every pair moves by the same constant, -k log c, and so does
every entropy (+k log c); the KL between two sentences does not move at all. Only the prior
(the KL to N(0, I), weight lambda) and read-outs that mix means with variances, such as the
cosine of concat(mean, var), depend on it.

This module is the reference; the fast CPU engine (``probsent/training/fast/wlo_kernels.py``) is
tested against it.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import torch
from torch import Tensor, nn

from probsent import model_descriptions as descriptions
from probsent.gaussian import kl_to_standard_normal, log_abs_scale
from probsent.models.base import Encoding, SentenceEncoder, lookup_real, padding_mask
from probsent.models.registry import register_model

# Below this bound on |log(A_1 ... A_i)| the mean is computed from the products themselves;
# above it, in log space.
DIRECT_RANGE = 30.0


def checked_start_variance(value: float) -> float:
    """``value`` as the float s_0 of z_0 ~ N(0, s_0 I); a ValueError unless finite and positive."""
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"start_variance must be a positive number, not {value!r}")
    return float(value)


@register_model
class WLO(SentenceEncoder):
    """Word Linear Operator model: a sentence is the Gaussian its words' operators produce."""

    description = descriptions.WLO

    def __init__(self, vocab_size: int, dim: int = 50, scale_init_std: float = 0.1,
                 shift_init_std: float = 0.1, scale_init_mean: float = 1.0, start_variance: float = 1.0) -> None:
        start_variance = checked_start_variance(start_variance)
        super().__init__(vocab_size, dim=dim, scale_init_std=scale_init_std,
                         shift_init_std=shift_init_std, scale_init_mean=scale_init_mean,
                         start_variance=start_variance)
        self.dim = dim
        self.start_variance = start_variance  # sigma^2_0: z_0 ~ N(0, s_0 I)
        # A_w starts near scale_init_mean * identity, B_w near zero. A mean below 1 makes every
        # word start with the same entropy share, dim * log(mean): an untrained model then
        # ranks sentences by length instead of by initialization noise.
        self.scale = nn.Embedding(vocab_size, dim, sparse=True)
        self.shift = nn.Embedding(vocab_size, dim, sparse=True)
        nn.init.normal_(self.scale.weight, mean=scale_init_mean, std=scale_init_std)
        nn.init.normal_(self.shift.weight, mean=0.0, std=shift_init_std)

    def trajectory(self, ids: Tensor, lengths: Tensor, final_only: bool = False) -> tuple[Tensor, Tensor]:
        """Mean and log-variance after every operator: two [batch, length, dim] tensors
        (with ``final_only``, after the last word: two [batch, dim] tensors)."""
        mean, logvar, _ = self._trajectory(ids, lengths, final_only)
        return mean, logvar

    def _trajectory(self, ids: Tensor, lengths: Tensor, final_only: bool) -> tuple[Tensor, Tensor, Tensor]:
        """:meth:`trajectory` plus log|mean| in float64 (no gradient), exact where the float32
        mean overflows."""
        mask = padding_mask(ids, lengths)
        real = mask.unsqueeze(-1)
        a = lookup_real(self.scale, ids, mask, 1.0)  # padding: A = 1, B = 0, nothing changes
        b = lookup_real(self.shift, ids, mask, 0.0)
        log_abs_a = log_abs_scale(a)
        cum_log = log_abs_a.cumsum(1)  # S_i; log sigma^2_i = 2 S_i
        if cum_log.numel() and float(cum_log.detach().abs().max()) <= DIRECT_RANGE:
            mean = self._mean_by_products(a, b, final_only)
            log_abs_mean = mean.detach().double().abs().log()
        else:
            mean, log_abs_mean = self._mean_in_log_space(a, b, real, log_abs_a, cum_log, final_only)
        logvar = 2.0 * (cum_log[:, -1] if final_only else cum_log)
        if self.start_variance != 1.0:  # log sigma^2_0 (the paper's N(0, I): nothing to add)
            logvar = logvar + math.log(self.start_variance)
        return mean, logvar, log_abs_mean

    @staticmethod
    def _mean_by_products(a: Tensor, b: Tensor, final_only: bool) -> Tensor:
        """mu_i = P_i sum_{j<=i} B_j / P_{j-1} with P_i = A_1 ... A_i, signs included.

        Used while every |log P_i| <= DIRECT_RANGE, where the products cannot overflow.
        """
        products = a.cumprod(1)  # P_i
        previous = torch.cat([torch.ones_like(products[:, :1]), products[:, :-1]], 1)  # P_{j-1}
        ratio = b / previous
        if final_only:
            return products[:, -1] * ratio.sum(1)
        return products * ratio.cumsum(1)

    @staticmethod
    def _mean_in_log_space(a: Tensor, b: Tensor, real: Tensor, log_abs_a: Tensor, cum_log: Tensor,
                           final_only: bool) -> tuple[Tensor, Tensor]:
        """mu_i = s_i e^{S_i} sum_{j<=i} s_{j-1} B_j e^{-S_{j-1}}, for any range of S; and
        log|mu_i| (float64, no gradient), finite even where mu_i overflows."""
        negative = a < 0
        sign = 1.0 - 2.0 * (negative.to(torch.int32).cumsum(1) & 1).to(a.dtype)  # s_i
        # -S_{j-1} = log|A_j| - S_j and s_{j-1} = s_j sign(A_j): no shifted copies needed.
        neg_prev = log_abs_a - cum_log
        term = sign * torch.where(negative, -b, b)  # s_{j-1} B_j
        # The sum is scaled by its largest factor e^{M}, M = max_j -S_{j-1}, so every scaled
        # factor lies in (0, 1]; M cancels out of the result, so it carries no gradient. The
        # sum runs in float64, whose range (e^-745) covers sentences of any realistic length.
        top = torch.where(real, neg_prev.detach(), float("-inf")).amax(1, keepdim=True)
        top = torch.where(top.isinf(), 0.0, top).double()  # a sentence of no words keeps mu_0 = 0
        scaled = term.double() * (neg_prev.double() - top).exp()
        if final_only:  # padding leaves everything unchanged: the last position is the end
            cum_log, sign, top = cum_log[:, -1], sign[:, -1], top[:, 0]
            partial = scaled.sum(1)
        else:
            partial = scaled.cumsum(1)
        scale = cum_log.double() + top
        log_abs_mean = partial.detach().abs().log() + scale.detach()
        return (sign.double() * partial * scale.exp()).to(a.dtype), log_abs_mean

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:
        if not with_kl:
            mean, logvar, log_abs_mean = self._trajectory(ids, lengths, final_only=True)
            return Encoding(mean, logvar, log_abs_mean=log_abs_mean)
        # the prior applies to the distribution after every operator
        mean, logvar = self.trajectory(ids, lengths)
        kl = (kl_to_standard_normal(mean, logvar) * padding_mask(ids, lengths)).sum(1)
        return Encoding(mean[:, -1], logvar[:, -1], kl)

    def set_start_variance(self, start_variance: float) -> None:
        """Make z_0 ~ N(0, s_0 I) with s_0 = ``start_variance``, scaling every B_w by
        c = sqrt(s_0 / the current s_0): every mean scales by c and every variance by c^2.

        Nothing training's loss sees changes (the module docstring): each pair's similarity
        and each entropy move by one constant, the KL between sentences and the word terms not
        at all. What changes is the unit in which means and variances are written, and with it
        read-outs that mix the two, such as the cosine of concat(mean, var)."""
        start_variance = checked_start_variance(start_variance)
        with torch.no_grad():
            self.shift.weight.mul_(math.sqrt(start_variance / self.start_variance))
        self.start_variance = start_variance
        self.hyper["start_variance"] = self.start_variance

    def shift_entropy_terms(self, terms: Tensor) -> None:
        """Add ``terms[w]`` to word w's entropy term by scaling its A_w by exp(terms[w] / k) in
        every dimension (an initialization: rare words may start specific, frequent ones general)."""
        with torch.no_grad():
            self.scale.weight.mul_(torch.exp(terms.to(self.scale.weight) / self.dim)[:, None])

    def with_word_rows(self, scale: np.ndarray, shift: np.ndarray) -> "WLO":
        """A copy (on this module's device, in its dtype, in eval mode) that reads the ids from
        this vocabulary's size on as the rows of ``scale`` (A) and ``shift`` (B): the open
        vocabulary's classes (:mod:`probsent.data.vocab`), as the NumPy encoder reads them
        (:meth:`probsent.inference.array_encoder.ArrayEncoder.with_word_rows`). Draws no random
        numbers and leaves this module as it is."""
        weight = self.scale.weight
        extended = copy.deepcopy(self)
        with torch.no_grad():
            for name, rows in (("scale", scale), ("shift", shift)):
                table = getattr(self, name).weight
                joined = torch.cat([table.detach(), torch.as_tensor(np.asarray(rows)).to(device=weight.device,
                                                                                          dtype=weight.dtype)])
                setattr(extended, name, nn.Embedding.from_pretrained(joined, freeze=False, sparse=True))
        return extended.eval()

    def entropy_weights(self) -> Tensor:
        """The scales A, from which the entropy terms are computed."""
        return self.scale.weight

    def word_shifts(self) -> Tensor:
        """The translations B_w, [vocab, dim]."""
        return self.shift.weight

    def word_entropy_terms(self, ids: Tensor | None = None, dtype: torch.dtype | None = None) -> Tensor:
        """Per word (of ``ids``, default all), its exact additive contribution sum_d log|A_w,d|
        to a sentence's entropy (computed in ``dtype``, default the weights')."""
        scale = self.scale.weight if ids is None else self.scale(ids)  # a lookup: sparse gradient
        return log_abs_scale(scale.to(dtype or scale.dtype)).sum(-1)
