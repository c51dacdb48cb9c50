"""A training mixture resampled to the shape of a reference pair set (ours, off by default).

ParaNMT, the paper's training data, pairs sentences of median 10 tokens whose word sets overlap
by a median Jaccard of 0.44; the shared pairs are mostly looser (image captions, 0.24) or
longer and closer (Bible versions, 0.59, 21 tokens). ``--resample-like REF`` keeps, from every
cell of a (word overlap x mean length) grid, as many pairs as the reference's share of that
cell asks for in a mixture of ``--resample-pairs`` pairs, or all the cell has where it has
fewer: the result follows the reference's joint distribution except in the cells the training
file is short of. Deterministic: the pairs of a cell are taken evenly spaced over it.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from probsent.data.corpus import PairCorpus
from probsent.data.mixture import source_counts, subset, word_overlap
from probsent.errors import ProbsentError
from probsent.text.tokenize import tokenize

OVERLAP_BINS = 10  # Jaccard overlap in [0, 0.1), ..., [0.9, 1]
LENGTH_EDGES = (6, 9, 12, 16, 21, 31)  # mean tokens of the two sides: <6, 6-8, ..., >=31
CELLS = OVERLAP_BINS * (len(LENGTH_EDGES) + 1)
# the ParaNMT sample's layout: line-aligned reference and paraphrase files
PARANMT_SIDES = ("test-10000-ref-sents.txt", "test-10000-para-sents.txt")


def grid_cells(overlap: np.ndarray, mean_length: np.ndarray) -> np.ndarray:
    """The grid cell of pairs of the given word overlaps and mean side lengths (tokens)."""
    overlap_bin = np.minimum((np.asarray(overlap) * OVERLAP_BINS).astype(np.int64), OVERLAP_BINS - 1)
    return overlap_bin * (len(LENGTH_EDGES) + 1) + np.digitize(np.asarray(mean_length), LENGTH_EDGES)


def corpus_cells(corpus: PairCorpus) -> np.ndarray:
    """The grid cell of every pair of a training corpus."""
    lengths = np.diff(corpus.offsets)
    return grid_cells(word_overlap(corpus), (lengths[0::2] + lengths[1::2]) / 2.0)


def reference_cells(path: str | os.PathLike[str], max_tokens: int = 100) -> np.ndarray:
    """The grid cell of every pair of a reference (:func:`reference_pair_lines`), tokenized by
    probsent's tokenizer and cut to ``max_tokens`` like training sentences."""
    overlaps, mean_lengths = [], []
    for line in reference_pair_lines(path):
        first, second = (tokenize(side)[:max_tokens] for side in line.split("\t")[:2])
        if not first or not second:
            continue
        words1, words2 = set(first), set(second)
        overlaps.append(len(words1 & words2) / len(words1 | words2))
        mean_lengths.append((len(first) + len(second)) / 2.0)
    return grid_cells(np.array(overlaps), np.array(mean_lengths))


def reference_pair_lines(path: str | os.PathLike[str]) -> list[str]:
    """``s1<TAB>s2`` lines of a reference: a pair file, or a directory in the ParaNMT sample's
    layout (two line-aligned sentence files, plus any ``*.txt`` pair file beside them)."""
    path = Path(path)
    if path.is_file():
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    if not path.is_dir():
        raise ProbsentError(f"{path}: no such file or directory (--resample-like)")
    sides = [path / name for name in PARANMT_SIDES]
    lines: list[str] = []
    if all(side.is_file() for side in sides):
        first, second = (side.read_text(encoding="utf-8", errors="replace").splitlines() for side in sides)
        if len(first) != len(second):
            raise ProbsentError(f"{path}: {PARANMT_SIDES[0]} has {len(first)} lines, "
                                f"{PARANMT_SIDES[1]} {len(second)}")
        lines += [f"{a}\t{b}" for a, b in zip(first, second)]
    for extra in sorted(path.glob("*.txt")):
        if extra.name not in PARANMT_SIDES:
            lines += [line for line in extra.read_text(encoding="utf-8", errors="replace").splitlines()
                      if line.count("\t") >= 1]
    if not lines:
        raise ProbsentError(f"{path}: no sentence pairs (--resample-like)")
    return lines


def cell_shares(cells: np.ndarray) -> np.ndarray:
    """The share of pairs in each grid cell."""
    return np.bincount(cells, minlength=CELLS) / max(len(cells), 1)


def resample_like(cells: np.ndarray, reference_cells: np.ndarray, size: int) -> np.ndarray:
    """Indices (ascending) of the pairs kept: from every cell, round(size x the reference's share
    of the cell) pairs, or every pair of the cell where it has fewer, evenly spaced."""
    wanted = np.rint(size * cell_shares(reference_cells)).astype(np.int64)
    chosen = [np.zeros(0, dtype=np.int64)]
    order = np.argsort(cells, kind="stable")
    bounds = np.searchsorted(cells[order], np.arange(CELLS + 1))
    for cell in range(CELLS):
        rows = order[bounds[cell]:bounds[cell + 1]]
        take = min(int(wanted[cell]), len(rows))
        if take:
            chosen.append(rows[np.linspace(0, len(rows) - 1, take).round().astype(np.int64)])
    return np.sort(np.concatenate(chosen))


def total_variation(cells: np.ndarray, reference_cells: np.ndarray) -> float:
    """Total variation distance between two pair sets' cell distributions (0 = the same shape)."""
    return float(np.abs(cell_shares(cells) - cell_shares(reference_cells)).sum() / 2.0)


def resampled_like(corpus: PairCorpus, reference: str | os.PathLike[str], size: int, max_tokens: int,
                   log: Callable[[str], None]) -> PairCorpus:
    """The training corpus resampled by :func:`resample_like` (its report's ``mixture`` entry
    gains the reference, the size and the shape distances before and after)."""
    cells, wanted = corpus_cells(corpus), reference_cells(reference, max_tokens)
    rows = resample_like(cells, wanted, size)
    if len(rows) < 2:
        raise ProbsentError(f"--resample-like {reference}: the resampled mixture keeps {len(rows)} pair(s)")
    before, after = total_variation(cells, wanted), total_variation(cells[rows], wanted)
    log(f"resampled like {reference}: {len(rows):,} of {corpus.num_pairs:,} pairs; shape distance "
        f"(total variation over {CELLS} overlap x length cells) {before:.3f} -> {after:.3f}")
    chosen = subset(corpus, rows)
    mixture = {**corpus.report.get("mixture", {}), "resample_like": str(reference), "resample_pairs": size,
               "pairs": chosen.num_pairs, "shape_distance_before": before, "shape_distance_after": after,
               "pairs_per_source": source_counts(chosen)}
    return replace(chosen, report={**chosen.report, "mixture": mixture})
