"""Making a trained model small enough to ship: a trimmed vocabulary and float16 weights,
and, for WLO, the unit its means and variances are written in.

Words beyond the kept vocabulary become ``<unk>`` (row 0), exactly as for any unknown word;
float16 weights are widened to float32 on loading, so only storage precision changes. A start
variance s_0 (:meth:`probsent.models.wlo.WLO.set_start_variance`) rescales means by sqrt(s_0)
and variances by s_0 where training left that unit free.
"""
from __future__ import annotations

import os
from typing import Any

import torch

from probsent.api import SentenceModel
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError, ProbsentError
from probsent.files.atomic_writes import atomic_path
from probsent.model_directory import read_model
from probsent.model_files import write_model_dir
from probsent.models import build_model
from probsent.models.wlo import WLO
from probsent.settings import allowed_range, check_setting


def trimmed(model: SentenceModel, max_words: int) -> SentenceModel:
    """The model restricted to ``<unk>`` plus its ``max_words`` most frequent words.

    The vocabulary is in decreasing frequency order, so the kept words are a prefix; every
    tensor indexed by word (its first dimension is the vocabulary size) is cut to that prefix.
    """
    if max_words < 1:
        raise InvalidValueError(f"--max-words must be at least 1, not {max_words}")
    size = min(len(model.vocab), max_words + 1)
    old = model.encoder
    encoder = build_model({**old.config(), "vocab_size": size})
    state = {name: tensor[:size] if tensor.shape[:1] == (old.vocab_size,) else tensor
             for name, tensor in old.state_dict().items()}
    encoder.load_state_dict(state)
    return SentenceModel(encoder, Vocabulary(model.vocab.words[:size]), model.config)


def with_start_variance(model: SentenceModel, start_variance: float) -> SentenceModel:
    """A copy of the WLO ``model`` whose sentences start as z_0 ~ N(0, s_0 I), s_0 =
    ``start_variance``, with its translations rescaled to match (every mean times
    sqrt(s_0 / its s_0), every variance times s_0 / its s_0; nothing its training loss sees)."""
    if not isinstance(model.encoder, WLO):
        raise ProbsentError(f"--start-variance needs a WLO model, not {model.encoder.type_name}")
    encoder = build_model(model.encoder.config())
    encoder.load_state_dict(model.encoder.state_dict())
    try:
        encoder.set_start_variance(start_variance)
    except ValueError as exc:  # the model's check (checked_start_variance)
        raise InvalidValueError(f"--start-variance must be a positive number, not {start_variance}") from exc
    return SentenceModel(encoder, model.vocab, model.config)


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
    dtype = torch.float16 if float16 else torch.float32
    with atomic_path(out, replace=False) as tmp:  # a directory made meanwhile is not replaced
        tmp.mkdir()
        write_model_dir(tmp, small.encoder, small.vocab, training, dtype=dtype)
        try:  # what is written must load (a rescaled translation beyond float16, for one)
            read_model(tmp)
        except ProbsentError as exc:
            raise ProbsentError(f"{out}: the exported model would not load, so nothing was written "
                                f"({str(exc).replace(str(tmp), str(out))})") from None
    return small
