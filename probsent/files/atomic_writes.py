"""Writing files and directories so that an interruption never leaves a damaged one behind."""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from probsent.errors import InvalidValueError, ProbsentError
from probsent.signals import signals_held

# public for the commands other packages add through ``probsent.commands`` (the research wing's
# records, reports and plots): their files are written as probsent's own are, never half-written
__all__ = ["atomic_path", "write_text", "write_json"]


@contextmanager
def atomic_path(target: str | os.PathLike[str], replace: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success it replaces ``target`` in one step.

    Works for a file or a directory written at the yielded path. On error the temporary is
    removed and ``target`` is left as it was. What is written gets the permissions of any
    new file (0666 / 0777 minus the umask), whatever the writing library chose. With
    ``replace=False`` a ``target`` that appeared meanwhile is never replaced: a
    :class:`ProbsentError`, and the temporary is removed.
    """
    target = Path(target)
    with new_parents(target):
        tmp = Path(temporary_beside(target, directory=True))
        tmp.rmdir()  # the caller creates a file or a directory here
        try:
            try:
                yield tmp
            except OSError as exc:  # name what the user asked for, not our temporary
                if not (isinstance(exc.filename, str) and exc.filename.startswith(str(tmp))):
                    raise
                named = str(target) + exc.filename[len(str(tmp)):]
                raise type(exc)(exc.errno, exc.strerror, named) from None
            _usual_permissions(tmp)
            if tmp.is_dir():
                _fsync_tree(tmp)
            else:
                fsync_path(tmp)
            if not replace:
                _move_if_absent(tmp, target)
            elif tmp.is_dir():
                _replace_directory(tmp, target)
            else:
                os.replace(tmp, target)
            fsync_path(target.parent)
        finally:
            remove_quietly(tmp)


@contextmanager
def files_into(directory: Path, owned: tuple[str, ...]) -> Iterator[Path]:
    """Yield an empty staging directory inside the existing ``directory``; on success, move each
    file written there into ``directory``, and remove the names of ``owned`` that were not written.

    Only the names in ``owned`` are ever replaced or removed: everything else in ``directory``
    (a README, a folder of results) is left as it is. Every file is complete and flushed before
    the first rename, and the renames are one step that a stop signal waits for
    (:func:`probsent.signals.signals_held`). On error nothing in ``directory`` has changed and
    the staging directory is removed.
    """
    staging = Path(temporary_beside(directory / "probsent-save", directory=True))
    try:
        yield staging
        written = sorted(os.listdir(staging))
        if not set(written) <= set(owned):
            raise ValueError(f"files_into: {sorted(set(written) - set(owned))} are not among {owned}")
        in_the_way = [name for name in owned if (directory / name).is_dir() and not (directory / name).is_symlink()]
        if in_the_way:
            raise InvalidValueError(f"{directory / in_the_way[0]}: is a directory where a model file goes; "
                                f"move it away (nothing was written)")
        _usual_permissions(staging)
        _fsync_tree(staging)
        with signals_held():
            for name in written:
                os.replace(staging / name, directory / name)
            for name in set(owned) - set(written):
                if os.path.lexists(directory / name):
                    os.unlink(directory / name)
        fsync_path(directory)
    finally:
        remove_quietly(staging)


@contextmanager
def new_parents(target: Path) -> Iterator[list[Path]]:
    """Create the missing directories above ``target`` for the block; if the block fails,
    remove those of them that are still empty (a failed run leaves no directory it made)."""
    created = [parent for parent in reversed(target.parents) if not parent.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield created
    except BaseException:
        for directory in reversed(created):
            try:
                directory.rmdir()
            except OSError:
                break
        raise


def remove_quietly(path: Path) -> None:
    """Remove the file or directory tree at ``path`` if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            pass


def _host_tag() -> str:
    """This machine's name as it appears in temporaries' names (no dots, at most 32 characters)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32] or "host"


def temporary_beside(target: Path, directory: bool = False) -> str:
    """Create a temporary file (or directory) beside ``target``, named
    ``.<name>.<host>.<pid>.<random>.tmp`` so that a later run can tell it is a stale one of
    ours (:func:`remove_stale_temporaries_of`); remove such stale ones first."""
    remove_stale_temporaries_of(target)
    prefix = f".{target.name}.{_host_tag()}.{os.getpid()}."
    if directory:
        return tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    os.close(fd)
    return name


def _process_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_stale_temporaries_of(target: Path) -> list[Path]:
    """Remove the temporaries beside ``target`` that a killed run of probsent left (see
    :func:`temporary_beside`): only those named by this host and a process that no longer
    runs. Returns what was removed."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.{re.escape(_host_tag())}\.(\d+)\.[a-z0-9_]{{8}}\.tmp")
    removed = []
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        match = pattern.fullmatch(name)
        if match and int(match.group(1)) != os.getpid() and not _process_is_running(int(match.group(1))):
            remove_quietly(target.parent / name)
            removed.append(target.parent / name)
    return removed


def _move_if_absent(new: Path, target: Path) -> None:
    """Rename ``new`` to ``target`` only if nothing is at ``target``: a file through a hard
    link (which never replaces); a directory by first creating ``target`` empty (which fails
    if anything is there) and renaming over that empty directory of ours."""
    appeared = ProbsentError(f"{target}: already exists (it appeared during the run); nothing was replaced")
    try:
        if new.is_dir():
            os.mkdir(target)
            try:
                os.rename(new, target)
            except OSError as exc:  # something was put into it meanwhile
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                raise appeared from None
        else:
            os.link(new, target)
            new.unlink()
    except FileExistsError:
        raise appeared from None


def _replace_directory(new: Path, target: Path) -> None:
    """Swap ``new`` in for ``target``: the old one is renamed aside first, then removed. A stop
    signal waits for the swap and the removal to finish (:func:`probsent.signals.signals_held`),
    so an interrupted run never leaves the old version beside the new one."""
    if not target.exists():
        os.replace(new, target)
        return
    old = set_aside(target)
    with signals_held():
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


def usual_mode(directory: bool = False) -> int:
    """The permissions of a new file (0666) or directory (0777) minus the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return (0o777 if directory else 0o666) & ~umask


def _usual_permissions(path: Path) -> None:
    """Files 0666 and directories 0777, minus the umask, under ``path`` (safetensors, for
    one, creates its files 0600)."""
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        if not item.is_symlink():
            os.chmod(item, usual_mode(item.is_dir()))


def fsync_path(path: Path) -> None:
    """Flush ``path`` (a file or a directory) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for item in root.rglob("*"):
        if item.is_file():
            fsync_path(item)
    fsync_path(root)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Write ``value`` as indented JSON, atomically."""
    write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")
