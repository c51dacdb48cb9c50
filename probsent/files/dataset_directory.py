"""A directory of parts, as Spark, Arrow and pandas write a dataset: the one reading of it that
``probsent specificity --input DIR`` (and the other scoring commands) and ``probsent train --data
DIR`` share.

The parts are every file below the directory, at any depth: ``partitionBy`` writes them into
``key=value`` folders (``source=bible/part-00000.parquet``), whose values :func:`partition_values`
reads. Names starting with ``.`` or ``_`` are left out at every level, files and folders alike
(``_SUCCESS``, ``.part-0.crc``, ``_temporary/``), as Spark and Arrow leave them out. The order is
the name order at each level, so a dataset is read the same way every time. A part that is not a
regular file (a FIFO, which would block the reader, a device, a socket) is a one-line error naming
it; a folder linked twice (a loop) is read once.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import unquote

from probsent.errors import InvalidValueError

__all__ = ["dataset_files", "is_left_out", "partition_values"]


def is_left_out(name: str) -> bool:
    """Whether a file or folder of this name is no part of a dataset (``_SUCCESS``, ``.crc``)."""
    return name.startswith((".", "_"))


def dataset_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The part files of the dataset ``directory``, in order (see the module's docstring); an
    empty list where it has none."""
    root = Path(directory)
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def visit(folder: Path) -> None:
        status = folder.stat()
        if (status.st_dev, status.st_ino) in seen:
            return
        seen.add((status.st_dev, status.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:  # a folder that cannot be listed (permission denied)
            raise InvalidValueError(f"{folder}: cannot be read ({exc.strerror or type(exc).__name__}), in the "
                                    f"dataset directory {root}") from None
        for entry in entries:
            if is_left_out(entry.name):
                continue
            path = Path(entry.path)
            try:
                mode = os.stat(path).st_mode  # a link is followed
            except FileNotFoundError:  # a dangling link
                raise InvalidValueError(f"{path}: a link to nothing, in the dataset directory {root}") from None
            if stat.S_ISDIR(mode):
                visit(path)
            elif stat.S_ISREG(mode):
                found.append(path)
            else:
                kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
                    else "not a regular file"
                raise InvalidValueError(f"{path}: {kind}, not a part of the dataset directory {root}")

    visit(root)
    return found


def partition_values(directory: str | os.PathLike[str], file: str | os.PathLike[str]) -> tuple[tuple[str, str], ...]:
    """The ``key=value`` folders between ``directory`` and its part ``file`` (Hive's and Spark's
    partitioning, values percent-decoded as Spark writes them), outermost first."""
    folders = Path(file).relative_to(directory).parts[:-1]
    return tuple((unquote(key), unquote(value)) for key, sep, value in (f.partition("=") for f in folders) if sep and key)
