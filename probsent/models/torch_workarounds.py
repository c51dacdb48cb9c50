"""A work-around for a numerical defect of the libraries underneath, applied once at import.

torch's CPU builds compute many float unary functions (sqrt, exp, log, tanh, ...) with Intel
oneMKL's vector math library (VML), in chunks spread over the intra-op threads. oneMKL 2024.2
(the version inside torch's wheels, ``torch.__config__.show()``) picks each function's kernel
on its first call; when the first calls come from two threads at once, one thread's chunk can
run the low-accuracy kernel (about 11 correct bits instead of a correctly rounded result)
although high accuracy was asked for (pytorch/pytorch issue 188792). It happens in a few
percent of fresh processes, at random: a training run resumed in such a process leaves the
bit-exact path of the uninterrupted run. Measured here (2026-11-26, 2 cores): Adam's ``sqrt``
of the second moments off by up to 3e-4 relative in half the entries, the main thread's chunk;
in a loop replaying CI's kill-and-resume test, 5 of 37 resumed processes ended with other
weights before this fix and 0 of 40 after it; ``torch.sqrt`` of 2,400 floats as the first
work of a fresh process was wrong in 1 of 40 processes.

Calling each function once on a single element, before anything runs in parallel, settles the
choice on the accurate kernel for the life of the process. probsent's torch work all goes through
its models (training, the torch encoder, evaluation and export build or read one), so
``probsent/models/base.py`` asks for it right after its ``import torch``, before any of it runs;
``import probsent`` itself changes nothing in the user's process (no import hook, no torch: the
scoring path never imports torch, and importing probsent must not cost torch's 2 s).

The same moment registers a second work-around: a process forked after torch ran work on its
thread pool (``probsent.load()`` and ``encode``, then a ``multiprocessing.Pool`` with Linux's
default "fork" start method) deadlocks in its first parallel torch call, because the pool's
threads do not exist in the child. A forked child is set to one torch thread
(``os.register_at_fork``), so it encodes on its own thread and never waits for the pool; the
"spawn" start method, which gives each worker its own fresh torch, needs nothing.
"""
from __future__ import annotations

import os
import sys

# the unary functions torch may hand to VML on the CPU (ATen's cpu/vml.h), float32 and float64
VML_FUNCTIONS = ("abs", "acos", "asin", "atan", "cos", "cosh", "erf", "erfc", "erfinv", "exp",
                 "expm1", "lgamma", "log", "log10", "log1p", "log2", "sin", "sinh", "sqrt",
                 "tan", "tanh", "trunc")
_settled = False


def settle_vector_math() -> None:
    """Make VML choose its kernels on this thread alone (well under 1 ms), once per process;
    imports torch. Called by probsent's models before any torch work of theirs."""
    global _settled
    if not _settled:
        _settled = True
        _settle()


def _settle() -> None:
    import torch

    os.register_at_fork(after_in_child=_one_thread_in_a_forked_child)
    for dtype in (torch.float32, torch.float64):
        one = torch.full((1,), 0.5, dtype=dtype)
        for name in VML_FUNCTIONS:
            getattr(torch, name)(one)


def _one_thread_in_a_forked_child() -> None:
    """After ``os.fork``: torch's thread pool did not survive it, so run on this thread alone."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
