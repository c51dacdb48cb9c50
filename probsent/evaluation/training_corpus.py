"""Find and load the corpus a model was trained on (for word counts and sample sentences).

A model trained by ``probsent train`` records its pair file and reading settings in
``config["training"]["config"]``; :func:`probsent.data.corpus.load_corpus` then gives the
same tokenized corpus training used (from its on-disk cache when training ran here).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probsent.data.corpus import PairCorpus, load_corpus


@dataclass
class TrainingCorpus:
    """The loaded corpus, or ``None`` with the reason in ``note``."""

    corpus: PairCorpus | None
    path: str | None
    note: str


def training_settings(config: dict[str, Any]) -> dict[str, Any]:
    """``config["training"]["config"]`` of a model, or ``{}`` if it has none."""
    training = config.get("training") or {}
    settings = training.get("config") if isinstance(training, dict) else None
    return settings if isinstance(settings, dict) else {}


def load_training_corpus(config: dict[str, Any], override: str | os.PathLike[str] | None = None,
                         progress: bool = False) -> TrainingCorpus:
    """The model's training corpus, read with the settings training used.

    ``override`` replaces the recorded pair file (for a model trained elsewhere). Never
    raises for a missing file: the analyses that need the corpus are skipped with ``note``.
    """
    settings = training_settings(config)
    recorded = settings.get("data")
    path = override if override is not None else recorded
    if not path:
        return TrainingCorpus(None, None, "the model's config names no training data file")
    if not Path(path).is_file():
        origin = "given" if override is not None else "recorded in the model's config"
        return TrainingCorpus(None, str(path), f"training data file {origin} not found: {path}")
    max_tokens = settings.get("max_tokens") or 100
    corpus = load_corpus(path, settings.get("max_pairs"), int(max_tokens), progress=progress)
    return TrainingCorpus(corpus, str(path), f"{corpus.num_pairs:,} training pairs from {path}")
