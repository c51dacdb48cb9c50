"""Where a model lives: the files of a model directory and which directory a path names.

Torch-free, so that the scoring path (:mod:`probsent.scorer`) can find and read a model
without importing torch; :mod:`probsent.model_files` writes and fully checks these files.
"""
from __future__ import annotations

import os
from pathlib import Path

from probsent.errors import MissingFileError
from probsent.files.atomic_writes import set_aside

FORMAT_NAME = "probsent-model"
FORMAT_VERSION = 1
CONFIG, WEIGHTS, VOCAB = "config.json", "model.safetensors", "vocab.txt"
CALIBRATION, PERCENTILES = "calibration.json", "percentiles.json"  # written by ``probsent calibrate``
# Every file a model directory's model is made of: what ``save`` writes, and the only names it
# ever replaces or removes in an existing directory (anything else there is the user's).
MODEL_FILES = (CONFIG, WEIGHTS, VOCAB, CALIBRATION, PERCENTILES)
DEFAULT_NAME = "default"  # the shipped model's name: never a path, so no file can shadow it
DEFAULT_MODEL = Path(__file__).resolve().parent / "pretrained" / "wlo"


def resolve_model_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The model directory that ``path`` names: with no argument, or the name ``"default"``
    (a str), the WLO model that ships inside the package, whatever the working directory holds
    (a directory named default is ``"./default"``, or a ``Path``); a model directory itself; or a
    ``probsent train`` output directory's best model (or the copy set aside while it was
    replaced). Raises MissingFileError only for the missing shipped model; any other problem is
    left to the reader."""
    if path is None or (isinstance(path, str) and path == DEFAULT_NAME):
        if not (DEFAULT_MODEL / CONFIG).is_file():
            raise MissingFileError(f"{DEFAULT_MODEL}: this installation has no shipped model; "
                                   f"give a model directory")
        path = DEFAULT_MODEL
    path = Path(path)
    if not (path / CONFIG).exists():  # a training run: its best model, or the copy set aside
        path = next((p for p in (path / "best", set_aside(path / "best")) if (p / CONFIG).exists()), path)
    return path
