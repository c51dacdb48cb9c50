"""The scoring path's model: a loaded model's term table where it has one, else the model.

``probsent specificity``, ``probsent explain``, the worker processes and Spark's executors
score with :func:`scoring_model` of what :func:`probsent.load` read (one reader of a model
directory, no torch for WLO on the CPU). A model with per-word entropy terms (WLO) scores through
its :class:`probsent.readouts.word_terms.WordTermTable`, which scores a whole chunk of texts at
once; any other model scores itself. Both offer ``specificity`` (the same scores),
``calibration``, ``percentiles`` and ``path``, read the same way by
:mod:`probsent.readouts.score_readings`.
"""
from __future__ import annotations

import os

from probsent.api import SentenceModel, load, scoring_table
from probsent.model_directory import resolve_model_dir
from probsent.readouts.score_readings import ScoringModel

_LOADED: dict[str, ScoringModel] = {}  # this process's scoring models, by resolved directory


def scoring_model(model: SentenceModel) -> ScoringModel:
    """What scores with ``model``: its term table, or the model itself where it has none."""
    table = scoring_table(model)
    return model if table is None else table


def cached_scoring_model(path: str | os.PathLike[str] | None) -> ScoringModel:
    """The :func:`scoring_model` of the model ``path`` names (as :func:`probsent.load` reads it),
    loaded once per process and directory (None: the shipped model)."""
    key = str(resolve_model_dir(path).resolve())
    if key not in _LOADED:
        _LOADED[key] = scoring_model(load(path))
    return _LOADED[key]
