"""A loaded model as the experiments see it, and encoding of word-id sequences.

:func:`encode_ids` runs a model's encoder on sequences of vocabulary ids, so the analyses
can score training sentences (already tokenized) and single words without re-tokenizing.
:class:`ModelScorer` wraps a :class:`probsent.api.SentenceModel` as both the *scorer* and
the *encoder* of :mod:`reproduction.evaluation.tables`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from probsent.api import SentenceModel, scoring_engine
from probsent.integrations.research_facade import encode_by_length
from probsent.gaussian import entropy as gaussian_entropy
from probsent.models import SentenceEncoder
from probsent.api import tokenize


def encode_ids(encoder: SentenceEncoder, id_lists: Sequence[np.ndarray],
               batch_size: int = 1024) -> tuple[np.ndarray, np.ndarray | None]:
    """Means and log-variances (``None`` for deterministic models), float64, in input order.

    Sequences are batched by length so padding stays small; padding never changes a result.
    """
    lengths = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(id_lists))
    offsets = np.zeros(len(id_lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.concatenate([np.asarray(ids, dtype=np.int64) for ids in id_lists] + [np.zeros(0, np.int64)])
    with torch.no_grad():
        out = encode_by_length(encoder, flat, offsets, np.arange(len(id_lists)), batch_size)
    mean = out.mean.double().numpy()
    return mean, None if out.logvar is None else out.logvar.double().numpy()


def natural_measure(mean: np.ndarray, logvar: np.ndarray | None) -> tuple[str, np.ndarray, np.ndarray]:
    """``(name, values, specificity)``: entropy for Gaussians, norm for vectors.

    Specificity is higher for more specific sentences: minus the entropy, or the norm.
    """
    if logvar is not None:
        values = gaussian_entropy(logvar)
        return "entropy", values, -values
    values = np.linalg.norm(mean, axis=1)
    return "norm", values, values


class ProbabilityScorer:
    """A model's P(specific) as a scorer (the calibration's function of the score and the token
    count; here every sentence is read, none withheld, so that a test set is scored whole)."""

    READINGS = {"probability": "P(specific)"}

    def __init__(self, model: SentenceModel, reading: str = "probability") -> None:
        if reading not in self.READINGS:
            raise ValueError(f"reading must be one of {', '.join(self.READINGS)}, not {reading!r}")
        self.model, self.reading = model, reading
        self.name = self.READINGS[reading]

    def specificity(self, sentences: list[str]) -> np.ndarray:
        """The probability of each sentence."""
        sentences = list(sentences)
        scores = np.asarray(self.model.specificity(sentences), dtype=np.float64).reshape(len(sentences))
        calibration = scoring_engine(self.model).require_calibration()
        counts = scoring_engine(self.model).token_counts(sentences)
        percentiles = None
        if "percentile" in calibration.features:  # a calibration file of an earlier probsent
            percentiles = scoring_engine(self.model).require_percentiles().percentile(scores, counts)
        return calibration.probability(scores, counts, percentiles)


class ModelScorer:
    """A :class:`SentenceModel` with a display name, usable as scorer and encoder."""

    def __init__(self, name: str, model: SentenceModel) -> None:
        self.name = name
        self.model = model
        self.probabilistic = bool(model.probabilistic)

    def specificity(self, sentences: list[str]) -> np.ndarray:
        """Minus the entropy (probabilistic models) or the vector norm."""
        return np.asarray(self.model.specificity(list(sentences)), dtype=np.float64).reshape(len(sentences))

    def encode(self, sentences: list[str]):
        """The model's own :meth:`SentenceModel.encode`."""
        return self.model.encode(list(sentences))

    def encode_log_variance(self, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Means and log-variances: no underflow, however specific a sentence is."""
        ids = [self.model.vocab.ids(tokenize(s)) for s in sentences]
        mean, logvar = encode_ids(self.model.encoder, ids)
        if logvar is None:
            raise TypeError(f"{self.name} is deterministic: it has no variances")
        return mean, logvar
