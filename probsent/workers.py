"""Scoring chunks of sentences, in this process or over worker processes, in input order.

The one place where a list of texts becomes specificity scores: ``probsent specificity``
(one process or ``--workers N``) and ``probsent.spark`` both call :func:`sentence_scores`, so
every path gives the same numbers. A worker process loads its model once (see
:func:`cached_model`) and then scores chunk after chunk.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from itertools import chain, islice
from pathlib import Path
from typing import Iterable, Iterator, Sequence, TypeVar

import numpy as np
import torch

from probsent.api import SentenceModel, load
from probsent.signals import HANDLED, die_with_parent

T = TypeVar("T")

_MODELS: dict[str, SentenceModel] = {}  # this process's models, by resolved directory


def cached_model(path: str | os.PathLike[str] | None) -> SentenceModel:
    """The model in directory ``path`` (None: the shipped one), loaded once per process."""
    key = str(Path(path).resolve()) if path is not None else ""
    if key not in _MODELS:
        _MODELS[key] = load(path)
    return _MODELS[key]


def default_workers() -> int:
    """All cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def with_sentence(texts: Sequence[str | None]) -> list[int]:
    """Positions of the texts that hold a sentence (not None, not only whitespace)."""
    return [i for i, text in enumerate(texts) if text is not None and text.strip()]


def sentence_scores(model: SentenceModel, texts: Sequence[str | None], batch_size: int = 256) -> np.ndarray:
    """Specificity of each text as float64; NaN where there is no sentence (None, or only
    whitespace)."""
    scores = np.full(len(texts), np.nan)
    present = with_sentence(texts)
    if present:
        scores[present] = model.specificity([texts[i] for i in present], batch_size=batch_size)
    return scores


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` torch threads, then restore the previous number."""
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, count))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _start_worker(model_path: str, parent: int) -> None:
    die_with_parent(parent)  # never outlive the parent, however it ends
    for signum in (signal.SIGINT, *HANDLED):  # the parent's to handle: one message, no tracebacks
        signal.signal(signum, signal.SIG_IGN)
    torch.set_num_threads(1)  # one core per worker: N workers use N cores
    cached_model(model_path)


def _score_in_worker(model_path: str, texts: list[str | None], batch_size: int) -> np.ndarray:
    return sentence_scores(cached_model(model_path), texts, batch_size)


def score_chunks(model: SentenceModel, items: Iterable[tuple[T, Sequence[str | None]]],
                 workers: int = 1, batch_size: int = 256) -> Iterator[tuple[T, np.ndarray]]:
    """Yield ``(payload, scores)`` for each ``(payload, texts)`` item, in input order.

    With ``workers`` > 1 the texts go to that many worker processes (each loads
    ``model.path`` once and uses one thread); payloads stay here. At most ``2 * workers``
    chunks are in flight, so memory does not grow with the input. An input of a single
    chunk is scored here, without starting processes.
    """
    items = iter(items)
    head = [] if workers <= 1 else list(islice(items, 2))
    if workers <= 1 or len(head) < 2:
        with torch_threads(workers):
            for payload, texts in chain(head, items):
                yield payload, sentence_scores(model, texts, batch_size)
        return
    if model.path is None:
        raise ValueError("scoring with several workers needs a model loaded from a directory")
    path = str(model.path)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(path, os.getpid()))
    try:
        pending: deque = deque()
        for payload, texts in chain(head, items):
            pending.append((payload, pool.submit(_score_in_worker, path, list(texts), batch_size)))
            if len(pending) >= 2 * workers:
                payload, future = pending.popleft()
                yield payload, future.result()
        while pending:
            payload, future = pending.popleft()
            yield payload, future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
