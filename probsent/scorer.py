"""The scoring path's model: a loaded model's term table where it has one, else the model.

``probsent specificity``, ``probsent explain``, the worker processes and Spark's executors
score with :func:`scorer` of what :func:`probsent.load` read (one reader of a model directory,
no torch for WLO on the CPU). A model with per-word entropy terms (WLO) scores through its
:class:`probsent.word_terms.WordTermTable`, which scores a whole chunk of texts at once; any
other model scores itself. Both offer ``specificity``, ``require_calibration`` and ``path``,
and give the same scores.
"""
from __future__ import annotations

import os
from typing import Union

from probsent.api import SentenceModel, load, scoring_table
from probsent.model_directory import resolve_model_dir
from probsent.word_terms import WordTermTable

Scorer = Union[WordTermTable, SentenceModel]

_SCORERS: dict[str, Scorer] = {}  # this process's scorers, by resolved directory


def scorer(model: SentenceModel) -> Scorer:
    """What scores with ``model``: its term table, or the model itself where it has none."""
    table = scoring_table(model)
    return model if table is None else table


def cached_scorer(path: str | os.PathLike[str] | None) -> Scorer:
    """The :func:`scorer` of the model ``path`` names (as :func:`probsent.load` reads it), loaded
    once per process and directory (None: the shipped model)."""
    key = str(resolve_model_dir(path).resolve())
    if key not in _SCORERS:
        _SCORERS[key] = scorer(load(path))
    return _SCORERS[key]
