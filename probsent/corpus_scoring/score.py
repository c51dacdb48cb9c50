"""Scoring a corpus chunk by chunk with constant memory: the engine of ``probsent specificity``.

Chunks come from :mod:`probsent.corpus_scoring.formats` (text lines, JSON Lines, Parquet),
are scored in this process or over worker processes (:mod:`probsent.corpus_scoring.workers`)
and go to a sink in input order, each with its ``specificity`` column and, as asked, the
read-outs of :mod:`probsent.readouts.readout_table` (``probability``, ``percentile``,
``coverage``, ...), in the table's order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence, TextIO

import numpy as np

from probsent.corpus_scoring.formats import CHUNK, SCORE, Chunk, Sink, TextSink, iter_lines, text_chunks
from probsent.corpus_scoring.workers import score_chunks
from probsent.readouts.readout_table import ScoredTexts, asked
from probsent.readouts.scoring_engine import ScoringEngine
from probsent.text.token_ids import LOW_COVERAGE

__all__ = ["Scored", "iter_lines", "score_corpus", "score_columns", "score_stream"]


@dataclass
class Scored:
    """What a scoring run wrote: its rows, and how many of them hold a sentence whose model
    coverage (the share of its words with an entry of the model's own, the low-coverage rule's)
    is below LOW_COVERAGE (the command line warns about them)."""

    rows: int = 0
    low_coverage: int = 0
    withheld: int = 0  # sentences with a score whose percentile or P(specific), asked for, is withheld (NaN)


def score_columns(readouts: Sequence[str] = ()) -> list[str]:
    """Names of the columns scoring adds for the read-outs ``readouts``, in their order."""
    return [SCORE] + [r.name for r in asked(readouts)]


def score_corpus(engine: ScoringEngine, chunks: Iterable[Chunk], sink: Sink, workers: int = 1,
                 batch_size: int = 256, readouts: Sequence[str] = (), progress: bool = False) -> Scored:
    """Score every chunk's texts and write the chunk with its new columns to ``sink``, in
    order: the specificity, then the read-outs named in ``readouts`` in the table's order
    (:mod:`probsent.readouts.readout_table`: P(specific), the percentile for the sentence's
    length, the coverage, ...).

    Returns the rows written and how many have a low coverage. Memory holds a few chunks at a time.
    """
    readouts = asked(readouts)
    for readout in readouts:
        readout.require(engine)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" sentences", desc="scoring")
    scored = Scored()
    try:
        for chunk, (scores, shares, own) in score_chunks(engine, ((c, c.texts) for c in chunks), workers, batch_size):
            batch = ScoredTexts(engine, chunk.texts, batch_size, scores, shares)
            columns = {SCORE: scores, **{r.name: r.of(batch) for r in readouts}}
            read = [columns[r.name] for r in readouts if r.withheld]  # NaN where withheld
            if read:
                scored.withheld += int(np.count_nonzero(np.logical_or.reduce(np.isnan(read)) & ~np.isnan(scores)))
            sink.write(chunk, columns)
            scored.rows += len(chunk.texts)
            scored.low_coverage += int(np.count_nonzero(own < LOW_COVERAGE))  # the low-coverage rule's share
            if bar is not None:
                bar.update(len(chunk.texts))
    finally:
        if bar is not None:
            bar.close()
    return scored


def score_stream(engine: ScoringEngine, lines: Iterable[str], out: TextIO, fmt: str = "tsv",
                 chunk: int = CHUNK, batch_size: int = 256, progress: bool = False,
                 readouts: Sequence[str] = (), workers: int = 1) -> int:
    """Write one line per input line: ``score<TAB>sentence`` (tsv) or a JSON object (json);
    with ``readouts``, their columns between (``score<TAB>probability<TAB>sentence``). Blank lines
    score ``nan`` / null. Returns the number of lines written."""
    return score_corpus(engine, text_chunks(lines, chunk), TextSink(out, fmt), workers, batch_size,
                        readouts, progress).rows
