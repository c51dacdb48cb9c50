"""A model saved, with torch: a directory of ``config.json``, ``model.safetensors`` and
``vocab.txt`` (and the calibration and percentile table where the model has them).

No pickle anywhere: weights are safetensors, everything else is JSON or text. Reading and
checking a model directory is :mod:`probsent.model_directory`'s (torch-free) job.
"""
from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

import torch
from safetensors import SafetensorError
from safetensors.torch import save_file

from probsent.version import __version__
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError
from probsent.files.atomic_writes import atomic_path, files_into
from probsent.model_directory import (CONFIG, FORMAT_NAME, FORMAT_VERSION, MODEL_FILES, VOCAB, WEIGHTS,
                                      expected_shapes)
from probsent.model_descriptions import DESCRIPTIONS
from probsent.models import SentenceEncoder

__all__ = ["TOKENIZER", "save_model", "write_model_dir", "write_safetensors"]
TOKENIZER = {"lowercase": True, "scheme": "penn-treebank"}


def write_model_dir(directory: Path, encoder: SentenceEncoder, vocab: Vocabulary,
                    training: dict[str, Any] | None = None,
                    dtype: torch.dtype = torch.float32) -> None:
    """Write the three model files into an existing (empty) directory ``directory``.

    Floating-point weights are stored as ``dtype`` (float16 halves the size of a shipped model;
    loading always computes in float32).
    """
    if len(vocab) != encoder.vocab_size:
        raise ValueError("vocabulary and model disagree on the vocabulary size")
    shapes = {name: tuple(tensor.shape) for name, tensor in encoder.state_dict().items()}
    if shapes != expected_shapes(DESCRIPTIONS[encoder.type_name], encoder.config()):
        raise ValueError(f"{type(encoder).__name__}'s weights {shapes} are not those its description "
                         f"implies; the model could not be read back")
    config = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
              "probsent_version": __version__, "model": encoder.config(),
              "tokenizer": TOKENIZER, "training": training or {}}
    (directory / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")
    weights = {k: v.detach().cpu().to(dtype if v.is_floating_point() else v.dtype).contiguous()
               for k, v in encoder.state_dict().items()}
    write_safetensors(weights, directory / WEIGHTS, metadata={"format": FORMAT_NAME})
    vocab.save(directory / VOCAB)


def write_safetensors(tensors: dict[str, torch.Tensor], path: Path, metadata: dict[str, str] | None = None) -> None:
    """safetensors' ``save_file``, whose failures to write (a full disk, a file-size limit)
    come back as the OSError they are, naming ``path``, instead of a SafetensorError."""
    try:
        save_file(tensors, str(path), metadata=metadata)
    except SafetensorError as exc:
        code = re.search(r"(?:code: |os error )(\d+)", str(exc))
        if code is None:
            raise OSError(errno.EIO, f"cannot write safetensors ({str(exc).splitlines()[0]})", str(path)) from None
        raise OSError(int(code.group(1)), os.strerror(int(code.group(1))), str(path)) from None


def save_model(path: str | os.PathLike[str], encoder: SentenceEncoder, vocab: Vocabulary,
               training: dict[str, Any] | None = None, extras: Sequence[Any] = ()) -> None:
    """Save the model's files (:data:`probsent.model_directory.MODEL_FILES`): into a new directory
    ``path`` atomically, or into an existing model directory (or empty directory), where only
    those names are replaced (and a calibration or percentile table the model no longer has is
    removed, so that it is never paired with other weights) and everything else is kept. ``extras``
    (a calibration, a percentile table: anything with ``save(directory)``) are written with it.

    Any other existing path (a file, a directory that is not a model's) is refused, so nothing a
    user wrote is lost."""
    target = Path(path)

    def write(directory: Path) -> None:
        write_model_dir(directory, encoder, vocab, training)
        for extra in extras:
            extra.save(directory)

    if not os.path.lexists(target):
        with atomic_path(target, replace=False) as tmp:  # a directory made meanwhile is not replaced
            tmp.mkdir()
            write(tmp)
        return
    if not (_is_model_dir(target) or _is_empty_dir(target)):
        raise InvalidValueError(f"{target}: exists and is not a probsent model directory; "
                                f"save to a new path (nothing was written)")
    with files_into(target, MODEL_FILES) as staging:
        write(staging)


def _is_empty_dir(path: Path) -> bool:
    """Whether ``path`` is a directory (not a link) with nothing in it."""
    try:
        return path.is_dir() and not path.is_symlink() and not any(path.iterdir())
    except OSError:
        return False


def _is_model_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a probsent model's config.json."""
    try:
        if not path.is_dir() or path.is_symlink():
            return False
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(config, dict) and config.get("format") == FORMAT_NAME
