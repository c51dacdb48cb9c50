"""Scoring a corpus chunk by chunk with constant memory: the engine of ``probsent specificity``.

Chunks come from :mod:`probsent.corpus_scoring.formats` (text lines, JSON Lines, Parquet),
are scored in this process or over worker processes (:mod:`probsent.corpus_scoring.workers`)
and go to a sink in input order, each with its ``specificity`` column (and, as asked,
``probability``, ``percentile`` and ``coverage``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, TextIO

import numpy as np

from probsent.corpus_scoring.formats import (CHUNK, COVERAGE, PERCENTILE, PROBABILITY, SCORE, Chunk, Sink, TextSink,
                                             iter_lines, text_chunks)
from probsent.corpus_scoring.workers import score_chunks
from probsent.readouts.scoring_engine import ScoringEngine
from probsent.text.token_ids import LOW_COVERAGE

__all__ = ["Scored", "iter_lines", "score_corpus", "score_columns", "score_stream"]


@dataclass
class Scored:
    """What a scoring run wrote: its rows, and how many of them hold a sentence whose coverage
    is below LOW_COVERAGE (the command line warns about them)."""

    rows: int = 0
    low_coverage: int = 0
    withheld: int = 0  # sentences with a score whose percentile or P(specific), asked for, is withheld (NaN)


def score_columns(probability: bool = False, percentile: bool = False, coverage: bool = False) -> list[str]:
    """Names of the columns scoring adds, in their order."""
    return [SCORE] + [name for name, asked in ((PROBABILITY, probability), (PERCENTILE, percentile),
                                               (COVERAGE, coverage)) if asked]


def score_corpus(model: ScoringEngine, chunks: Iterable[Chunk], sink: Sink, workers: int = 1,
                 batch_size: int = 256, probability: bool = False, progress: bool = False,
                 percentile: bool = False, coverage: bool = False) -> Scored:
    """Score every chunk's texts and write the chunk with its new columns to ``sink``, in
    order: the specificity, and as asked P(specific) (the model's calibration), the percentile
    for the sentence's length (its percentile table) and the coverage.

    Returns the rows written and how many have a low coverage. Memory holds a few chunks at a time.
    """
    if probability:
        model.require_calibration()
    if percentile:
        model.require_percentiles()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" sentences", desc="scoring")
    scored = Scored()
    try:
        for chunk, (scores, shares) in score_chunks(model, ((c, c.texts) for c in chunks), workers, batch_size):
            columns = {SCORE: scores}
            if probability:  # the columns in this order: specificity, probability, percentile, coverage
                columns[PROBABILITY] = model.probability_of_scores(scores, chunk.texts)
            if percentile:
                columns[PERCENTILE] = model.percentile_of_scores(scores, chunk.texts)
            if probability or percentile:
                read = columns[PERCENTILE if percentile else PROBABILITY]
                scored.withheld += int(np.count_nonzero(np.isnan(read) & ~np.isnan(scores)))
            if coverage:
                columns[COVERAGE] = shares
            sink.write(chunk, columns)
            scored.rows += len(chunk.texts)
            scored.low_coverage += int(np.count_nonzero(shares < LOW_COVERAGE))
            if bar is not None:
                bar.update(len(chunk.texts))
    finally:
        if bar is not None:
            bar.close()
    return scored


def score_stream(model: ScoringEngine, lines: Iterable[str], out: TextIO, fmt: str = "tsv",
                 chunk: int = CHUNK, batch_size: int = 256, progress: bool = False,
                 probability: bool = False, workers: int = 1) -> int:
    """Write one line per input line: ``score<TAB>sentence`` (tsv) or a JSON object (json);
    with ``probability``, ``score<TAB>probability<TAB>sentence``. Blank lines score ``nan`` /
    null. Returns the number of lines written."""
    return score_corpus(model, text_chunks(lines, chunk), TextSink(out, fmt), workers, batch_size,
                        probability, progress).rows
