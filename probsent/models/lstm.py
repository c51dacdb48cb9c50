"""LSTMavg and LSTMGaussian: an LSTM over word vectors, its hidden states averaged."""
from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from probsent import model_descriptions as descriptions
from probsent.gaussian import kl_to_standard_normal
from probsent.models.base import Encoding, SentenceEncoder, lookup_real, padding_mask
from probsent.models.registry import register_model


@register_model
class LSTMAverage(SentenceEncoder):
    """LSTMavg: average of the LSTM's hidden states over the real positions."""

    description = descriptions.LSTMAVG

    def __init__(self, vocab_size: int, dim: int = 50, hidden: int = 100,
                 init_std: float = 0.1) -> None:
        super().__init__(vocab_size, dim=dim, hidden=hidden, init_std=init_std)
        self.dim = hidden
        self.embedding = nn.Embedding(vocab_size, dim, sparse=True)
        nn.init.normal_(self.embedding.weight, std=init_std)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)

    def average_hidden(self, ids: Tensor, lengths: Tensor) -> Tensor:
        """[batch, hidden]: the mean of the hidden states at positions 1..length."""
        words = lookup_real(self.embedding, ids, padding_mask(ids, lengths), 0.0)
        packed = pack_padded_sequence(words, lengths.clamp_min(1).cpu(),
                                      batch_first=True, enforce_sorted=False)
        states, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True,
                                        total_length=ids.shape[1])
        real = padding_mask(ids, lengths).unsqueeze(-1)
        return (states * real).sum(1) / lengths.clamp_min(1).unsqueeze(-1).to(states.dtype)

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:
        return Encoding(self.average_hidden(ids, lengths))


@register_model
class LSTMGaussian(LSTMAverage):
    """LSTMGaussian: LSTMavg followed by two linear maps to a diagonal Gaussian's mean and
    log-variance."""

    description = descriptions.LSTMGAUSSIAN

    def __init__(self, vocab_size: int, dim: int = 50, hidden: int = 100,
                 init_std: float = 0.1, mean_init_gain: float = 1.0) -> None:
        super().__init__(vocab_size, dim=dim, hidden=hidden, init_std=init_std)
        self.hyper["mean_init_gain"] = mean_init_gain
        self.to_mean = nn.Linear(hidden, hidden)
        self.to_logvar = nn.Linear(hidden, hidden)
        # With PyTorch's default initialization every sentence starts near N(0, I): the means
        # differ by a few hundredths, so partner and negative score almost alike, and on
        # loose pairs training stays at that collapsed point. A larger gain spreads the
        # initial means out (the averaged LSTM states are small).
        with torch.no_grad():
            self.to_mean.weight.mul_(mean_init_gain)

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:
        pooled = self.average_hidden(ids, lengths)
        mean, logvar = self.to_mean(pooled), self.to_logvar(pooled)
        kl = kl_to_standard_normal(mean, logvar) if with_kl else None
        return Encoding(mean, logvar, kl)
