"""Writing files and directories so that an interruption never leaves a damaged one behind."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target`` in one step.

    Works for a file or a directory written at the yielded path. On error the temporary is
    removed and ``target`` is left as it was. What is written gets the permissions of any
    new file (0666 / 0777 minus the umask), whatever the writing library chose.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    tmp.rmdir()  # the caller creates a file or a directory here
    try:
        yield tmp
        _usual_permissions(tmp)
        if tmp.is_dir():
            _fsync_tree(tmp)
            _replace_directory(tmp, target)
        else:
            _fsync(tmp)
            os.replace(tmp, target)
        _fsync(target.parent)
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()


def _replace_directory(new: Path, target: Path) -> None:
    """Swap ``new`` in for ``target``: the old one is renamed aside first, then removed."""
    if not target.exists():
        os.replace(new, target)
        return
    old = set_aside(target)
    if old.exists():
        shutil.rmtree(old)
    os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


def set_aside(target: Path) -> Path:
    """Where :func:`_replace_directory` keeps ``target``'s previous version between its renames."""
    return target.with_name(f".{target.name}.old")


def recover_directory(target: Path) -> None:
    """Undo a replacement cut short between its two renames (``target`` gone, its previous
    version set aside): put the previous version back."""
    old = set_aside(target)
    if not target.exists() and old.is_dir():
        os.replace(old, target)


def _usual_permissions(path: Path) -> None:
    """Files 0666 and directories 0777, minus the umask, under ``path`` (safetensors, for
    one, creates its files 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        if not item.is_symlink():
            os.chmod(item, (0o777 if item.is_dir() else 0o666) & ~umask)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for item in root.rglob("*"):
        if item.is_file():
            _fsync(item)
    _fsync(root)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as indented JSON, atomically."""
    write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")
