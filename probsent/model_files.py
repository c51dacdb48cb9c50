"""A model saved: a directory of ``config.json``, ``model.safetensors`` and ``vocab.txt`` (and
the calibration and percentile table where the model has them).

No pickle anywhere: weights are safetensors, everything else is JSON or text. Writing needs
NumPy and safetensors only (a torch module's weights are read as NumPy arrays first), so the
core install saves and exports as well as it reads. Reading and checking a model directory is
:mod:`probsent.model_directory`'s (torch-free) job.
"""
from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import save_file

from probsent.version import __version__
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError
from probsent.files.atomic_writes import atomic_path, files_into
from probsent.model_directory import (CONFIG, FORMAT_NAME, FORMAT_VERSION, MODEL_FILES, VOCAB, WEIGHTS,
                                      expected_shapes)
from probsent.model_descriptions import DESCRIPTIONS

__all__ = ["TOKENIZER", "encoder_weights", "lossless_dtype", "save_model", "write_model_dir", "write_model_files",
           "write_safetensors"]
TOKENIZER = {"lowercase": True, "scheme": "penn-treebank"}


def encoder_weights(encoder: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(config.json's "model" settings, the weights as NumPy arrays by name) of a torch module
    (:class:`probsent.models.SentenceEncoder`) or of a NumPy model
    (:class:`probsent.inference.array_encoder.ArrayEncoder`, whose float32 tables are used as they
    are: nothing imports torch)."""
    if isinstance(getattr(encoder, "weights", None), dict) and isinstance(getattr(encoder, "config", None), dict):
        size = len(next(iter(encoder.weights.values())))
        return {**encoder.config, "vocab_size": size}, dict(encoder.weights)
    # a floating-point tensor as float32, what the model computes in (bfloat16 has no NumPy dtype)
    tensors = {name: tensor.detach().cpu() for name, tensor in encoder.state_dict().items()}
    return encoder.config(), {name: (t.float() if t.is_floating_point() else t).numpy() for name, t in tensors.items()}


def lossless_dtype(weights: dict[str, np.ndarray]) -> np.dtype:
    """float16 where every floating-point weight is exactly a float16 number (a float16 model as
    loaded, or changed only in ways float16 holds), else float32 (what the model computes in):
    the smaller storage that changes no weight."""
    for array in weights.values():
        if array.dtype.kind == "f" and array.size:
            with np.errstate(over="ignore", invalid="ignore"):
                if not np.array_equal(array.astype(np.float16).astype(array.dtype), array):
                    return np.dtype(np.float32)
    return np.dtype(np.float16)


def write_model_dir(directory: Path, encoder: Any, vocab: Vocabulary, training: dict[str, Any] | None = None,
                    dtype: Any = np.float32) -> None:
    """Write the three model files of ``encoder`` (a torch module or a NumPy model, as
    :func:`encoder_weights`) into an existing (empty) directory ``directory``, its floating-point
    weights stored as ``dtype`` (a NumPy or torch dtype, or None for :func:`lossless_dtype`)."""
    model, weights = encoder_weights(encoder)
    write_model_files(directory, model, weights, vocab, training, dtype)


def write_model_files(directory: Path, model: dict[str, Any], weights: dict[str, np.ndarray], vocab: Vocabulary,
                      training: dict[str, Any] | None = None, dtype: Any = np.float32) -> None:
    """Write config.json (``model``: its "model" settings), model.safetensors (``weights``, NumPy
    arrays by name) and vocab.txt into an existing (empty) directory ``directory``.

    Floating-point weights are stored as ``dtype`` (float16 halves the size of a shipped model;
    loading always computes in float32; None: :func:`lossless_dtype`).
    """
    if len(vocab) != model["vocab_size"]:
        raise ValueError("vocabulary and model disagree on the vocabulary size")
    shapes = {name: tuple(array.shape) for name, array in weights.items()}
    if shapes != expected_shapes(DESCRIPTIONS[model["type"]], model):
        raise ValueError(f"the {model['type']} model's weights {shapes} are not those its description "
                         f"implies; the model could not be read back")
    config = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
              "probsent_version": __version__, "model": model,
              "tokenizer": TOKENIZER, "training": training or {}}
    (directory / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")
    stored = lossless_dtype(weights) if dtype is None else _numpy_dtype(dtype)
    arrays = {name: np.ascontiguousarray(array.astype(stored) if array.dtype.kind == "f" else array)
              for name, array in weights.items()}
    write_safetensors(arrays, directory / WEIGHTS, metadata={"format": FORMAT_NAME})
    vocab.save(directory / VOCAB)


def _numpy_dtype(dtype: Any) -> np.dtype:
    """A NumPy dtype from a NumPy or torch one (torch.float16 -> float16; no torch imported)."""
    text = str(dtype)
    return np.dtype(text.removeprefix("torch.")) if text.startswith("torch.") else np.dtype(dtype)


def write_safetensors(tensors: dict[str, Any], path: Path, metadata: dict[str, str] | None = None) -> None:
    """safetensors' ``save_file`` (NumPy arrays; or torch tensors, from training, which has torch),
    whose failures to write (a full disk, a file-size limit) come back as the OSError they are,
    naming ``path``, instead of a SafetensorError."""
    tensors = {name: value if isinstance(value, np.ndarray) else value.detach().cpu().numpy()
               for name, value in tensors.items()}
    try:
        save_file(tensors, str(path), metadata=metadata)
    except SafetensorError as exc:
        code = re.search(r"(?:code: |os error )(\d+)", str(exc))
        if code is None:
            raise OSError(errno.EIO, f"cannot write safetensors ({str(exc).splitlines()[0]})", str(path)) from None
        raise OSError(int(code.group(1)), os.strerror(int(code.group(1))), str(path)) from None


def save_model(path: str | os.PathLike[str], encoder: Any, vocab: Vocabulary,
               training: dict[str, Any] | None = None, extras: Sequence[Any] = ()) -> None:
    """Save the model's files (:data:`probsent.model_directory.MODEL_FILES`): into a new directory
    ``path`` atomically, or into an existing model directory (or empty directory), where only
    those names are replaced (and a calibration or percentile table the model no longer has is
    removed, so that it is never paired with other weights) and everything else is kept. ``extras``
    (a calibration, a percentile table: anything with ``save(directory)``) are written with it.

    Any other existing path (a file, a directory that is not a model's) is refused, so nothing a
    user wrote is lost. ``encoder``: a torch module or a NumPy model (:func:`encoder_weights`);
    its weights are stored as :func:`lossless_dtype` says (a float16 model stays float16)."""
    target = Path(path)

    def write(directory: Path) -> None:
        write_model_dir(directory, encoder, vocab, training, dtype=None)
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
