"""Turning many variable-length sentences into few, tightly padded batches."""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import Tensor

from probsent.models.base import Encoding, SentenceEncoder


def pad_batch(ids: np.ndarray, offsets: np.ndarray, sentences: np.ndarray) -> tuple[Tensor, Tensor]:
    """Padded [len(sentences), max length] id tensor (padding = 0) and the lengths, where
    sentence k is ``ids[offsets[k]:offsets[k + 1]]``."""
    starts = offsets[sentences]
    lengths = offsets[sentences + 1] - starts
    width = max(int(lengths.max()), 1) if len(sentences) else 1
    positions = starts[:, None] + np.arange(width)[None, :]
    real = np.arange(width)[None, :] < lengths[:, None]
    if len(ids):
        padded = np.where(real, ids[np.minimum(positions, len(ids) - 1)], 0)
    else:
        padded = np.zeros(positions.shape, dtype=np.int64)
    return torch.from_numpy(padded), torch.from_numpy(lengths)


def encode_by_length(encoder: SentenceEncoder, ids: np.ndarray, offsets: np.ndarray,
                     sentences: np.ndarray, batch_size: int, with_kl: bool = False,
                     transform: Callable[[Tensor, Tensor], Tensor] | None = None,
                     max_cells: int | None = None) -> Encoding:
    """Encode ``sentences`` in batches of similar length and return them in the given order.

    Sorting by length keeps padding (and so wasted work) small: one long sentence no longer
    pads a whole batch. ``transform(ids, lengths)`` may rewrite each padded batch (word-order
    scrambling during training), on the CPU; the batches then go where the encoder is. With
    ``max_cells``, a batch also holds at most that many padded positions (rows x its longest
    length), or one sentence: long sentences then come in smaller batches. ``with_kl`` is
    the encoder's (True: the paper's prior).
    """
    lengths = offsets[sentences + 1] - offsets[sentences]
    order = np.argsort(lengths, kind="stable")
    device = encoder.device
    batches = []
    start = 0
    while start < len(order):
        end = min(start + batch_size, len(order))
        if max_cells is not None:  # lengths increase along ``order``: the last row is the longest
            end = min(end, start + max(1, max_cells // max(int(lengths[order[end - 1]]), 1)))
        batch, batch_lengths = pad_batch(ids, offsets, sentences[order[start:end]])
        if transform is not None:
            batch = transform(batch, batch_lengths)
        batches.append((batch.to(device), batch_lengths.to(device)))
        start = end
    parts = encoder.encode_batches(batches, with_kl=with_kl)
    if not parts:
        empty = torch.zeros(0, encoder.dim, device=device)
        return Encoding(empty, empty.clone() if encoder.probabilistic else None)
    join = lambda name: None if getattr(parts[0], name) is None else torch.cat([getattr(p, name) for p in parts])  # noqa: E731
    inverse = torch.from_numpy(np.argsort(order, kind="stable")).to(device)
    return Encoding(join("mean"), join("logvar"), join("kl"), join("log_abs_mean")).index(inverse)
