"""Scoring a corpus chunk by chunk with constant memory: the engine of ``probsent specificity``.

Chunks come from :mod:`probsent.corpus_scoring.formats` (text lines, JSON Lines, Parquet),
are scored in this process or over worker processes (:mod:`probsent.corpus_scoring.workers`)
and go to a sink in input order, each with its ``specificity`` (and ``probability``) column.
"""
from __future__ import annotations

from typing import Iterable, TextIO

from probsent.corpus_scoring.formats import (CHUNK, PROBABILITY, SCORE, Chunk, Sink, TextSink, iter_lines,
                                             text_chunks)
from probsent.corpus_scoring.workers import score_chunks
from probsent.scorer import Scorer

__all__ = ["iter_lines", "score_corpus", "score_columns", "score_stream"]


def score_columns(probability: bool) -> list[str]:
    """Names of the columns scoring adds."""
    return [SCORE, PROBABILITY] if probability else [SCORE]


def score_corpus(model: Scorer, chunks: Iterable[Chunk], sink: Sink, workers: int = 1,
                 batch_size: int = 256, probability: bool = False, progress: bool = False) -> int:
    """Score every chunk's texts and write the chunk with its new columns to ``sink``, in
    order; with ``probability`` also P(specific) from the model's calibration.

    Returns the number of rows written. Memory holds a few chunks at a time.
    """
    if probability:
        model.require_calibration()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" sentences", desc="scoring")
    written = 0
    try:
        for chunk, scores in score_chunks(model, ((c, c.texts) for c in chunks), workers, batch_size):
            columns = {SCORE: scores}
            if probability:
                columns[PROBABILITY] = model.probability_of_scores(scores, chunk.texts)
            sink.write(chunk, columns)
            written += len(chunk.texts)
            if bar is not None:
                bar.update(len(chunk.texts))
    finally:
        if bar is not None:
            bar.close()
    return written


def score_stream(model: Scorer, lines: Iterable[str], out: TextIO, fmt: str = "tsv",
                 chunk: int = CHUNK, batch_size: int = 256, progress: bool = False,
                 probability: bool = False, workers: int = 1) -> int:
    """Write one line per input line: ``score<TAB>sentence`` (tsv) or a JSON object (json);
    with ``probability``, ``score<TAB>probability<TAB>sentence``. Blank lines score ``nan`` /
    null. Returns the number of lines written."""
    return score_corpus(model, text_chunks(lines, chunk), TextSink(out, fmt), workers, batch_size,
                        probability, progress)
