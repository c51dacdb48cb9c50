"""Making a trained model small enough to ship: a trimmed vocabulary and float16 weights,
and, for WLO, the unit its means and variances are written in.

Words beyond the kept vocabulary become ``<unk>`` (row 0), exactly as for any unknown word;
float16 weights are widened to float32 on loading, so only storage precision changes. A start
variance s_0 (:meth:`probsent.models.wlo.WLO.set_start_variance`) rescales means by sqrt(s_0)
and variances by s_0 where training left that unit free.
"""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from probsent.api import SentenceModel
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError, ProbsentError
from probsent.files.atomic_writes import atomic_path
from probsent.inference.array_encoder import NUMPY_TYPES, ArrayEncoder
from probsent.model_descriptions import DESCRIPTIONS
from probsent.model_directory import read_model
from probsent.model_directory import encoder_weights, write_model_files
from probsent.settings import allowed_range, check_setting

__all__ = ["export_model"]  # public: ``probsent export`` from Python

# NumPy throughout: the core install (no torch) exports a WLO, Wordavg or Wordsum model.


def _parts(model: SentenceModel) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The model's "model" settings and its weights as NumPy arrays (no torch for a NumPy model)."""
    return encoder_weights(model._module if model._module is not None else model._arrays)


def _rebuilt(source: SentenceModel, settings: dict[str, Any], weights: dict[str, np.ndarray],
             vocab: Vocabulary) -> SentenceModel:
    """A model of ``settings`` and ``weights`` that computes as ``source`` does: NumPy tables where
    it has them, else a torch module (so ``source`` needed torch already)."""
    if source._module is None and settings["type"] in NUMPY_TYPES:
        floats = {name: np.asarray(array, dtype=np.float32) for name, array in weights.items()}
        return SentenceModel(ArrayEncoder(settings, floats), vocab, source.config)
    from probsent.models import build_model

    return SentenceModel(build_model(settings, weights), vocab, source.config)


def trimmed(model: SentenceModel, max_words: int) -> SentenceModel:
    """The model restricted to ``<unk>`` plus its ``max_words`` most frequent words.

    The vocabulary is in decreasing frequency order, so the kept words are a prefix; every
    weight with one row per word (its description's first dimension is ``vocab_size``) is cut
    to that prefix.
    """
    if max_words < 1:
        raise InvalidValueError(f"--max-words must be at least 1, not {max_words}")
    size = min(len(model.vocab), max_words + 1)
    settings, weights = _parts(model)
    shapes = DESCRIPTIONS[settings["type"]].weights
    cut = {name: array[:size] if tuple(shapes.get(name, ()))[:1] == ("vocab_size",) else array
           for name, array in weights.items()}
    return _rebuilt(model, {**settings, "vocab_size": size}, cut, Vocabulary(model.vocab.words[:size]))


def with_start_variance(model: SentenceModel, start_variance: float) -> SentenceModel:
    """A copy of the WLO ``model`` whose sentences start as z_0 ~ N(0, s_0 I), s_0 =
    ``start_variance``, with its translations rescaled to match (every mean times
    sqrt(s_0 / its s_0), every variance times s_0 / its s_0; nothing its training loss sees):
    :meth:`probsent.models.wlo.WLO.set_start_variance` on the NumPy weights."""
    settings, weights = _parts(model)
    if settings["type"] != "wlo":
        raise ProbsentError(f"--start-variance needs a WLO model, not {settings['type']}")
    if not (isinstance(start_variance, (int, float)) and math.isfinite(start_variance) and start_variance > 0):
        raise InvalidValueError(f"--start-variance must be a positive number, not {start_variance}")
    factor = math.sqrt(start_variance / float(settings.get("start_variance", 1.0)))
    with np.errstate(over="ignore"):  # beyond float32: the export's read-back refuses it
        shift = (weights["shift.weight"].astype(np.float64) * factor).astype(np.float32)
    return _rebuilt(model, {**settings, "start_variance": float(start_variance)}, {**weights, "shift.weight": shift},
                    model.vocab)


def export_model(model: SentenceModel, out: str | os.PathLike[str], max_words: int | None = None,
                 float16: bool = False, source: str | None = None,
                 start_variance: float | None = None) -> SentenceModel:
    """Write ``model`` (trimmed, optionally float16, optionally with another start variance)
    as a new model directory ``out``.

    Refuses to overwrite anything; the calibration is not carried over (the scores change
    slightly), so calibrate the exported model again. Returns the exported model.
    """
    if os.path.lexists(out):  # a dangling symbolic link too: nothing is ever written through it
        raise ProbsentError(f"{out}: already exists{'' if os.path.exists(out) else ' (a symbolic link)'}; "
                            f"choose a new --out")
    if start_variance is not None:
        if check_setting("start_variance", start_variance):  # training's range: what a model may hold
            raise InvalidValueError(f"--start-variance must be a positive number "
                                    f"({allowed_range('start_variance')}), not {start_variance}")
    small = trimmed(model, max_words) if max_words is not None else model
    if start_variance is not None:
        small = with_start_variance(small, start_variance)
    training: dict[str, Any] = dict(model.config.get("training", {}))
    export: dict[str, Any] = {"from": source, "max_words": max_words, "dtype": "float16" if float16 else "float32",
                              "vocab_size_before": len(model.vocab)}
    if start_variance is not None:
        export["start_variance"] = start_variance
    if "export" in training:  # a copy of a copy: keep how the source itself was made
        export["source_export"] = training["export"]
    training["export"] = export
    settings, weights = _parts(small)
    with atomic_path(out, replace=False) as tmp:  # a directory made meanwhile is not replaced
        tmp.mkdir()
        write_model_files(tmp, settings, weights, small.vocab, training, dtype=np.float16 if float16 else np.float32)
        try:  # what is written must load (a rescaled translation beyond float16, for one)
            read_model(tmp)
        except ProbsentError as exc:
            raise ProbsentError(f"{out}: the exported model would not load, so nothing was written "
                                f"({str(exc).replace(str(tmp), str(out))})") from None
    return small
