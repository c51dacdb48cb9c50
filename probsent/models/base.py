"""What every sentence encoder in probsent shares: its input, its output and its interface."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor, nn


@dataclass
class Encoding:
    """A batch of encoded sentences.

    mean:   [batch, dim] the sentence vector (deterministic models) or Gaussian mean.
    logvar: [batch, dim] log of the diagonal variance, or None for deterministic models.
    kl:     [batch] the model's prior penalty (probabilistic models, training only), else None.
    log_abs_mean: [batch, dim] float64 log|mean|, where a model computes it beyond the mean's
            own range (WLO without the prior), else None.
    """

    mean: Tensor
    logvar: Tensor | None = None
    kl: Tensor | None = None
    log_abs_mean: Tensor | None = None

    def index(self, idx: Tensor) -> "Encoding":
        """Rows ``idx`` of this batch."""
        pick = lambda t: None if t is None else t[idx]  # noqa: E731
        return Encoding(self.mean[idx], pick(self.logvar), pick(self.kl), pick(self.log_abs_mean))


class SentenceEncoder(nn.Module):
    """Maps padded word ids [batch, length] (+ true lengths) to an :class:`Encoding`.

    Index 0 of the vocabulary is the unknown word; positions at or beyond a sentence's length
    are padding and never change its result.
    """

    type_name: ClassVar[str]
    probabilistic: ClassVar[bool]
    default_margin: ClassVar[float]
    order_sensitive: ClassVar[bool] = True  # False: word order cannot matter (no scrambling)

    def __init__(self, vocab_size: int, **hyper: Any) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.hyper = dict(hyper)

    @property
    def device(self) -> torch.device:
        """Where the weights are."""
        return next(self.parameters()).device

    def config(self) -> dict[str, Any]:
        """Everything needed to rebuild this module (weights aside)."""
        return {"type": self.type_name, "vocab_size": self.vocab_size, **self.hyper}

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:  # pragma: no cover
        raise NotImplementedError

    def encode_batches(self, batches: list[tuple[Tensor, Tensor]], with_kl: bool = False) -> list[Encoding]:
        """One :class:`Encoding` per (ids, lengths) batch. Here, one ``forward`` per batch; a
        model may share work across the batches, with the same results."""
        return [self(ids, lengths, with_kl=with_kl) for ids, lengths in batches]

    def l2_penalty(self, words: Tensor) -> Tensor:
        """Sum of squared weights, the regularizer of the deterministic baselines.

        Word tables count only the rows of ``words`` (the distinct word ids of the batch: lazy
        L2), so that their gradients stay sparse; every other weight counts in full.
        """
        total = torch.zeros((), device=words.device)
        for module in self.modules():
            if isinstance(module, nn.Embedding):
                total = total + module(words).square().sum()
            else:
                total = total + sum(p.square().sum() for p in module.parameters(recurse=False))
        return total


def lookup_real(table: nn.Embedding, ids: Tensor, real: Tensor, fill: float) -> Tensor:
    """[batch, length, dim] rows of ``table`` at the real positions and ``fill`` at padding.

    Only real positions are looked up, so a sparse gradient has one row per real token and
    the optimizer never touches padding.
    """
    out = torch.full((*ids.shape, table.embedding_dim), fill, dtype=table.weight.dtype,
                     device=table.weight.device)
    out[real] = table(ids[real])
    return out


def padding_mask(ids: Tensor, lengths: Tensor) -> Tensor:
    """[batch, length] bool, True at real (non-padding) positions."""
    positions = torch.arange(ids.shape[1], device=ids.device)
    return positions[None, :] < lengths[:, None]
