"""What a file holds, by its content: the one identity of an input that a later run must find
unchanged (a resumed ``probsent encode``'s input, the training pairs cache's source files).

A file's size and modification time are not its content: ``cp -p``, ``rsync -t`` or ``touch -r``
give an edited file of the same size the old time. Its SHA-256 is (read once more, at about a
gigabyte a second: cheap next to encoding or tokenizing it).
"""
from __future__ import annotations

import hashlib
import os

__all__ = ["file_sha256"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of the file's bytes, in hex."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
