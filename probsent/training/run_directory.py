"""A training run's output directory (``--out``): claimed, checked and locked before any data is
read, and left as it was found when the run fails before its first checkpoint.

A run directory is the run's from its first byte on disk (its marker file); one whose run never
reached a checkpoint starts afresh; a directory holding anything else is refused.

One writer per training run directory: an exclusive lock held for the whole run.

``probsent train --out DIR`` (with or without ``--resume``) holds the writer lock
(:mod:`probsent.files.writer_lock`, the one every output's writer holds) on
``DIR/probsent-run.lock`` from before its first write until it ends, then removes the file; a
second process gets one line naming the holder.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from probsent.errors import ProbsentError
from probsent.files.atomic_writes import recover_directory
from probsent.files.writer_lock import HeldLock, hold_lock
from probsent.training.checkpoint import BEST, BEST_NEWS, LAST, RUN_MARKER, checkpoint_dir


LOCK = "probsent-run.lock"

RunLock = HeldLock  # the held lock of one run directory


def lock_run_directory(directory: Path) -> RunLock:
    """Take ``directory``'s lock (the directory exists), or raise the one-line error naming
    the process that holds it."""
    return hold_lock(directory / LOCK, lambda holder: f"{directory}: another probsent train is writing into it "
                                                      f"({holder}); wait for it to end, or choose another --out")


def claim_run_directory(out: Path, resume: bool) -> tuple[RunLock, bool]:
    """Check and claim ``out``; returns its lock (held for the whole run) and whether the
    directory was created now."""
    if out.exists() and not out.is_dir():
        raise ProbsentError(f"{out}: exists and is not a directory")
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    lock = lock_run_directory(out)  # another run is writing here: say who, write nothing
    try:
        check_run_directory(out, resume)  # now that no other run can change it
    except ProbsentError:
        lock.release()
        raise
    if not (out / RUN_MARKER).exists():  # a plain write: even half of it marks the run
        (out / RUN_MARKER).write_text("a probsent training run: probsent train --resume continues it\n")
    for name in (LAST, BEST, BEST_NEWS):  # what a killed run left half-written
        for stale in out.glob(f".{name}.*.tmp"):
            shutil.rmtree(stale, ignore_errors=True)
    for kept in (BEST, BEST_NEWS):  # a kill between the two renames of a model's replacement
        recover_directory(out / kept)
    return lock, created


def check_run_directory(out: Path, resume: bool) -> None:
    """Refuse a directory holding something else than a run, and a saved run without ``resume``."""
    if out.is_dir() and {p.name for p in out.iterdir()} - {LOCK}:
        saved = checkpoint_dir(out) is not None or (out / BEST).exists()
        if not saved and not (out / RUN_MARKER).exists():
            raise ProbsentError(f"{out}: directory is not empty and holds no probsent "
                                f"training run; choose another --out")
        if saved and not resume:
            raise ProbsentError(f"{out}: already holds a training run; pass --resume to "
                                f"continue it, or choose another --out")


def release_unused(out: Path, lock: RunLock, created: bool) -> None:
    """After a failed set-up: leave no trace where nothing of the run was written yet (no empty
    ``out`` it created, no marker), and release the lock."""
    if {p.name for p in out.iterdir()} <= {RUN_MARKER, LOCK}:  # nothing of this run yet
        if created:
            shutil.rmtree(out, ignore_errors=True)
        else:
            (out / RUN_MARKER).unlink(missing_ok=True)
    lock.release()
