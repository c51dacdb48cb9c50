"""WLO with two variances per word: one the entropy reads, one the similarity compares.

Issue 34's design candidate (``probsent train --model wlo2v``; the pre-registered protocol
calls it ``--variance-parts 2``). Each word w has three vectors in R^k: the WLO scale R_w (named
``scale``, as in :mod:`probsent.models.wlo`) and translation B_w, and a second scale S_w. The
sentence's mean and its entropy are WLO's with A_w = R_w, so specificity, ``explain`` and
``--rarity-anchor`` see only R. The similarity compares the variances the same recurrence gives
with A_w = S_w, which nothing anchors to word rarity:

    mu_i          = R_i (mu_{i-1} + B_i)       mu_0 = 0
    sigma^2_i     = R_i^2 sigma^2_{i-1}         (the entropy's; sigma^2_0 = s_0)
    sigma^2_S,i   = S_i^2 sigma^2_S,i-1         (the similarity's; sigma^2_S,0 = s_0)
    d(a, b)       = log N(0; mu_a - mu_b, Sigma_S,a + Sigma_S,b)

The prior: on every prefix, KL(N(mu_i, Sigma_i) || N(0, I)) as WLO, plus the variance part of
KL(N(mu_i, Sigma_S,i) || N(0, I)), 1/2 sum_d (sigma^2_S,i,d - 1 - log sigma^2_S,i,d) (the mean's
part is counted once). Diagonal scales commute, so log sigma^2_S,n = log s_0 + 2 sum_i log|S_i|.

No compiled twin: the torch engine trains it (WLO's part by WLO's fused forward). Inference
loads it through torch; its ``Encoding.similarity_logvar`` carries the similarity's variances.
"""
from __future__ import annotations

import math

from torch import Tensor, nn

from probsent.models.base import Encoding, SentenceEncoder, lookup_real, padding_mask
from probsent.models.registry import register_model
from probsent.models.wlo import WLO


@register_model
class WLOTwoVariances(WLO):
    """WLO whose similarity compares a second, unanchored set of variances."""

    type_name = "wlo2v"
    label = "WLO (two variances)"

    def __init__(self, vocab_size: int, dim: int = 50, scale_init_std: float = 0.1,
                 shift_init_std: float = 0.1, scale_init_mean: float = 1.0, start_variance: float = 1.0) -> None:
        super().__init__(vocab_size, dim=dim, scale_init_std=scale_init_std, shift_init_std=shift_init_std,
                         scale_init_mean=scale_init_mean, start_variance=start_variance)
        self.similarity_scale = nn.Embedding(vocab_size, dim, sparse=True)  # S_w
        nn.init.normal_(self.similarity_scale.weight, mean=scale_init_mean, std=scale_init_std)

    def similarity_logvar(self, ids: Tensor, lengths: Tensor, final_only: bool = False) -> Tensor:
        """log sigma^2_S after every operator ([batch, length, dim]; ``final_only``: [batch, dim])."""
        s = lookup_real(self.similarity_scale, ids, padding_mask(ids, lengths), 1.0)  # padding: S = 1
        logvar = 2.0 * s.abs().clamp_min(1e-30).log().cumsum(1) + math.log(self.start_variance)
        return logvar[:, -1] if final_only else logvar

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:
        if not with_kl:
            mean, logvar, log_abs_mean = self._trajectory(ids, lengths, final_only=True)
            return Encoding(mean, logvar, log_abs_mean=log_abs_mean,
                            similarity_logvar=self.similarity_logvar(ids, lengths, final_only=True))
        similarity_logvar = self.similarity_logvar(ids, lengths)
        real = padding_mask(ids, lengths)
        similarity_kl = (0.5 * (similarity_logvar.exp() - 1.0 - similarity_logvar).sum(-1) * real).sum(1)
        wlo = super().forward(ids, lengths, with_kl=True)  # WLO's, by its fused path where it applies
        return Encoding(wlo.mean, wlo.logvar, wlo.kl + similarity_kl, similarity_logvar=similarity_logvar[:, -1])

    def encode_batches(self, batches: list[tuple[Tensor, Tensor]], with_kl: bool = False) -> list[Encoding]:
        """One forward per batch: WLO's regrouped batches do not carry the similarity's variances."""
        return SentenceEncoder.encode_batches(self, batches, with_kl)
