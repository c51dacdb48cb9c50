"""A saved model is a directory: ``config.json``, ``model.safetensors`` and ``vocab.txt``.

No pickle anywhere: weights are safetensors, everything else is JSON or text. Loading checks
every part and reports a wrong, partial or damaged directory in one line.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from probsent.version import __version__
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError, MissingFileError
from probsent.io import atomic_path
from probsent.model_paths import CONFIG, FORMAT_NAME, FORMAT_VERSION, VOCAB, WEIGHTS
from probsent.models import SentenceEncoder, build_model
from probsent.training.config import check_model_settings

__all__ = ["CONFIG", "FORMAT_NAME", "FORMAT_VERSION", "TOKENIZER", "VOCAB", "WEIGHTS", "read_model_dir",
           "save_model", "write_model_dir"]
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
    config = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION,
              "probsent_version": __version__, "model": encoder.config(),
              "tokenizer": TOKENIZER, "training": training or {}}
    (directory / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n",
                                    encoding="utf-8")
    weights = {k: v.detach().cpu().to(dtype if v.is_floating_point() else v.dtype).contiguous()
               for k, v in encoder.state_dict().items()}
    save_file(weights, str(directory / WEIGHTS), metadata={"format": FORMAT_NAME})
    vocab.save(directory / VOCAB)


def save_model(path: str | os.PathLike[str], encoder: SentenceEncoder, vocab: Vocabulary,
               training: dict[str, Any] | None = None, extras: Sequence[Any] = ()) -> None:
    """Save atomically: ``path`` is either the complete new model or untouched. ``extras``
    (a calibration, a percentile table: anything with ``save(directory)``) are written with it.

    An existing ``path`` is replaced only if it is a model directory (it has a probsent
    config.json); a file or any other directory is refused, so nothing a user wrote is lost."""
    target = Path(path)
    if os.path.lexists(target) and not _is_model_dir(target):
        raise InvalidValueError(f"{target}: exists and is not a probsent model directory; "
                                f"save to a new path (nothing was written)")
    with atomic_path(path) as tmp:
        tmp.mkdir()
        write_model_dir(tmp, encoder, vocab, training)
        for extra in extras:
            extra.save(tmp)


def _is_model_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding a probsent model's config.json."""
    try:
        if not path.is_dir() or path.is_symlink():
            return False
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(config, dict) and config.get("format") == FORMAT_NAME


def read_model_dir(path: str | os.PathLike[str]) -> tuple[SentenceEncoder, Vocabulary, dict[str, Any]]:
    """Load and check a model directory: MissingFileError (a FileNotFoundError) if it or a part
    is missing, InvalidValueError (a ValueError) for anything wrong in it; both ProbsentErrors."""
    path = Path(path)
    if not path.is_dir():
        raise MissingFileError(f"{path}: no such model directory")
    for name in (CONFIG, WEIGHTS, VOCAB):
        if not (path / name).is_file():
            raise MissingFileError(f"{path}: not a complete probsent model ({name} is missing)")
    try:
        config = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidValueError(f"{path / CONFIG}: damaged config ({exc})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT_NAME:
        raise InvalidValueError(f"{path / CONFIG}: not a probsent model config")
    if config.get("format_version") != FORMAT_VERSION:
        raise InvalidValueError(f"{path / CONFIG}: model format version {config.get('format_version')} "
                                f"is not supported by probsent {__version__}")
    problem = check_model_settings(config.get("model"))
    if problem:
        raise InvalidValueError(f"{path / CONFIG}: {problem}")
    vocab = Vocabulary.load(path / VOCAB)
    if config["model"].get("vocab_size") != len(vocab):  # before any table of that size is made
        raise InvalidValueError(f"{path / VOCAB}: {len(vocab)} words, but {path / CONFIG} says "
                                f"model.vocab_size {config['model'].get('vocab_size')!r}")
    try:
        encoder = build_model(config["model"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidValueError(f"{path / CONFIG}: invalid model settings ({exc})") from None
    try:
        weights = load_file(str(path / WEIGHTS))
    except (SafetensorError, OSError, ValueError) as exc:
        raise InvalidValueError(f"{path / WEIGHTS}: damaged weights file ({exc})") from None
    expected = encoder.state_dict()
    if set(weights) != set(expected):
        raise InvalidValueError(f"{path / WEIGHTS}: tensors {sorted(weights)} do not match a "
                                f"{config['model']['type']} model ({sorted(expected)})")
    for name, tensor in weights.items():
        if tensor.shape != expected[name].shape:
            raise InvalidValueError(f"{path / WEIGHTS}: {name} has shape {tuple(tensor.shape)}, "
                                    f"expected {tuple(expected[name].shape)}")
        if not torch.isfinite(tensor).all():
            raise InvalidValueError(f"{path / WEIGHTS}: {name} contains NaN or infinite values")
    encoder.load_state_dict({k: v.float() for k, v in weights.items()})
    return encoder.eval(), vocab, config
