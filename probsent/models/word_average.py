"""Wordavg and Wordsum: a sentence is the average or the sum of its word vectors."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from probsent import model_descriptions as descriptions
from probsent.models.base import Encoding, SentenceEncoder, lookup_real, padding_mask
from probsent.models.registry import register_model


class WordPooling(SentenceEncoder):
    """Bag-of-words baseline: pool (average or sum) the word vectors of a sentence."""

    pooling = "mean"

    def __init__(self, vocab_size: int, dim: int = 50, init_std: float = 0.1) -> None:
        super().__init__(vocab_size, dim=dim, init_std=init_std)
        self.dim = dim
        self.embedding = nn.Embedding(vocab_size, dim, sparse=True)
        nn.init.normal_(self.embedding.weight, std=init_std)

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:
        total = lookup_real(self.embedding, ids, padding_mask(ids, lengths), 0.0).sum(1)
        if self.pooling == "mean":
            total = total / lengths.clamp_min(1).unsqueeze(-1).to(total.dtype)
        return Encoding(total)


@register_model
class WordAverage(WordPooling):
    """Wordavg: the average of the word vectors."""

    description = descriptions.WORDAVG
    pooling = "mean"


@register_model
class WordSum(WordPooling):
    """Wordsum: the sum of the word vectors (its norm grows with length and rare words)."""

    description = descriptions.WORDSUM
    pooling = "sum"
