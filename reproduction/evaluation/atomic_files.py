"""The wing's files, written atomically: a record, a report or a plot is either the old file or
the complete new one, never a half-written one (a temporary beside it, renamed into place)."""
from __future__ import annotations

import json
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary file path beside ``target`` (same suffix, so a writer that reads the
    format from it still can); on success it replaces ``target`` in one step, on error it is
    removed and ``target`` is left as it was. Missing parent directories are created."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp{target.suffix}")
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as indented JSON with sorted keys and a final newline, atomically."""
    write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")
