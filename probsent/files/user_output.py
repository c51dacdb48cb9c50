"""A user's output file: what kind of thing the path is, and writing it without losing anything.

``probsent specificity --output PATH`` may name a new path, a regular file, a symbolic link,
or something that is not a file at all: a FIFO, a character device, ``/dev/stdout`` or a
process substitution (``>(wc -l)``, a ``/dev/fd/N`` link to a pipe). The rules:

- a new path or a regular file is written to a temporary beside it and renamed into place
  only after the last row, so an error or a kill leaves the old file as it was; a replaced
  file keeps its permission bits (a private 0600 file stays private); a new one gets the
  usual 0666 minus the umask;
- a symbolic link is written through: its target is the file replaced (the link stays);
- a stream (FIFO, character device, socket, ``/dev/stdout``) is opened and written to
  directly, never renamed over or replaced;
- "already exists; add --force" is checked before any work and again at the final step: the
  rename is a hard link that fails if a file appeared meanwhile, so a file a user wrote during
  the run is never overwritten without ``--force``;
- one writer at a time: a run holds the writer lock of the output (``.NAME.lock`` beside it,
  :mod:`probsent.files.writer_lock`) from before its first write (a resumable run's partial
  files included) until it ends; a second run writing the same file stops in one line naming
  the first;
- every operating-system error is one line naming the path (:class:`ProbsentError`).
"""
from __future__ import annotations

import errno
import os
import stat
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TextIO

from probsent.errors import ProbsentError
from probsent.files.atomic_writes import fsync_path, new_parents, remove_quietly, temporary_beside, usual_mode
from probsent.files.writer_lock import HeldLock, hold_lock

NEW, FILE, STREAM, DEVICE = "new", "file", "stream", "device"


@dataclass(frozen=True)
class OutputTarget:
    """What an output path names. ``real`` is the file that is replaced (a symbolic link's
    target); ``kind`` is ``new``, ``file`` (a regular file), ``stream`` (FIFO, character
    device, socket: written directly) or ``device`` (a block device: written directly, and only
    with ``--force``, since it holds data)."""

    given: str
    real: Path
    kind: str

    @property
    def exists(self) -> bool:
        """Whether writing here would overwrite something (a file or a block device)."""
        return self.kind in (FILE, DEVICE)


def standard_output(instead: str = "") -> TextIO:
    """Standard output; a one-line error, before any work, where the program started with it
    closed (``>&-``: Python then has no ``sys.stdout``), naming ``instead`` (an option that
    writes to a file) as the way out."""
    if sys.stdout is None:
        raise ProbsentError("standard output is closed; redirect it (> FILE)"
                            + (f" or give {instead}" if instead else ""))
    return sys.stdout


def cannot_write(path: str | os.PathLike[str], exc: OSError) -> ProbsentError:
    """The one-line error for an operating-system error on the output ``path``."""
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc).strip() or type(exc).__name__)
    return ProbsentError(f"{path}: cannot write ({reason})")


