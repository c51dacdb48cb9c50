"""One writer at a time: an exclusive lock held by the process that writes an output.

Every writer of a user's output (``probsent encode``, ``specificity --output``, ``similarity
--output``, ``explain --html``: :func:`probsent.files.user_output.writing_output`) and of a
training run directory (:mod:`probsent.training.run_directory`) holds ``fcntl.flock`` on a lock file
from before its first write until it ends, then removes the file; the kernel releases the lock
however the process ends (a SIGKILL included). The holder writes its process id, host and start
time into the file, so that a second writer gets one line naming it, and writes nothing.
"""
from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path
from typing import IO, Callable

from probsent.errors import ProbsentError

__all__ = ["HeldLock", "hold_lock"]


class HeldLock:
    """A held lock; released by :meth:`release` or when the process ends (or this object is
    collected: the file closes)."""

    def __init__(self, handle: IO[bytes], path: Path) -> None:
        self.handle, self.path = handle, path

    def release(self) -> None:
        """Let another writer have it. The lock file is removed first, while still held (a
        process that opened it meanwhile sees that it is gone and makes a new one), so a
        finished writer leaves nothing of it."""
        if not self.handle.closed:
            self.path.unlink(missing_ok=True)
            self.handle.close()


def hold_lock(path: Path, busy: Callable[[str], str]) -> HeldLock:
    """Take the lock of lock file ``path`` (made if missing; its directory exists), or raise
    the one-line error ``busy(holder)``, ``holder`` naming the process that holds it."""
    while True:
        handle = open(path, "a+b")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle.fileno(), 300, 0).decode("utf-8", "replace").strip() or "a process starting up"
            handle.close()
            raise ProbsentError(busy(holder)) from None
        try:  # the file we locked must still be the one at `path` (not removed meanwhile)
            if os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino:
                break
        except FileNotFoundError:
            pass
        handle.close()
    started = time.strftime("%Y-%m-%d %H:%M:%S %z")
    handle.truncate(0)
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}, started {started}\n".encode())
    handle.flush()
    return HeldLock(handle, path)
