"""Encodings as NumPy arrays, and the saturation of values beyond float32's range."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probsent.gaussian import entropy

FLOAT32_MAX = float(np.finfo(np.float32).max)
FLOAT32_SMALLEST = np.float32(np.finfo(np.float32).smallest_subnormal)  # the smallest positive float32


def saturated(values: np.ndarray) -> np.ndarray:
    """``values`` as float32, every value beyond float32's range saturated at +-FLOAT32_MAX.

    A non-number is 0 * an overflowed factor (WLO's mean of a sentence whose shifts sum to
    exactly zero, scaled by an overflowing product), whose value is 0.
    """
    wide = np.array(values, dtype=np.float64)  # a copy, changed in place below (no temporaries)
    np.nan_to_num(wide, copy=False, nan=0.0, posinf=FLOAT32_MAX, neginf=-FLOAT32_MAX)
    np.clip(wide, -FLOAT32_MAX, FLOAT32_MAX, out=wide)
    return wide.astype(np.float32)


def saturated_variance(logvar: np.ndarray) -> np.ndarray:
    """exp(``logvar``) as float32, saturated at both ends: beyond float32's range at
    FLOAT32_MAX, and below its smallest positive number at that number (1.4e-45), so that a
    variance is never 0 (a long document's can be e^-1000) and is accepted back as a variance."""
    with np.errstate(over="ignore", under="ignore"):
        variance = saturated(np.exp(np.asarray(logvar, dtype=np.float64)))
    return np.where(np.isnan(variance), variance, np.maximum(variance, FLOAT32_SMALLEST))


@dataclass
class ArrayEncoding:
    """Encoded sentences, [n, dim] each: the mean (the vector of a deterministic model), the
    log-variance (None for deterministic models) and, where the model computes it, log|mean|
    in float64, exact however far the mean is beyond the range of its dtype (WLO)."""

    mean: np.ndarray
    logvar: np.ndarray | None = None
    log_abs_mean: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.mean)

    def rows(self, index) -> "ArrayEncoding":  # noqa: ANN001 - any NumPy index
        """The encodings at ``index``."""
        pick = lambda a: None if a is None else a[index]  # noqa: E731
        return ArrayEncoding(self.mean[index], pick(self.logvar), pick(self.log_abs_mean))

    def saturated(self) -> "ArrayEncoding":
        """Mean and log-variance as float32, saturated (:func:`saturated`); log|mean| kept."""
        return ArrayEncoding(saturated(self.mean), None if self.logvar is None else saturated(self.logvar),
                             self.log_abs_mean)

    @staticmethod
    def joined(parts: list["ArrayEncoding"]) -> "ArrayEncoding":
        """The parts' rows one after another (at least one part)."""
        join = lambda name: None if getattr(parts[0], name) is None else np.concatenate(  # noqa: E731
            [getattr(p, name) for p in parts])
        return ArrayEncoding(join("mean"), join("logvar"), join("log_abs_mean"))


def unit_means(encoded: ArrayEncoding) -> ArrayEncoding:
    """Each mean scaled to length 1 (a zero mean stays zero) and, for Gaussians, each variance by
    the same factor squared (the same distribution in another unit), saturated: computed from
    log|mean| where the model has it, so exact beyond float32's range."""
    log_abs = encoded.log_abs_mean
    if log_abs is None:
        with np.errstate(divide="ignore"):
            log_abs = np.log(np.abs(encoded.mean.astype(np.float64)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = log_abs.max(-1, initial=-np.inf, keepdims=True)
        top = np.where(np.isinf(top), 0.0, top)
        log_norm = np.log(np.square(np.exp(log_abs - top)).sum(-1, keepdims=True)) / 2 + top
        log_norm = np.where(np.isinf(log_norm), 0.0, log_norm)  # a zero mean: unchanged
        mean = np.sign(encoded.mean) * np.exp(log_abs - log_norm)
    logvar = None if encoded.logvar is None else encoded.logvar.astype(np.float64) - 2.0 * log_norm
    return ArrayEncoding(mean, logvar, log_abs - log_norm).saturated()


def gaussian_entropy(logvar: np.ndarray) -> np.ndarray:
    """The entropy of each diagonal Gaussian (:func:`probsent.gaussian.entropy`), float64."""
    return entropy(np.asarray(logvar, dtype=np.float64))


def vector_norms(vectors: np.ndarray) -> np.ndarray:
    """Each row's Euclidean norm, float64."""
    return np.sqrt(np.square(vectors.astype(np.float64)).sum(-1))
