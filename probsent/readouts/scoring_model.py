"""The scoring path's model: a torch-free term table where the model allows, else the full model.

``probsent specificity``, ``probsent explain``, the worker processes and Spark's executors
score with what :func:`load_scoring_model` returns. A WLO model directory becomes a
:class:`probsent.readouts.word_terms.WordTermTable`, read with NumPy: no torch import, so a process
that scores is ready in a fraction of a second. Any other model (or a directory the
term-table reader does not accept) is loaded by :func:`probsent.api.load`, with torch; both
offer ``specificity`` (the same scores), ``calibration``, ``percentiles`` and ``path``, read the
same way by :mod:`probsent.readouts.score_readings`.
"""
from __future__ import annotations

import os

from probsent.model_paths import resolve_model_dir
from probsent.model_reading import read_consistently
from probsent.readouts.score_readings import ScoringModel
from probsent.readouts.word_terms import read_word_terms

_LOADED: dict[str, ScoringModel] = {}  # this process's scoring models, by resolved directory


def load_scoring_model(path: str | os.PathLike[str] | None = None) -> ScoringModel:
    """The scoring model of the model ``path`` names (as :func:`probsent.load` reads it)."""
    directory = resolve_model_dir(path)
    table, identity = read_consistently(directory, lambda: read_word_terms(directory))
    if table is not None:
        table.source_files = identity
        return table
    from probsent.api import load  # torch: only for models without a term table

    return load(path)


def cached_scoring_model(path: str | os.PathLike[str] | None) -> ScoringModel:
    """:func:`load_scoring_model`, once per process and directory (None: the shipped model)."""
    key = str(resolve_model_dir(path).resolve())
    if key not in _LOADED:
        _LOADED[key] = load_scoring_model(path)
    return _LOADED[key]