def inspect_output(path: str) -> OutputTarget:
    """Classify ``path`` (following symbolic links); a directory or a path that cannot be
    looked at is a one-line error."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):  # a dangling link: write through it, creating its target
            return OutputTarget(path, Path(os.path.realpath(path)), NEW)
        return OutputTarget(path, Path(path), NEW)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise ProbsentError(f"{path}: is a directory")
    if stat.S_ISREG(mode):
        return OutputTarget(path, Path(os.path.realpath(path)), FILE)
    if stat.S_ISBLK(mode):
        return OutputTarget(path, Path(path), DEVICE)
    return OutputTarget(path, Path(path), STREAM)


def check_output_target(path: str, input_path: str | None, force: bool) -> OutputTarget:
    """Refuse an empty path, a directory, the input file itself, and an existing file without
    ``force``."""
    if not path:  # before any work: "" is no file, and would mean the current directory
        raise ProbsentError("--output: an empty path; name a file, or - for standard output")
    if path.endswith("/") or path.endswith(os.sep):  # "newdir/" is a directory, never a file named newdir
        raise ProbsentError(f"{path}: names a directory (it ends with /); name a file in it")
    target = inspect_output(path)
    if target.kind == FILE and input_path not in (None, "-") and os.path.exists(input_path) \
            and os.path.samefile(target.real, input_path):
        raise ProbsentError(f"{path}: is the input file; write the output to a new file")
    if target.exists and not force:
        raise ProbsentError(f"{path}: already exists; add --force to replace it")
    return target


@contextmanager
def writing_output(path: str, force: bool) -> Iterator[Path]:
    """Yield the path to write the output to, and put it in place when the block succeeds.

    For a new path or a regular file that is a temporary beside the real target (see the
    module's rules); for a stream or a device it is ``path`` itself. An ``OSError`` about
    the output, at any step, becomes a one-line :class:`ProbsentError` naming ``path``.
    """
    target = check_output_target(path, None, force)
    if target.kind in (STREAM, DEVICE):
        try:
            yield Path(path)
        except OSError as exc:
            if not _about(exc, [path]):
                raise
            raise cannot_write(path, exc) from None
        return
    places = [path, str(target.real), *map(str, target.real.parents)]
    try:
        with new_parents(target.real):
            lock = lock_output(target.real, path)  # before anything of this run is written beside it
            try:
                tmp = Path(temporary_beside(target.real))
                try:
                    yield tmp
                    fsync_path(tmp)
                    _put_in_place(tmp, target.real, path, force)
                finally:
                    remove_quietly(tmp)
            finally:
                lock.release()
    except OSError as exc:
        if not (_about(exc, places) or _is_temporary_of(exc.filename, target.real)):
            raise
        raise cannot_write(path, exc) from None


def lock_output(real: Path, given: str) -> HeldLock:
    """Hold the writer lock of the output file ``real`` (``.NAME.lock`` beside it) for this run,
    or raise the one-line error naming the process that writes it (two runs writing one output
    would mix their rows, or one would put the other's half-written file in place)."""
    return hold_lock(real.parent / f".{real.name}.lock",
                     lambda holder: f"{given}: another probsent process is writing it ({holder}); wait for it "
                                    f"to end, or write to another file")


def _is_temporary_of(name: object, real: Path) -> bool:
    return name is not None and os.path.dirname(str(name)) == str(real.parent) \
        and os.path.basename(str(name)).startswith(f".{real.name}.")


def _about(exc: OSError, places: list[str]) -> bool:
    """Whether ``exc`` concerns the output: it names no file at all (a failed write or flush,
    such as a full disk) or one of ``places``."""
    return exc.filename is None or str(exc.filename) in places


def _put_in_place(tmp: Path, real: Path, given: str, force: bool) -> None:
    """Rename ``tmp`` to ``real``: replacing it (keeping its mode) with ``force``, otherwise
    only if nothing is there now."""
    try:
        old = os.stat(real)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise ProbsentError(f"{given}: became something other than a regular file during the run; "
                            f"nothing was written")
    if old is not None and not force:
        raise ProbsentError(f"{given}: already exists (it appeared during the run); add --force to replace it")
    os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else usual_mode())
    if old is not None and os.geteuid() == 0 and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        os.chown(tmp, old.st_uid, old.st_gid)  # root replacing a user's file keeps it theirs
    if force:
        os.replace(tmp, real)
    else:
        _rename_if_absent(tmp, real, given)
    fsync_path(real.parent)


def _rename_if_absent(tmp: Path, real: Path, given: str) -> None:
    """Move ``tmp`` to ``real`` unless something appeared at ``real`` (a hard link, which never
    replaces; file systems without hard links fall back to a check and a rename)."""
    try:
        os.link(tmp, real)
    except FileExistsError:
        raise ProbsentError(f"{given}: already exists (it appeared during the run); "
                            f"add --force to replace it") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(real):
            raise ProbsentError(f"{given}: already exists (it appeared during the run); "
                                f"add --force to replace it") from None
        os.replace(tmp, real)
        return
    tmp.unlink()
