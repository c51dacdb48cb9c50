"""A torch sentence encoder (an LSTM, or any model being trained or moved to a GPU) behind the
same interface as :class:`probsent.inference.array_encoder.ArrayEncoder`: encodings as NumPy."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from probsent.inference.arrays import ArrayEncoding
from probsent.models.base import SentenceEncoder
from probsent.models.batching import encode_by_length
from probsent.models.registry import with_word_entropy_terms


class TorchEncoder:
    """Encodes with ``module`` (no gradients), in batches of at most ``max_cells`` padded positions."""

    def __init__(self, module: SentenceEncoder, max_cells: int) -> None:
        self.module = module
        self.max_cells = max_cells

    def __getattr__(self, name: str) -> Any:  # type_name, label, probabilistic, dim, start_variance, ...
        return getattr(self.module, name)

    def encode(self, ids: np.ndarray, offsets: np.ndarray, batch_size: int = 256) -> ArrayEncoding:
        """The encodings of the sentences ``ids[offsets[k]:offsets[k + 1]]`` (the module's dtype;
        log|mean| in float64 where the model computes it)."""
        with torch.no_grad():
            enc = encode_by_length(self.module, ids, offsets, np.arange(len(offsets) - 1), batch_size,
                                   max_cells=self.max_cells)
        host = lambda t: None if t is None else t.cpu().numpy()  # noqa: E731
        return ArrayEncoding(host(enc.mean), host(enc.logvar), host(enc.log_abs_mean))

    def with_word_rows(self, rows: tuple[np.ndarray, np.ndarray] | None) -> "TorchEncoder":
        """An encoder whose module reads ids from its vocabulary's size on as the rows of
        ``rows`` (the open vocabulary's classes' scales and translations; None: none), as
        :meth:`probsent.inference.array_encoder.ArrayEncoder.with_word_rows` does: WLO only."""
        if rows is None:
            return self
        if not hasattr(self.module, "with_word_rows"):
            raise TypeError(f"{type(self.module).__name__} has no per-word rows: only a WLO model reads an open vocabulary")
        return TorchEncoder(self.module.with_word_rows(*rows), self.max_cells)

    def weights_version(self) -> tuple:
        """Changes whenever the module's entropy weights change (in place or replaced)."""
        terms = with_word_entropy_terms(self.module, "the closed-form entropy")
        weights = (terms.entropy_weights(), terms.word_shifts())
        return tuple((id(w), w._version, w.device) for w in weights)

    def word_entropy_terms(self) -> np.ndarray:
        """Each word's entropy term in float64 (:meth:`probsent.models.base.WordEntropyTerms.word_entropy_terms`)."""
        with torch.no_grad():
            return with_word_entropy_terms(self.module, "explain").word_entropy_terms(dtype=torch.float64).cpu().numpy()

    def word_shift_norms(self) -> np.ndarray:
        """Each word's ||B_w||, float64."""
        with torch.no_grad():
            return with_word_entropy_terms(self.module, "explain").word_shifts().double().norm(dim=-1).cpu().numpy()


def torch_module(encoder: Any) -> SentenceEncoder:
    """The torch module of an :class:`~probsent.inference.array_encoder.ArrayEncoder` (float32 weights)."""
    from probsent.models.registry import build_model

    return build_model({**encoder.config, "vocab_size": len(next(iter(encoder.weights.values())))},
                       {k: np.asarray(v, dtype=np.float32) for k, v in encoder.weights.items()})
