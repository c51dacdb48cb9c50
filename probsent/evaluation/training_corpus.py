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
from probsent.settings import TrainConfig


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


def trained_with(config: dict[str, Any]) -> TrainConfig | None:
    """The typed, checked settings ``probsent train`` recorded in a model's config, or None for
    a model it did not train."""
    settings = training_settings(config)
    return TrainConfig.from_dict(settings) if settings else None


def resolve_training_file(recorded: str, data_root: str | os.PathLike[str] | None) -> Path | None:
    """The recorded pair file, or, where it is gone (a model directory moved to another
    machine), the file under ``data_root`` that ends with the longest part of the recorded
    path (``/old/place/paraphrase/pairs.tsv.gz`` -> ``DATA/paraphrase/pairs.tsv.gz``)."""
    path = Path(recorded)
    if path.is_file():
        return path
    if data_root is None:
        return None
    parts = path.parts[1:] if path.is_absolute() else path.parts
    for start in range(len(parts)):
        candidate = Path(data_root) / Path(*parts[start:])
        if candidate.is_file():
            return candidate
    return None


def load_training_corpus(config: dict[str, Any], override: str | os.PathLike[str] | None = None,
                         progress: bool = False,
                         data_root: str | os.PathLike[str] | None = None) -> TrainingCorpus:
    """The model's training corpus, read with the settings training used.

    ``override`` replaces the recorded pair file (for a model trained elsewhere); a recorded
    file that is gone is looked for under ``data_root`` (see :func:`resolve_training_file`).
    Never raises for a missing file: the analyses that need the corpus are skipped with ``note``.
    """
    settings = trained_with(config)
    recorded = settings.data if settings is not None else None
    if override is not None:
        path: Path | None = Path(override) if Path(override).is_file() else None
        if path is None:
            return TrainingCorpus(None, str(override), f"training data file given not found: {override}")
    elif not recorded:
        return TrainingCorpus(None, None, "the model's config names no training data file")
    else:
        path = resolve_training_file(recorded, data_root)
        if path is None:
            return TrainingCorpus(None, str(recorded), f"training data file recorded in the model's "
                                                       f"config not found: {recorded}")
    corpus = load_corpus(path, progress=progress)
    moved = f" (recorded as {recorded}, not found there)" if override is None and str(path) != recorded else ""
    return TrainingCorpus(corpus, str(path), f"{corpus.num_pairs:,} training pairs from {path}{moved}")
