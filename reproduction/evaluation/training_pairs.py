"""Find and load the pairs a model was trained on (for word counts and sample sentences).

A model trained by ``probsent train`` records its pair file and reading settings in
``config["training"]["config"]``; :func:`probsent.data.mapped_pairs.load_mapped_pairs` then gives the
same tokenized pairs training used (from its on-disk cache when training ran here).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probsent.training import MappedPairs, load_mapped_pairs
from probsent.training import TrainConfig


@dataclass
class TrainingPairs:
    """The loaded pairs, or ``None`` with the reason in ``note``."""

    pairs: MappedPairs | None
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
    """The recorded pair file or directory of parts, or, where it is gone (a model directory moved
    to another machine), the one under ``data_root`` that ends with the longest part of the
    recorded path (``/old/place/paraphrase/pairs.tsv.gz`` -> ``DATA/paraphrase/pairs.tsv.gz``)."""
    path = Path(recorded)
    if path.exists():
        return path
    if data_root is None:
        return None
    parts = path.parts[1:] if path.is_absolute() else path.parts
    for start in range(len(parts)):
        candidate = Path(data_root) / Path(*parts[start:])
        if candidate.exists():
            return candidate
    return None


def load_training_pairs(config: dict[str, Any], override: str | os.PathLike[str] | None = None,
                         progress: bool = False,
                         data_root: str | os.PathLike[str] | None = None) -> TrainingPairs:
    """The model's training pairs, read as training read it: its ``--data`` (one file, several
    joined by ``os.pathsep`` or a directory of parts), ``--columns`` and ``--max-pairs``.

    ``override`` replaces the recorded pairs (for a model trained elsewhere); a recorded file that
    is gone is looked for under ``data_root`` (see :func:`resolve_training_file`). Never raises
    for missing pairs: the analyses that need the pairs are skipped with ``note``.
    """
    settings = trained_with(config)
    recorded = settings.data if settings is not None else None
    if override is not None:
        entries = str(override).split(os.pathsep)
        found: list[Path | None] = [Path(e) if Path(e).exists() else None for e in entries]
        what = "training data given"
    elif not recorded:
        return TrainingPairs(None, None, "the model's config names no training data file")
    else:
        entries = recorded.split(os.pathsep)
        found = [resolve_training_file(e, data_root) for e in entries]
        what = "training data recorded in the model's config"
    if None in found:
        missing = entries[found.index(None)]
        return TrainingPairs(None, str(override or recorded), f"{what} not found: {missing}")
    path = os.pathsep.join(str(p) for p in found)
    pairs = load_mapped_pairs(path, settings.max_pairs if settings else None, progress=progress,
                        columns=settings.columns if settings else None)
    moved = f" (recorded as {recorded}, not found there)" if override is None and path != recorded else ""
    return TrainingPairs(pairs, path, f"{pairs.num_pairs:,} training pairs from {path}{moved}")
