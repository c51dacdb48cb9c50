"""Scoring a stream of sentences with constant memory: the engine of ``probsent specificity``.

Input is one sentence a line, read as UTF-8 (undecodable bytes become U+FFFD, so no line is
lost); ``\\r\\n`` line ends are accepted. Lines are scored in chunks and written in input
order, one output line per input line. A blank (whitespace-only) line has no sentence to
score: its score is written as ``nan`` (TSV) or ``null`` (JSON). In TSV the sentence's own
tabs and line breaks (a command-line sentence may hold any) are written as spaces.
"""
from __future__ import annotations

import json
import math
from itertools import islice
from typing import BinaryIO, Iterable, Iterator, TextIO

from probsent.api import SentenceModel


# In a TSV row the sentence is one field on one line: its tabs and line breaks become spaces.
_ONE_FIELD = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def iter_lines(stream: BinaryIO) -> Iterator[str]:
    """Decoded lines of a binary stream, without their line ends."""
    for raw in stream:
        yield raw.decode("utf-8", errors="replace").rstrip("\r\n")


def score_stream(model: SentenceModel, lines: Iterable[str], out: TextIO, fmt: str = "tsv",
                 chunk: int = 4096, batch_size: int = 256, progress: bool = False,
                 probability: bool = False) -> int:
    """Write one line per input line: ``score<TAB>sentence`` (tsv) or a JSON object (json);
    with ``probability``, also P(specific) from the model's calibration
    (``score<TAB>probability<TAB>sentence``).

    Returns the number of lines written. Memory holds one chunk at a time.
    """
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" sentences", desc="scoring")
    lines = iter(lines)
    written = 0
    while True:
        block = list(islice(lines, chunk))
        if not block:
            break
        present = [i for i, line in enumerate(block) if line.strip()]
        scores = [math.nan] * len(block)
        if present:
            values = model.specificity([block[i] for i in present], batch_size=batch_size)
            for i, value in zip(present, values):
                scores[i] = float(value)
        probs = model.require_calibration().probability(scores) if probability else [None] * len(block)
        for sentence, score, prob in zip(block, scores, probs):
            if fmt == "json":
                row = {"sentence": sentence, "specificity": None if math.isnan(score) else round(score, 6)}
                if probability:
                    row["probability"] = None if math.isnan(prob) else round(float(prob), 6)
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            elif probability:
                out.write(f"{score:.4f}\t{prob:.4f}\t{sentence.translate(_ONE_FIELD)}\n")
            else:
                out.write(f"{score:.4f}\t{sentence.translate(_ONE_FIELD)}\n")
        written += len(block)
        if bar is not None:
            bar.update(len(block))
    if bar is not None:
        bar.close()
    return written
