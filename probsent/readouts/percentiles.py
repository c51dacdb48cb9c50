"""The percentile of a sentence's score among reference sentences of its length.

A raw score (minus an entropy) has no fixed scale, and a probability fitted on news labels
says little about other text. A percentile does: ``percentile(s)`` is the share (x 100) of
reference sentences *with the same number of tokens* that score lower than ``s`` (ties count
half). 90 means: more specific than 90 % of the reference sentences of that length. Because
it compares within one length, it is read the same on a three-word example and a forty-word
news sentence.

The reference is a fixed sample of the training sentences (:func:`reference_sample`: the
first side of the pairs, the same number from each source, so that no source — the
Bible versions are 61 % of the shared pairs — sets the scale alone). The table
(``percentiles.json`` in the model directory, written by ``probsent calibrate`` and
``probsent export``) holds, for each length bin, the sorted scores of at most
``PER_BIN`` reference sentences of that length, rounded to ``DECIMALS`` decimals (about 30 KB). Lengths are grouped into bins of consecutive
token counts with at least ``MIN_PER_BIN`` sentences each; a sentence shorter than the first
bin uses the first, a longer one the last ("long sentences share the last bin"), so every
length has a percentile. A blank sentence (no tokens) has none: NaN. The API, the command
line, Spark and spaCy also withhold it (NaN) for text that is no sentence of the reference's
kind: mostly unknown words, mostly repetition, or fewer than three words
(:mod:`probsent.readouts.withheld`).
"""
from __future__ import annotations

import gzip
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probsent.errors import InvalidValueError
from probsent.files.atomic_writes import write_text
from probsent.files.untrusted import iter_lines, read_json_file
from probsent.model_directory import MAX_JSON_BYTES, PERCENTILES

FILE = PERCENTILES
PER_SOURCE = 2_000  # reference sentences drawn from each source of the pairs file
PER_BIN = 100  # sorted scores kept per length bin
MIN_PER_BIN = 100  # a bin groups consecutive lengths until it holds this many sentences
DECIMALS = 4  # reference scores are stored to this many decimals (what the command line prints)
SEED = 0


@dataclass
class PercentileTable:
    """Sorted reference scores per bin of token counts (``starts[i]``: the bin's smallest count)."""

    starts: list[int]
    scores: list[np.ndarray]  # float64, sorted ascending, one array per bin
    reference: str  # what the sample was drawn from

    def percentile(self, scores: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """100 x (reference scores below + half the equal ones) / bin size, for each
        (score, token count); NaN where the count is 0 or the score is NaN."""
        scores = np.asarray(scores, dtype=np.float64)
        counts = np.asarray(counts)
        bins = np.clip(np.searchsorted(self.starts, counts, side="right") - 1, 0, len(self.starts) - 1)
        out = np.full(len(scores), np.nan)
        for b in np.unique(bins):
            rows = np.flatnonzero(bins == b)
            reference = self.scores[b]
            below = np.searchsorted(reference, scores[rows], side="left")
            upto = np.searchsorted(reference, scores[rows], side="right")
            out[rows] = 100.0 * (below + 0.5 * (upto - below)) / len(reference)
        out[(counts <= 0) | np.isnan(scores)] = np.nan
        return out

    def save(self, model_dir: str | os.PathLike[str]) -> None:
        """Write ``percentiles.json`` into the model directory, atomically: one line per bin."""
        bins = ",\n".join(json.dumps(s.tolist(), separators=(",", ":")) for s in self.scores)
        write_text(Path(model_dir) / FILE, f'{{"reference": {json.dumps(self.reference)},\n'
                                           f'"starts": {json.dumps(self.starts)},\n"scores": [\n{bins}]}}\n')

    @classmethod
    def load(cls, model_dir: str | os.PathLike[str]) -> "PercentileTable | None":
        """The model's table, or None if it has none; a one-line error for a damaged file."""
        path = Path(model_dir) / FILE
        if not os.path.lexists(path):
            return None
        fields = read_json_file(path, MAX_JSON_BYTES, "percentile table")  # a regular file, bounded; one line
        problem = _table_problem(fields)
        if problem:
            raise InvalidValueError(f"{path}: damaged percentile table ({problem})")
        return cls(list(fields["starts"]), [np.asarray(s, dtype=np.float64) for s in fields["scores"]],
                   fields["reference"])


def _table_problem(fields: object) -> str | None:
    """What is wrong with a table file's content, or None."""
    if not isinstance(fields, dict) or set(fields) != {"reference", "starts", "scores"}:
        return "a JSON object with reference, starts and scores is expected"
    starts, scores = fields["starts"], fields["scores"]
    if not isinstance(fields["reference"], str) or not isinstance(starts, list) or not isinstance(scores, list):
        return "reference must be a string, starts and scores lists"
    if not starts or len(starts) != len(scores):
        return "starts and scores must be non-empty lists of the same length"
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in starts) or starts != sorted(set(starts)):
        return "starts must be increasing whole numbers >= 1"
    for values in scores:
        if (not isinstance(values, list) or not values
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in values)
                or values != sorted(values)):
            return "each bin's scores must be a non-empty sorted list of finite numbers"
    return None


