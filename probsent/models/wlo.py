"""Word Linear Operator (WLO) model (Chen & Gimpel, 2020).

Each word w owns a diagonal scale A_w and a translation B_w in R^k. A sentence starts as
z_0 ~ N(0, I) and word i applies z_i = A_i (z_{i-1} + B_i). For diagonal Gaussians this gives

    mu_i      = A_i (mu_{i-1} + B_i)          mu_0 = 0
    sigma^2_i = A_i^2 sigma^2_{i-1}           sigma^2_0 = 1

Unrolled, with S_i = sum_{l<=i} log|A_l| and s_i = prod_{l<=i} sign(A_l):

    log sigma^2_i = 2 S_i
    mu_i = sum_{j<=i} (prod_{l=j..i} A_l) B_j = s_i e^{S_i} sum_{j<=i} s_{j-1} B_j e^{-S_{j-1}}

While every |S_i| <= 30 the products P_i = A_1 ... A_i (signs included) stay far inside
float32's range and mu_i = P_i sum_{j<=i} B_j / P_{j-1} is computed from them directly (a
cumulative product and a cumulative sum). Beyond that, the sum is computed in log space, in
float64, after dividing every term by the largest e^{-S_{j-1}} of the sentence, so nothing
overflows however long the sentence. Padding gets A = 1 and B = 0, which leaves every
quantity unchanged; the last position therefore holds each sentence's final distribution.

The sentence entropy is k/2 log(2 pi e) + sum_d S_n,d: an exact sum of per-word terms
sum_d log|A_w,d|, which is what makes WLO's specificity explainable word by word.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.autograd.function import once_differentiable

from probsent.gaussian import kl_to_standard_normal
from probsent.models.base import Encoding, SentenceEncoder, lookup_real, padding_mask


# Below this bound on |log(A_1 ... A_i)| the mean is computed from the products themselves;
# above it, in log space.
DIRECT_RANGE = 30.0
# What a group of rows costs beyond its padded cells, in cells (rows x positions), when
# training's batches are regrouped (see WLO.encode_batches): measured, it only sets the speed.
GROUP_OVERHEAD = 300


class WLO(SentenceEncoder):
    """Word Linear Operator model: a sentence is the Gaussian its words' operators produce."""

    type_name = "wlo"
    probabilistic = True
    default_margin = 1.0

    def __init__(self, vocab_size: int, dim: int = 50, scale_init_std: float = 0.1,
                 shift_init_std: float = 0.1, scale_init_mean: float = 1.0) -> None:
        super().__init__(vocab_size, dim=dim, scale_init_std=scale_init_std,
                         shift_init_std=shift_init_std, scale_init_mean=scale_init_mean)
        self.dim = dim
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
        log_abs_a = a.abs().clamp_min(1e-30).log()
        cum_log = log_abs_a.cumsum(1)  # S_i; log sigma^2_i = 2 S_i
        if cum_log.numel() and float(cum_log.detach().abs().max()) <= DIRECT_RANGE:
            mean = self._mean_by_products(a, b, final_only)
            log_abs_mean = mean.detach().double().abs().log()
        else:
            mean, log_abs_mean = self._mean_in_log_space(a, b, real, log_abs_a, cum_log, final_only)
        return mean, 2.0 * (cum_log[:, -1] if final_only else cum_log), log_abs_mean

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
        top = torch.where(top.isinf(), 0.0, top).double()  # a sentence of no words keeps N(0, I)
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
        mask = padding_mask(ids, lengths)
        if ids.shape[1]:
            a = lookup_real(self.scale, ids, mask, 1.0)
            with torch.no_grad():
                cum_log = a.abs().clamp_min(1e-30).log().cumsum(1)
            if float(cum_log.abs().max()) <= DIRECT_RANGE:  # training's usual case: one fused step
                b = lookup_real(self.shift, ids, mask, 0.0)
                mean, logvar, kl = _FinalAndPrior.apply(a, b, cum_log, mask)
                return Encoding(mean, logvar, kl.sum(1))
        mean, logvar = self.trajectory(ids, lengths)
        kl = (kl_to_standard_normal(mean, logvar) * padding_mask(ids, lengths)).sum(1)
        return Encoding(mean[:, -1], logvar[:, -1], kl)

    def encode_batches(self, batches: list[tuple[Tensor, Tensor]], with_kl: bool = False) -> list[Encoding]:
        """With the prior (training), batches whose rows are sorted by length, as
        :func:`probsent.batching.encode_by_length` makes them, are computed in groups of rows
        cut for speed (little padding, tensors that fit in cache) instead of batch by batch
        (on the CPU; elsewhere batch by batch).

        Every result is the same to the last bit as ``forward``'s on each batch: a row's
        values do not depend on the other rows or on its padding (A = 1, B = 0 change
        nothing), the word tables are looked up batch by batch as ``forward`` does (the same
        sparse gradients, accumulated in the same order), each KL is summed over its own
        batch's width, and a batch beyond the direct range takes ``forward``'s path.
        """
        lengths = torch.cat([rows for _, rows in batches]) if batches else torch.zeros(0, dtype=torch.long)
        if (not with_kl or not len(lengths) or lengths.device.type != "cpu"
                or any(ids.shape[1] == 0 for ids, _ in batches)
                or bool((lengths.diff() < 0).any())):
            return super().encode_batches(batches, with_kl)
        groups, largest = self._regrouped(batches, lengths)
        sizes = [len(rows) for _, rows in batches]
        if not all(float(top.max()) <= DIRECT_RANGE for top in largest.split(sizes)):
            return super().encode_batches(batches, with_kl)  # as forward routes each batch
        outputs = [_FinalAndPrior.apply(*group) for group in groups]
        mean = torch.cat([out[0] for out in outputs]).split(sizes)
        logvar = torch.cat([out[1] for out in outputs]).split(sizes)
        # per-position KL terms, zero beyond each row's length, summed over the batch's width
        # (a sum's rounding depends on how many terms it has)
        width = max(ids.shape[1] for ids, _ in batches)
        kl = torch.cat([F.pad(out[2], (0, width - out[2].shape[1])) for out in outputs]).split(sizes)
        return [Encoding(m, v, k[:, :ids.shape[1]].sum(1))
                for m, v, k, (ids, _) in zip(mean, logvar, kl, batches)]

    def _regrouped(self, batches: list[tuple[Tensor, Tensor]], lengths: Tensor) -> tuple[list[tuple], Tensor]:
        """_FinalAndPrior's inputs for groups of consecutive rows of ``batches`` (``lengths``:
        all their rows' lengths, sorted), and every row's largest |S_i|."""
        real = [padding_mask(ids, rows) for ids, rows in batches]
        scale = torch.cat([self.scale(ids[mask]) for (ids, _), mask in zip(batches, real)])
        shift = torch.cat([self.shift(ids[mask]) for (ids, _), mask in zip(batches, real)])
        # where each row's batch had padding after it (see _FinalAndPrior's inject)
        padded = np.concatenate([rows.numpy() < ids.shape[1] for ids, rows in batches])
        counts = lengths.numpy()
        bounds = _split_sorted(counts, GROUP_OVERHEAD)
        words = np.add.reduceat(counts, bounds[:-1]).tolist()  # tokens per group
        groups, largest = [], []
        for first, end, scale_words, shift_words in zip(bounds[:-1], bounds[1:], scale.split(words),
                                                        shift.split(words)):
            rows, row_padded = counts[first:end], padded[first:end]
            width = max(int(rows[-1]) + int(row_padded[rows == rows[-1]].any()), 1)  # a padding slot
            mask = padding_mask(torch.empty(0, width), lengths[first:end])
            inject = torch.from_numpy(np.where(row_padded, width - 1, rows - 1))
            a = torch.full((*mask.shape, self.dim), 1.0, dtype=scale.dtype)
            a[mask] = scale_words  # as lookup_real: padding A = 1, B = 0
            b = torch.zeros_like(a)
            b[mask] = shift_words
            with torch.no_grad():
                cum_log = a.abs().clamp_min(1e-30).log().cumsum(1)
            groups.append((a, b, cum_log, mask, inject))
            largest.append(cum_log.abs().amax((1, 2)))
        return groups, torch.cat(largest)

    def shift_entropy_terms(self, terms: Tensor) -> None:
        """Add ``terms[w]`` to word w's entropy term by scaling its A_w by exp(terms[w] / k) in
        every dimension (an initialization: rare words may start specific, frequent ones general)."""
        with torch.no_grad():
            self.scale.weight.mul_(torch.exp(terms.to(self.scale.weight) / self.dim)[:, None])

    def word_entropy_terms(self, ids: Tensor | None = None) -> Tensor:
        """Per word (of ``ids``, default all), its exact additive contribution sum_d log|A_w,d|
        to a sentence's entropy."""
        scale = self.scale.weight if ids is None else self.scale.weight[ids]
        return scale.abs().clamp_min(1e-30).log().sum(-1)


