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


class Stopped(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM or SIGHUP arrives."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    for handled in HANDLED:  # one unwinding: a second signal must not cut the clean-up short
        signal.signal(handled, signal.SIG_IGN)
    raise Stopped(signum)


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