def reference_sample(pairs_file: str | os.PathLike[str], per_source: int = PER_SOURCE,
                     seed: int = SEED) -> list[str]:
    """A fixed sample of a pairs file's first sides: up to ``per_source`` distinct sentences of
    each source (third field; one source where there is none), drawn with ``seed``, in
    the file's order. The same file gives the same sample."""
    by_source: dict[str, list[str]] = {}
    seen: set[str] = set()
    with open(pairs_file, "rb") as head:
        opener = gzip.open if head.read(2) == b"\x1f\x8b" else open
    with opener(pairs_file, "rb") as handle:  # lines of a bounded length: /dev/zero is one line of error
        for line in iter_lines(handle, str(pairs_file)):
            fields = line.split("\t")
            if len(fields) < 2 or not fields[0].strip() or fields[0] in seen:
                continue
            seen.add(fields[0])
            by_source.setdefault(fields[2] if len(fields) > 2 else "", []).append(fields[0])
    rng = np.random.default_rng(seed)
    sample: list[str] = []
    for source in sorted(by_source):
        sentences = by_source[source]
        keep = np.sort(rng.choice(len(sentences), size=min(per_source, len(sentences)), replace=False))
        sample.extend(sentences[i] for i in keep)
    return sample


def build_table(scores: np.ndarray, counts: np.ndarray, reference: str, per_bin: int = PER_BIN,
                min_per_bin: int = MIN_PER_BIN, seed: int = SEED) -> PercentileTable:
    """The table of reference sentences' ``scores`` and token ``counts``: bins of consecutive
    counts holding at least ``min_per_bin`` sentences (the last bin takes what is left over),
    each keeping the sorted scores of at most ``per_bin`` of them (drawn with ``seed``)."""
    scores, counts = np.asarray(scores, dtype=np.float64), np.asarray(counts)
    keep = (counts > 0) & np.isfinite(scores)
    scores, counts = scores[keep], counts[keep]
    if len(scores) < min_per_bin:
        raise InvalidValueError(f"{reference}: {len(scores)} usable reference sentences, "
                                f"a percentile table needs at least {min_per_bin}")
    starts, members, current, start = [], [], [], None
    for length in np.unique(counts):
        rows = np.flatnonzero(counts == length)
        if start is None:
            start = int(length)
        current.extend(rows.tolist())
        if len(current) >= min_per_bin:
            starts.append(start)
            members.append(current)
            current, start = [], None
    if current:  # fewer than min_per_bin left at the long end: they join the last bin
        members[-1].extend(current)
    rng = np.random.default_rng(seed)
    kept = [np.sort(np.round(scores[rng.choice(m, size=per_bin, replace=False) if len(m) > per_bin else m],
                             DECIMALS)) for m in members]
    return PercentileTable(starts, kept, reference)
