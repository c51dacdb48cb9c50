"""The encoders of WLO, Wordavg and Wordsum as NumPy tables, read from a model directory
without torch (safetensors' NumPy loader), encoding through :mod:`probsent.inference.closed_form`.

:func:`read_array_model` accepts a complete, sound directory of one of those models and
returns None for anything else: the full reader (:func:`probsent.model_files.read_model_dir`,
with torch) then loads it or names what is wrong.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from probsent.data.vocab import Vocabulary
from probsent.inference.arrays import ArrayEncoding
from probsent.inference.closed_form import pooled_encoding, wlo_encoding, wlo_word_terms
from probsent.model_paths import FORMAT_NAME, FORMAT_VERSION
from probsent.model_reading import read_config, read_vocabulary, read_weights, weights_header
from probsent.text.token_ids import COMPILED_BATCH
from probsent.untrusted_files import UntrustedFileError

# Each batch's work arrays hold about this many float64 numbers (positions x dim), or one sentence.
MAX_BATCH_NUMBERS = 1 << 20

# What each NumPy model is: (label, probabilistic, its weights, its settings with their types and
# ranges as training/config.py allows them (a test keeps the two in step), optional settings'
# defaults).
LIMITS = {"dim": (int, 1, 4096), "scale_init_mean": (float, -1e3, 1e3), "scale_init_std": (float, 0.0, 1e3),
           "shift_init_std": (float, 0.0, 1e3), "start_variance": (float, 1e-30, 1e6), "init_std": (float, 0.0, 1e3)}
MODELS = {
    "wlo": ("WLO", True, ("scale.weight", "shift.weight"),
            ("dim", "scale_init_mean", "scale_init_std", "shift_init_std", "start_variance"), {"start_variance": 1.0}),
    "wordavg": ("Wordavg", False, ("embedding.weight",), ("dim", "init_std"), {}),
    "wordsum": ("Wordsum", False, ("embedding.weight",), ("dim", "init_std"), {}),
}


def plain_settings(model: Any, types: tuple[str, ...] = tuple(MODELS)) -> bool:
    """Whether config.json's "model" section is one of ``types``' with every setting in range."""
    if not isinstance(model, dict) or model.get("type") not in types:
        return False
    _, _, _, names, optional = MODELS[model["type"]]
    if not set(names) - set(optional) <= set(model) - {"type", "vocab_size"} <= set(names):
        return False
    for name in names:
        kind, low, high = LIMITS[name]
        value = model.get(name, optional.get(name))
        if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
            return False
        if not (math.isfinite(value) and low <= value <= high):
            return False
    return isinstance(model.get("vocab_size"), int) and not isinstance(model["vocab_size"], bool)


class ArrayEncoder:
    """A WLO, Wordavg or Wordsum model as NumPy weights [vocab, dim] (float16 or float32 as
    stored; computed in float64). Immutable, thread-safe."""

    def __init__(self, config: dict[str, Any], weights: dict[str, np.ndarray]) -> None:
        self.type_name = config["type"]
        self.label, self.probabilistic, _, _, optional = MODELS[self.type_name]
        self.config = dict(config)
        self.dim = int(config["dim"])
        self.start_variance = float(config.get("start_variance", optional.get("start_variance", 1.0)))
        self.has_word_entropy_terms = self.type_name == "wlo"
        self.weights = weights
        self._tables: tuple[np.ndarray, np.ndarray] | None = None  # see _scale_tables

    def __repr__(self) -> str:
        return f"ArrayEncoder({self.label}, dim={self.dim}, vocabulary={len(next(iter(self.weights.values())))})"

    def encode(self, ids: np.ndarray, offsets: np.ndarray, batch_size: int = 256) -> ArrayEncoding:
        """The encodings of the sentences ``ids[offsets[k]:offsets[k + 1]]``, in float64: at least
        COMPILED_BATCH sentences by the compiled twin (:mod:`probsent.inference.compiled_encode`,
        the same numbers within float64's rounding, on all cores) where numba is installed, else in batches of similar length
        whose work arrays stay near MAX_BATCH_NUMBERS numbers (``batch_size`` changes nothing)."""
        count = len(offsets) - 1
        if count >= COMPILED_BATCH:
            try:
                from probsent.inference.compiled_encode import compiled_encoding
            except ImportError:  # no numba: the NumPy batches below
                pass
            else:
                return compiled_encoding(self.type_name, self.weights, ids, offsets, self.start_variance,
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

            self._tables = scale_tables(self.weights["scale.weight"])
        return self._tables

    def _encode_padded(self, padded: np.ndarray, lengths: np.ndarray) -> ArrayEncoding:
        padded = padded.T  # position-major: the sums and products along axis 0 run over contiguous rows
        if self.type_name == "wlo":
            return wlo_encoding(self.weights["scale.weight"][padded], self.weights["shift.weight"][padded],
                                lengths, self.start_variance)
        return pooled_encoding(self.weights["embedding.weight"][padded], lengths, self.type_name == "wordavg")

    def weights_version(self) -> tuple:
        """The weights never change."""
        return ()

    def word_entropy_terms(self) -> np.ndarray:
        """WLO: each word's term sum_d log|A_w,d| of a sentence's entropy, float64."""
        return wlo_word_terms(self.weights["scale.weight"])

    def word_shift_norms(self) -> np.ndarray:
        """WLO: each word's ||B_w|| (how far it moves the mean), float64."""
        shift = self.weights["shift.weight"].astype(np.float32)
        return np.sqrt(np.square(shift).sum(-1, dtype=np.float32)).astype(np.float64)


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


def read_array_model(path: Path) -> tuple[ArrayEncoder, Vocabulary, dict[str, Any]] | None:
    """The NumPy encoder, vocabulary and config of the model directory ``path``; None where it is
    anything but a complete, sound WLO, Wordavg or Wordsum directory (the full reader decides).
    Every file is read as untrusted input (:mod:`probsent.model_reading`: regular files only,
    bounded reads, the weights' header checked against the config before anything of the
    model's size is read); such a failure is the one-line error the full reader would give."""
    try:
        config = read_config(path)
        if (not isinstance(config, dict) or config.get("format") != FORMAT_NAME
                or config.get("format_version") != FORMAT_VERSION or not plain_settings(config.get("model"))):
            return None
        model = config["model"]
        shapes = dict.fromkeys(MODELS[model["type"]][2], (model["vocab_size"], model["dim"]))
        weights_header(path, shapes, model["type"])  # before the vocabulary or any table is read
        vocab = read_vocabulary(path, model["vocab_size"])
        weights = read_weights(path, shapes, model["type"])
    except UntrustedFileError:  # a FIFO, a device, too large, unparsable: the full reader says the same
        raise
    except Exception:  # noqa: BLE001 - whatever it is, the full reader names it
        return None
    model = config["model"]
    if model["vocab_size"] != len(vocab) or set(weights) != set(MODELS[model["type"]][2]):
        return None
    for tensor in weights.values():
        if tensor.shape != (len(vocab), model["dim"]) or tensor.dtype.kind != "f" or not np.isfinite(tensor).all():
            return None
    # as the torch model computes: float32 weights (a float16 file holds the same values)
    return ArrayEncoder(model, {k: v.astype(np.float32) for k, v in weights.items()}), vocab, config
