"""Scoring chunks of sentences, in this process or over worker processes, in input order.

The one place where a list of texts becomes specificity scores: ``probsent specificity``
(one process or ``--workers N``) and ``probsent.spark`` both call :func:`sentence_scores`, so
every path gives the same numbers: those of the model's scoring engine
(:mod:`probsent.readouts.scoring_engine`). A worker process gets a frozen copy of the parent's engine
(a WLO model's term table, read without torch) when it starts and then scores chunk after chunk
with it.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from itertools import chain, islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from probsent.model_directory import resolve_model_dir
from probsent.readouts.scoring_engine import ScoringEngine
from probsent.signals import become_worker, usable_cores
from probsent.text.utf8_texts import Utf8Texts

if TYPE_CHECKING:
    from probsent.api import SentenceModel

T = TypeVar("T")
R = TypeVar("R")

_MODELS: dict[str, "SentenceModel"] = {}  # this process's full models, by resolved directory


def cached_model(path: str | os.PathLike[str] | None) -> "SentenceModel":
    """The full model in directory ``path`` (None: the shipped one), with torch, loaded once
    per process (a WLO, Wordavg or Wordsum model without torch)."""
    from probsent.api import load

    key = str(resolve_model_dir(path).resolve())
    if key not in _MODELS:
        _MODELS[key] = load(path)
    return _MODELS[key]


def cached_engine(path: str | os.PathLike[str] | None) -> ScoringEngine:
    """The scoring engine of :func:`cached_model` ``(path)``: what Spark's executors score with."""
    from probsent.api import scoring_engine

    return scoring_engine(cached_model(path))


def capped_workers(asked: int | None) -> int:
    """The worker processes to start for ``--workers asked``: all cores when None, and never
    more than the cores available (each worker holds a model and uses one core; more only
    cost memory and start-up)."""
    return usable_cores() if asked is None else max(1, min(asked, usable_cores()))


def with_sentence(texts: Sequence[str | None]) -> list[int]:
    """Positions of the texts that hold a sentence (not None, not only whitespace)."""
    return [i for i, text in enumerate(texts) if text is not None and text.strip()]


def sentence_scores(engine: ScoringEngine, texts: Sequence[str | None], batch_size: int = 256) -> np.ndarray:
    """Specificity of each text as float64; NaN where there is no sentence (None, or only
    whitespace)."""
    return scores_and_coverage(engine, texts, batch_size)[0]


def scores_and_coverage(engine: ScoringEngine, texts: Sequence[str | None], batch_size: int = 256) -> np.ndarray:
    """[3, n] float64: each text's specificity, its coverage (share of tokens the model or
    English knows) and its model coverage (share with an entry of the model's own); NaN where
    there is no sentence (:meth:`ScoringEngine.scores_and_coverage`)."""
    return engine.scores_and_coverage(texts, batch_size)


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` torch threads, then restore the previous number (nothing
    to do where torch is not imported: the term tables need no threads)."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, count))
    try:
        yield
    finally:
        torch.set_num_threads(before)


_WORKER_MODEL: list[Any] = []  # a worker process's model: the parent's, handed over at its start


def _start_worker(model: Any, parent: int) -> None:
    become_worker(parent)
    _WORKER_MODEL[:] = [model]
    limit_threads(1)


def limit_threads(threads: int) -> None:
    """Run this process's torch (a model without a term table) and numba (the compiled tokenizer
    and encoder) on ``threads`` threads: a worker process or a Spark task, beside others that
    share the cores."""
    if "torch" in sys.modules and sys.modules["torch"].get_num_threads() != threads:
        sys.modules["torch"].set_num_threads(threads)
    if "numba" in sys.modules:
        numba = sys.modules["numba"]
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    else:
        os.environ["NUMBA_NUM_THREADS"] = str(threads)


def _run_in_worker(work: Callable[[Any, Sequence[str | None], int], R], texts: Sequence[str | None],
                   batch_size: int) -> R:
    return work(_WORKER_MODEL[0], texts, batch_size)


def score_chunks(engine: ScoringEngine, items: Iterable[tuple[T, Sequence[str | None]]],
                 workers: int = 1, batch_size: int = 256) -> Iterator[tuple[T, np.ndarray]]:
    """Yield ``(payload, values)`` for each ``(payload, texts)`` item, in input order; ``values``
    is :func:`scores_and_coverage`'s [3, n] array (see :func:`chunk_results`)."""
    return chunk_results(engine, scores_and_coverage, items, workers, batch_size)


_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"  # its messages start "resource_tracker: "


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker without its warning about the semaphores of a
    parent that died without removing them (a SIGKILL): the tracker still removes them; its
    "There appear to be 1 leaked semaphore objects" line only alarms the user of a killed run.
    The tracker is a process of its own, started with this process's ``-W`` options: the filter
    goes there (the first pool of the process starts it; one started earlier keeps its options)."""
    from multiprocessing import resource_tracker

    if _QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(_QUIET_TRACKER)
    resource_tracker.ensure_running()


def chunk_results(model: Any, work: Callable[[Any, Sequence[str | None], int], R],
                  items: Iterable[tuple[T, Sequence[str | None]]], workers: int = 1,
                  batch_size: int = 256) -> Iterator[tuple[T, R]]:
    """Yield ``(payload, work(model, texts, batch_size))`` for each ``(payload, texts)`` item, in
    input order (``work``: a module-level function, so that a worker process can receive it).

    With ``workers`` > 1 the texts go to that many worker processes, each given a frozen copy
    of ``model`` itself when it starts (never the model directory again, which may have changed
    since: a run scores with one model) and using one thread; payloads stay here. At most ``2 * workers``
    chunks are in flight, so memory does not grow with the input. An input of a single
    chunk is worked on here, without starting processes.
    """
    items = iter(items)
    head = [] if workers <= 1 else list(islice(items, 2))
    if workers <= 1 or len(head) < 2:
        with torch_threads(workers):
            for payload, texts in chain(head, items):
                yield payload, work(model, texts, batch_size)
        return
    _quiet_resource_tracker()
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(model, os.getpid()))
    try:
        pending: deque = deque()
        for payload, texts in chain(head, items):
            texts = texts if isinstance(texts, Utf8Texts) else list(texts)  # (Utf8Texts: three arrays)
            pending.append((payload, pool.submit(_run_in_worker, work, texts, batch_size)))
            if len(pending) >= 2 * workers:
                payload, future = pending.popleft()
                yield payload, future.result()
        while pending:
            payload, future = pending.popleft()
            yield payload, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
