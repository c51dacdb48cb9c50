"""One writer per training run directory: an exclusive lock held for the whole run.

``probsent train --out DIR`` (with or without ``--resume``) holds the writer lock
(:mod:`probsent.files.writer_lock`, the one every output's writer holds) on
``DIR/probsent-run.lock`` from before its first write until it ends, then removes the file; a
second process gets one line naming the holder.
"""
from __future__ import annotations

from pathlib import Path

from probsent.files.writer_lock import HeldLock, hold_lock

LOCK = "probsent-run.lock"

RunLock = HeldLock  # the held lock of one run directory


def lock_run_directory(directory: Path) -> RunLock:
    """Take ``directory``'s lock (the directory exists), or raise the one-line error naming
    the process that holds it."""
    return hold_lock(directory / LOCK, lambda holder: f"{directory}: another probsent train is writing into it "
                                                      f"({holder}); wait for it to end, or choose another --out")
