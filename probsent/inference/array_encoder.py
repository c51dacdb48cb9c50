"""The encoders of WLO, Wordavg and Wordsum as NumPy tables, read from a model directory
without torch (safetensors' NumPy loader), encoding through :mod:`probsent.inference.closed_form`.

:func:`read_array_model` reads a directory of one of those models, or names what is wrong with
it in one line, as the full reader would; it returns None only for a model of another type
(an LSTM), which the full reader (:func:`probsent.model_files.read_model_dir`, with torch) loads.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError
from probsent.inference.arrays import ArrayEncoding, vector_norms
from probsent.inference.closed_form import pooled_encoding, wlo_encoding, wlo_word_terms
from probsent.model_paths import CONFIG
from probsent.model_reading import read_model_config, read_model_parts
from probsent.text.token_ids import COMPILED_SENTENCES

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


def settings_problem(model: dict[str, Any]) -> str | None:
    """What is wrong with config.json's "model" section of a WLO, Wordavg or Wordsum (its
    ``type`` one of MODELS), or None: every setting known to that model and within the range
    training/config.py allows (a test keeps the two equal)."""
    _, _, _, names, optional = MODELS[model["type"]]
    unknown = sorted(set(model) - {"type", "vocab_size"} - set(names))
    if unknown:
        return f"model.{unknown[0]} is not a setting of a {model['type']} model"
    for name in names:
        kind, low, high = LIMITS[name]
        if name not in model and name not in optional:
            return f"model.{name} is missing"
        value = model.get(name, optional.get(name))
        if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
            return f"model.{name} must be {'a number' if kind is float else 'an integer'}, not {value!r}"
        if not (math.isfinite(value) and low <= value <= high):
            return f"model.{name} must be from {low:g} to {high:g}, not {value!r}"
    size = model.get("vocab_size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        return f"model.vocab_size must be a positive integer, not {size!r}"
    return None


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


def read_array_model(path: Path) -> tuple[ArrayEncoder, Vocabulary, dict[str, Any]] | None:
    """The NumPy encoder, vocabulary and config of the model directory ``path``; None where it
    holds a model of another type (an LSTM: the full reader, with torch, reads it). Anything
    wrong with a WLO, Wordavg or Wordsum directory is the one-line error the full reader gives
    (:func:`probsent.model_reading.read_model_parts`, the one check of the files every reader
    uses: regular files only, bounded reads, the weights' header checked against the config
    before anything of the model's size is read, finite float32 weights)."""
    config = read_model_config(path)
    model = config.get("model")
    if not isinstance(model, dict) or model.get("type") not in MODELS:
        return None
    problem = settings_problem(model)
    if problem:
        raise InvalidValueError(f"{path / CONFIG}: {problem}")
    shapes = dict.fromkeys(MODELS[model["type"]][2], (model["vocab_size"], model["dim"]))
    vocab, weights = read_model_parts(path, model, shapes)
    return ArrayEncoder(model, weights), vocab, config
