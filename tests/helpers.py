"""Shared test utilities: where the shared data lives, tiny corpora."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import torch

from probsent.api import SentenceModel
from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.models import build_model

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
PAIRS = DATA / "paraphrase" / "pairs.tsv.gz"


def require_data() -> Path:
    """The shared data directory, or skip the test."""
    if not PAIRS.is_file():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


def slice_of_pairs(path: Path, count: int, start: int = 0, stride: int = 1) -> Path:
    """Write ``count`` lines of the shared pairs (every ``stride``-th line from ``start``) to ``path``."""
    require_data()
    written = 0
    with gzip.open(PAIRS, "rt", encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for number, line in enumerate(source):
            if written >= count:
                break
            if number >= start and (number - start) % stride == 0:
                out.write(line)
                written += 1
    return path


TOY_PAIRS = [
    ("a man is playing a guitar .", "a person plays the guitar ."),
    ("the cat sat on the mat", "a cat is sitting on a mat"),
    ("two dogs run in the park", "dogs are running outside"),
    ("she bought 3 apples for $ 2", "she paid two dollars for three apples"),
    ("it is raining", "rain is falling"),
    ("the president spoke to congress on tuesday", "on tuesday the president addressed congress"),
    ("a child eats an ice cream", "a kid is eating ice cream"),
    ("the stock market fell 5 %", "stocks dropped by five percent"),
]


def write_toy_pairs(path: Path, repeat: int = 25) -> Path:
    """A small, well-formed pair file."""
    with open(path, "w", encoding="utf-8") as out:
        for _ in range(repeat):
            for a, b in TOY_PAIRS:
                out.write(f"{a}\t{b}\ttoy\n")
    return path


TINY_WORDS = "the a cat dog sat on mat ran in park . , man woman plays guitar 3 apples".split()


def tiny_model(kind: str, seed: int = 0) -> SentenceModel:
    """A randomly initialized model of type ``kind`` (dim 8) over :data:`TINY_WORDS`."""
    torch.manual_seed(seed)
    vocab = Vocabulary([UNKNOWN] + TINY_WORDS)
    settings = {"type": kind, "vocab_size": len(vocab), "dim": 8}
    if kind == "wlo":
        settings.update(scale_init_std=0.3, shift_init_std=0.5)
    if kind.startswith("lstm"):
        settings["hidden"] = 6
    return SentenceModel(build_model(settings), vocab)


def wlo_specificity_reference(model, sentences: list[str]) -> list[float]:
    """Minus the entropy of each sentence's WLO Gaussian, from its closed form in float64:
    k/2 log(2 pi e) (the prior N(0, I)) plus sum_d log|A_w,d| for every token (independent of
    the encoder's batched forward pass)."""
    import math

    import numpy as np

    from probsent.tokenize import tokenize

    scales = model.encoder.scale.weight.detach().double().numpy()
    terms = np.log(np.abs(scales)).sum(axis=1)
    prior = 0.5 * scales.shape[1] * math.log(2 * math.pi * math.e)
    index = model.vocab.index
    return [-(prior + sum(terms[index.get(token, 0)] for token in tokenize(s))) for s in sentences]
