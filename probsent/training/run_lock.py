"""One writer per training run directory: an exclusive lock held for the whole run.

``probsent train --out DIR`` (with or without ``--resume``) holds ``fcntl.flock`` on
``DIR/probsent-run.lock`` from before its first write until it ends, then removes the file; the
kernel releases the lock however the process ends (a SIGKILL included). The holder writes its
process id, host and start time into the file, so a second process gets one line naming it.
"""
from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path
from typing import IO

from probsent.errors import ProbsentError

LOCK = "probsent-run.lock"


class RunLock:
    """The held lock of one run directory; released by :meth:`release` or when the process
    ends (or this object is collected: the file closes)."""

    def __init__(self, handle: IO[bytes], path: Path) -> None:
        self.handle, self.path = handle, path

    def release(self) -> None:
        """Let another run have the directory. The lock file is removed first, while still
        held (a process that opened it meanwhile sees that it is gone and makes a new one), so
        a finished run leaves nothing of it."""
        if not self.handle.closed:
            self.path.unlink(missing_ok=True)
            self.handle.close()


def lock_run_directory(directory: Path) -> RunLock:
    """Take ``directory``'s lock (the directory exists), or raise the one-line error naming
    the process that holds it."""
    path = directory / LOCK
    while True:
        handle = open(path, "a+b")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle.fileno(), 300, 0).decode("utf-8", "replace").strip() or "a process starting up"
            handle.close()
            raise ProbsentError(f"{directory}: another probsent train is writing into it ({holder}); "
                                f"wait for it to end, or choose another --out") from None
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
    return RunLock(handle, path)
