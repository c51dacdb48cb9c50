"""``--rarity-anchor``: a penalty that keeps each word's entropy term near its rarity target (part ``rarity_anchor``).

    R = w / B sum_{w in the step's distinct words} 1/2 (T_w - t_w)^2

T_w = sum_d log|A_w,d| is the word's entropy term, w the ``--rarity-anchor`` weight, B the pairs of
the step and t_w the term ``--rarity-init`` starts the word at (:func:`rarity_anchor_targets`), read
from the words' log training counts or, with ``--rarity-from FILE``, from the log frequencies the
file lists (:func:`read_log_frequencies`).
Applies with ``--rarity-anchor`` above 0, to a model with per-word entropy terms.

Reference: this project's recipe study (docs/EXPERIMENTS.md); not in the paper.
"""
from __future__ import annotations

import math
import os

import numpy as np
import torch
from torch import Tensor

from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.errors import InvalidValueError, MissingFileError
from probsent.files.untrusted import read_regular_file
from probsent.gaussian import log_abs_scale
from probsent.models import with_word_entropy_terms
from probsent.training.losses.base import Loss, LossSetup, TrainingStep, register_loss


def rarity_terms(counts: np.ndarray, weight: float, log_frequencies: np.ndarray | None = None) -> np.ndarray:
    """``--rarity-init``'s shift of each word's entropy term: ``weight`` x (log frequency - the
    average token's), so a typical token adds nothing, a frequent word makes a sentence more
    general and a rare one more specific. The log frequency is the log training count, or
    ``log_frequencies`` (``--rarity-from``); the average token is weighted by the training counts."""
    log_counts = np.log(np.maximum(counts, 1).astype(np.float64)) if log_frequencies is None else log_frequencies
    average = float(np.sum(counts * log_counts) / max(1, int(np.sum(counts))))
    return (weight * (log_counts - average)).astype(np.float32)


def rarity_anchor_targets(counts: np.ndarray, rarity_init: float, dim: int, scale_init_mean: float,
                          log_frequencies: np.ndarray | None = None) -> np.ndarray:
    """t_w of every word (float64): the term ``--rarity-init`` starts it at, less the
    initialization noise: dim x log|scale_init_mean| plus its rarity term."""
    start = dim * float(log_abs_scale(np.float64(scale_init_mean)))
    return rarity_terms(counts, rarity_init, log_frequencies).astype(np.float64) + start


MAX_WORD_LIST_BYTES = 1 << 30  # a --rarity-from list of every word of a 10-million-word vocabulary fits


def read_log_frequencies(path: str | os.PathLike[str], vocab: Vocabulary, counts: np.ndarray) -> np.ndarray:
    """``--rarity-from``'s log frequency of every vocabulary word (float64): the file's value for a
    word it lists (``word<TAB>log frequency`` a line, ``#`` lines skipped; ``<unk>`` too), the log
    training count for one it does not (``<unk>``'s: the rarest kept word's). A bad line is a
    one-line error naming the file and line."""
    try:  # a regular file of bounded size: a FIFO or a device is refused, not waited on
        lines = read_regular_file(path, MAX_WORD_LIST_BYTES, "--rarity-from word list").decode("utf-8").split("\n")
    except MissingFileError:
        raise MissingFileError(f"--rarity-from: no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise InvalidValueError(f"--rarity-from {path}: cannot be read as UTF-8 text ({exc})") from None
    log_frequencies = np.log(np.maximum(counts, 1).astype(np.float64))
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        word, _, value = line.partition("\t")
        try:
            log_frequency = float(value)
        except ValueError:
            log_frequency = math.nan
        if not math.isfinite(log_frequency) or abs(log_frequency) > 1e6:
            raise InvalidValueError(f"{path}:{number}: expected word<TAB>log frequency (a finite number), "
                                    f"got {line[:80]!r}")
        at = 0 if word == UNKNOWN else vocab.index.get(word)
        if at is not None:
            log_frequencies[at] = log_frequency
    return log_frequencies


@register_loss
class RarityAnchor(Loss):
    """R above; ``targets`` holds t_w of every vocabulary word."""

    name = "rarity_anchor"

    def __init__(self, weight: float, targets: np.ndarray) -> None:
        self.weight = weight
        self.targets = targets

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "RarityAnchor | None":
        config = setup.config
        if not config.rarity_anchor:
            return None
        with_word_entropy_terms(setup.encoder, "--rarity-anchor")  # refused here for a model without terms
        return cls(config.rarity_anchor, rarity_anchor_targets(setup.word_counts, config.rarity_init, config.dim,
                                                               config.scale_init_mean, setup.log_frequencies))

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        terms = with_word_entropy_terms(step.encoder, "--rarity-anchor").word_entropy_terms(step.words)
        targets = torch.from_numpy(self.targets).to(terms)[step.words]
        return {"rarity_anchor": self.weight * 0.5 * ((terms - targets) ** 2).sum() / step.pairs}