class _FinalAndPrior(torch.autograd.Function):
    """(final mean, final log-variance, KL to N(0, I) at every position, 0 at padding) in the
    direct range, with a hand-written backward: the same values as
    ``WLO.trajectory`` + ``kl_to_standard_normal``, in fewer (and cheaper) operations than
    autograd records for them.

    Backward, with c_i = dL/dmu_i from the outputs directly (the KL term g_kl mu_i, and g_mean
    at the last position, which padding carries from the last word), the adjoint of
    mu_i = A_i (mu_{i-1} + B_i) is lambda_i = c_i + A_{i+1} lambda_{i+1}, in closed form
    lambda_i = (1 / P_i) sum_{k>=i} P_k c_k (one reverse cumulative sum). Then
    dL/dB_i = A_i lambda_i and dL/dA_i = lambda_i (mu_{i-1} + B_i) + (1 / A_i) sum_{k>=i} h_k,
    where h_k = dL/dS_k = g_kl (sigma_k^2 - 1) (+ 2 g_logvar at the last position).

    ``inject`` (default: the last position) says per row where g_mean and g_logvar join the
    reverse sums: at a padding position they are added to the sums on their own; at the last
    word, to that word's term first. Both are exact adjoints, but they round differently, so
    a row regrouped into another batch keeps the place its own batch gave it.
    """

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor, cum_log: Tensor, mask: Tensor,  # type: ignore[override]
                inject: Tensor | None = None):
        products = a.cumprod(1)  # P_i, as in WLO._mean_by_products
        previous = torch.cat([torch.ones_like(products[:, :1]), products[:, :-1]], 1)
        mean = products * (b / previous).cumsum(1)
        logvar = 2.0 * cum_log
        var = logvar.exp()
        kl = 0.5 * (var + mean.square() - 1.0 - logvar).sum(-1) * mask  # as kl_to_standard_normal
        ctx.save_for_backward(a, b, products, mean, var, mask)
        ctx.inject = (slice(None), -1) if inject is None else (torch.arange(len(a)), inject)
        return mean[:, -1], logvar[:, -1], kl

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_mean: Tensor | None, grad_logvar: Tensor | None, grad_kl: Tensor | None):  # type: ignore[override]
        a, b, products, mean, var, mask = ctx.saved_tensors
        weight = (grad_kl * mask if grad_kl is not None else torch.zeros_like(mask, dtype=a.dtype))[..., None]
        direct = weight * mean  # dL/dmu_i through the prior
        if grad_mean is not None:
            direct[ctx.inject] += grad_mean
        adjoint = _reverse_cumsum(products * direct).div_(products)  # lambda_i
        grad_b = a * adjoint
        before = torch.cat([torch.zeros_like(mean[:, :1]), mean[:, :-1]], 1)  # mu_{i-1}
        grad_a = adjoint.mul_(before.add_(b))
        entropy_side = weight * (var - 1.0)  # dL/dS_i through the prior
        if grad_logvar is not None:
            entropy_side[ctx.inject] += 2.0 * grad_logvar
        per_word = _reverse_cumsum(entropy_side)  # dL/d log|A_i|
        # d log|A| / dA = 1/A; below the clamp (|A| < 1e-30) the forward has no gradient
        if float(a.abs().amin()) >= 1e-30:  # the usual case: no word below the clamp
            grad_a += per_word.div_(a)
        else:
            grad_a += torch.where(a.abs() >= 1e-30, per_word / a, 0.0)
        return grad_a, grad_b, None, None, None


