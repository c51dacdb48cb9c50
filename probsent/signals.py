"""Ending cleanly on SIGTERM and SIGHUP, and worker processes that never outlive their parent.

``kill``, ``timeout``, schedulers and container runtimes stop a program with SIGTERM; a closed
terminal sends SIGHUP. :func:`stopping_on_signals` turns both into :class:`Stopped`, a
``KeyboardInterrupt``, so that they unwind exactly like Ctrl-C: ``finally`` blocks remove
temporaries, worker pools shut down, and the command prints one line and exits with
128 + the signal's number. A SIGHUP that was ignored when probsent started (``nohup``) stays
ignored.

A worker process calls :func:`die_with_parent` first: on Linux the kernel kills it when its
parent dies, however that happens (``prctl(PR_SET_PDEATHSIG)``), and everywhere a thread
checks every second that the parent is still there.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

HANDLED = (signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1
_held = 0  # the depth of signals_held blocks in the main thread
_pending: int | None = None  # a stop signal that arrived inside one, raised at its end


class Stopped(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM or SIGHUP arrives."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    global _pending
    if _held:  # inside a step that must not be cut: stop at its end
        _pending = _pending or signum
        return
    _raise_stop(signum)


def _raise_stop(signum: int) -> None:
    """Ctrl-C as ``KeyboardInterrupt``; SIGTERM or SIGHUP as :class:`Stopped`, after which both
    are ignored (one unwinding: a second signal must not cut the clean-up short; the handlers
    come back at the end of :func:`stopping_on_signals`)."""
    if signum == signal.SIGINT:
        raise KeyboardInterrupt()
    for handled in HANDLED:
        signal.signal(handled, signal.SIG_IGN)
    raise Stopped(signum)


@contextmanager
def signals_held() -> Iterator[None]:
    """A short step that a stop must not cut in two (a directory's rename pair and the removal
    of its old version): SIGTERM, SIGHUP or Ctrl-C arriving inside it is raised when it ends,
    as :class:`Stopped` or ``KeyboardInterrupt``. Outside the main thread it does nothing."""
    global _held, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    own_sigint = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if own_sigint:
        signal.signal(signal.SIGINT, _stop)
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if own_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if not _held and _pending is not None:
        signum, _pending = _pending, None
        _raise_stop(signum)


@contextmanager
def stopping_on_signals() -> Iterator[None]:
    """Within the block (in the main thread), SIGTERM and SIGHUP raise :class:`Stopped`;
    the previous handlers come back after it. Elsewhere than the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in HANDLED}
    for signum, handler in before.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, _stop)
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def exit_status(exc: KeyboardInterrupt) -> tuple[int, str]:
    """The exit status (128 + the signal) and the one-line message for an interruption."""
    signum = getattr(exc, "signum", signal.SIGINT)
    if signum == signal.SIGINT:
        return 128 + signum, "interrupted"
    return 128 + signum, f"stopped by {signal.Signals(signum).name}"


def die_with_parent(parent: int, interval: float = 1.0) -> None:
    """End this process (a worker) when process ``parent`` dies: the kernel's parent-death
    signal where there is one (Linux), and a watchdog thread polling ``os.getppid()``."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still ends the worker
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="probsent-parent-watchdog", daemon=True).start()


def become_worker(parent: int) -> None:
    """Start a worker process of ``parent`` (a pool's initializer): it dies with its parent, and
    Ctrl-C, SIGTERM and SIGHUP are the parent's to handle (one message, no tracebacks)."""
    die_with_parent(parent)
    for signum in (signal.SIGINT, *HANDLED):
        signal.signal(signum, signal.SIG_IGN)


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
