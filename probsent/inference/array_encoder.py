"""The encoders of WLO, Wordavg and Wordsum as NumPy tables, without torch, encoding through
:mod:`probsent.inference.closed_form`; their weights come from
:func:`probsent.model_directory.read_model`, what each model is from its description
(:mod:`probsent.model_descriptions`).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from probsent.inference.arrays import ArrayEncoding, vector_norms
from probsent.inference.closed_form import pooled_encoding, wlo_encoding, wlo_word_terms
from probsent.model_descriptions import DESCRIPTIONS
from probsent.text.token_ids import COMPILED_SENTENCES

# Each batch's work arrays hold about this many float64 numbers (positions x dim), or one sentence.
MAX_BATCH_NUMBERS = 1 << 20
NUMPY_TYPES = ("wlo", "wordavg", "wordsum")  # the model types this encoder computes


class ArrayEncoder:
    """A WLO, Wordavg or Wordsum model (``config``: its config.json "model" settings, checked;
    its type one of NUMPY_TYPES) as NumPy weights [vocab, dim] (computed in float64).
    Immutable, thread-safe."""

    def __init__(self, config: dict[str, Any], weights: dict[str, np.ndarray]) -> None:
        described = DESCRIPTIONS[config["type"]]
        self.type_name, self.label, self.probabilistic = described.name, described.label, described.probabilistic
        self.config = {**described.settings, **config}
        self.dim = int(self.config["dim"])
        self.start_variance = float(self.config.get("start_variance", 1.0))
        self.has_word_entropy_terms = described.word_entropy_terms
        self.weights = weights  # the vocabulary's rows
        self._open_rows: dict[str, np.ndarray] | None = None  # with_word_rows: the vocabulary's rows, then the classes'
        self._tables: tuple[np.ndarray, np.ndarray] | None = None  # see _scale_tables

    @property
    def _rows(self) -> dict[str, np.ndarray]:
        """What encode reads: the weights, or with_word_rows' rows."""
        return self.weights if self._open_rows is None else self._open_rows

    def with_word_rows(self, rows: tuple[np.ndarray, np.ndarray] | None) -> "ArrayEncoder":
        """A WLO encoder that reads ids from ``len(vocabulary)`` on as the rows of ``rows`` (the
        open vocabulary's classes' scales and translations; None: none), sharing the weights."""
        copy = ArrayEncoder.__new__(ArrayEncoder)
        copy.__dict__.update(self.__dict__)
        copy._tables = None
        copy._open_rows = None if rows is None else {
            "scale.weight": np.concatenate([self.weights["scale.weight"], rows[0].astype(self.weights["scale.weight"].dtype)]),
            "shift.weight": np.concatenate([self.weights["shift.weight"], rows[1].astype(self.weights["shift.weight"].dtype)])}
        return copy

    def __repr__(self) -> str:
        return f"ArrayEncoder({self.label}, dim={self.dim}, vocabulary={len(next(iter(self.weights.values())))})"

    def encode(self, ids: np.ndarray, offsets: np.ndarray, batch_size: int = 256) -> ArrayEncoding:
        """The encodings of the sentences ``ids[offsets[k]:offsets[k + 1]]``, in float64: at least
        COMPILED_SENTENCES sentences by the compiled twin (:mod:`probsent.inference.compiled_encode`,
        the same numbers within float64's rounding, on all cores) where numba is installed, else in batches of similar length
        whose work arrays stay near MAX_BATCH_NUMBERS numbers (``batch_size`` changes nothing)."""
        count = len(offsets) - 1
        if count >= COMPILED_SENTENCES:
            try:
                from probsent.inference.compiled_encode import compiled_encoding
            except ImportError:  # no numba: the NumPy batches below
                pass
            else:
                return compiled_encoding(self.type_name, self._rows, ids, offsets, self.start_variance,
                                         self._scale_tables())
        mean = np.zeros((count, self.dim))
        logvar = np.zeros((count, self.dim)) if self.probabilistic else None
        log_abs_mean = np.full((count, self.dim), -np.inf) if self.probabilistic else None
        for rows, padded, lengths in padded_batches(ids, offsets, max(1, MAX_BATCH_NUMBERS // self.dim)):
            part = self._encode_padded(padded, lengths)
            mean[rows] = part.mean
            if logvar is not None:
                logvar[rows], log_abs_mean[rows] = part.logvar, part.log_abs_mean
        return ArrayEncoding(mean, logvar, log_abs_mean)

    def _scale_tables(self) -> tuple[np.ndarray, np.ndarray] | None:
        """WLO: the compiled encoder's tables of the scales (made on first use); None otherwise."""
        if self.type_name != "wlo":
            return None
        if self._tables is None:
            from probsent.inference.compiled_encode import scale_tables

            self._tables = scale_tables(self._rows["scale.weight"])
        return self._tables

    def _encode_padded(self, padded: np.ndarray, lengths: np.ndarray) -> ArrayEncoding:
        padded = padded.T  # position-major: the sums and products along axis 0 run over contiguous rows
        if self.type_name == "wlo":
            return wlo_encoding(self._rows["scale.weight"][padded], self._rows["shift.weight"][padded],
                                lengths, self.start_variance)
        return pooled_encoding(self._rows["embedding.weight"][padded], lengths, self.type_name == "wordavg")

    def weights_version(self) -> tuple:
        """The weights never change."""
        return ()

    def word_entropy_terms(self) -> np.ndarray:
        """WLO: each word's term sum_d log|A_w,d| of a sentence's entropy, float64."""
        return wlo_word_terms(self.weights["scale.weight"])

    def word_shift_norms(self) -> np.ndarray:
        """WLO: each word's ||B_w|| (how far it moves the mean), float64."""
        return vector_norms(self.weights["shift.weight"])


def padded_batches(ids: np.ndarray, offsets: np.ndarray,
                   max_positions: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rows, padded ids [rows, width], lengths) for the sentences sorted by length, each batch
    at most ``max_positions`` padded positions (or one sentence); padding is id 0."""
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    widths = np.maximum(lengths[order], 1)  # increasing
    start = 0
    while start < len(order):
        window = widths[start:start + max_positions]  # a batch never holds more rows than this
        cost = np.arange(1, len(window) + 1) * window  # positions of the batch ending at each row
        end = start + max(1, int(np.searchsorted(cost, max_positions, side="right")))
        rows = order[start:end]
        width = max(int(lengths[rows[-1]]), 1)
        positions = offsets[rows][:, None] + np.arange(width)[None, :]
        real = np.arange(width)[None, :] < lengths[rows][:, None]
        padded = np.where(real, ids[np.minimum(positions, max(len(ids) - 1, 0))], 0) if len(ids) else \
            np.zeros(positions.shape, dtype=np.int64)
        yield rows, padded, lengths[rows]
        start = end