def _reverse_cumsum(x: Tensor) -> Tensor:
    """sum_{k>=i} x_k along dimension 1."""
    return x.flip(1).cumsum(1).flip(1)


def _split_sorted(lengths: np.ndarray, overhead: float) -> list[int]:
    """Boundaries 0 = b_0 < b_1 < ... < b_m = len(lengths) that cut rows sorted by length
    into groups of consecutive rows at the least total cost, a group costing ``overhead``
    plus its padded cells (rows x its longest length). Groups end only where the length
    changes; a dynamic programme over those points."""
    n = len(lengths)
    if n == 0:
        return [0]
    ends = np.append(np.flatnonzero(np.diff(lengths)) + 1, n)
    starts = np.append(0, ends)  # candidate group starts, increasing
    cost = np.zeros(len(starts))  # cost[k]: best cost of the rows before starts[k]
    previous = np.zeros(len(starts), dtype=np.int64)
    for k in range(1, len(starts)):
        end = starts[k]
        options = cost[:k] + overhead + (end - starts[:k]) * max(int(lengths[end - 1]), 1)
        previous[k] = int(np.argmin(options))
        cost[k] = options[previous[k]]
    bounds, k = [n], len(starts) - 1
    while k > 0:
        k = int(previous[k])
        bounds.append(int(starts[k]))
    return bounds[::-1]
