"""The training mixture: which of the training pairs a run learns from.

Three optional, deterministic filters, applied in this order:

- ``min_tokens``: drop pairs with a side shorter than this many tokens;
- ``max_overlap``: drop pairs whose two sides share too many words (Jaccard overlap of their
  word sets above this value; 1.0 keeps all, 0.99 drops exact and reordered copies);
- ``min_overlap``: drop pairs whose sides share too few words (loose paraphrases, such as two
  captions of one image; 0.0 keeps all);
- ``max_per_source``: keep at most this many pairs of each source (the file's third column),
  evenly spaced over that source's remaining pairs so that every part of it is represented;
  ``source_caps`` ("name=N,name=N") sets the cap of single sources (N = 0 drops a source);
  in the text ``--source-caps`` takes, ``*=N`` is ``max_per_source`` (every source not named).

The selected pairs are a :class:`Mixture`: the mapped pairs (their arrays stay mapped), the kept pairs
as an index, and the words recounted on those pairs, so the model vocabulary is the most
frequent words of what is actually trained on; nothing of the size of the pair file is copied.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from probsent.data.mapped_pairs import MappedPairs, gather_sentences
from probsent.errors import ProbsentError


def _pair_of_token(mapped: MappedPairs, side: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair index, word rank) of every token on ``side`` (0: s1, 1: s2) of every pair."""
    lengths = np.diff(mapped.offsets)
    sentence = np.repeat(np.arange(len(lengths)), lengths)
    on_side = sentence % 2 == side
    return sentence[on_side] // 2, mapped.tokens[on_side].astype(np.int64)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sorting is much faster here than ``np.unique``'s hashing)."""
    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys


def word_overlap(mapped: MappedPairs) -> np.ndarray:
    """Jaccard overlap |W1 & W2| / |W1 | W2| of the word sets of the two sides of every pair."""
    width = len(mapped.words)
    sets = []
    for side in (0, 1):
        pair, word = _pair_of_token(mapped, side)
        sets.append(_distinct(pair * width + word))  # each (pair, word) once
    shared = np.intersect1d(sets[0], sets[1], assume_unique=True)
    count = lambda keys: np.bincount(keys // width, minlength=mapped.num_pairs)  # noqa: E731
    both, first, second = count(shared), count(sets[0]), count(sets[1])
    return both / np.maximum(first + second - both, 1)


def parse_source_caps(text: str | None) -> dict[str, int]:
    """``"bible=0,captions=5000,*=100"`` -> {"bible": 0, "captions": 5000, "*": 100}; ProbsentError if malformed."""
    caps: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, _, count = item.partition("=")
        if not name.strip() or not count.strip().isdigit():
            raise ProbsentError(f"--source-caps: {item.strip()!r} is not NAME=COUNT")
        caps[name.strip()] = int(count)
    return caps


def select_pairs(mapped: MappedPairs, *, max_per_source: int | None = None,
                 source_caps: dict[str, int] | None = None, min_tokens: int = 1,
                 min_overlap: float = 0.0, max_overlap: float = 1.0) -> np.ndarray:
    """Indices (ascending) of the pairs kept by the filters of this module."""
    lengths = np.diff(mapped.offsets)
    keep = np.minimum(lengths[0::2], lengths[1::2]) >= min_tokens
    if max_overlap < 1.0 or min_overlap > 0.0:
        overlap = word_overlap(mapped)
        keep &= (overlap <= max_overlap) & (overlap >= min_overlap)
    kept = np.flatnonzero(keep)
    caps = source_caps or {}
    names = mapped.sources or [""]
    unknown = set(caps) - set(names)
    if unknown:
        raise ProbsentError(f"--source-caps: no source named {', '.join(sorted(unknown))} "
                            f"(sources: {', '.join(names)})")
    if max_per_source is None and not caps:
        return kept
    sources = _sources(mapped)[kept]
    chosen = [np.zeros(0, dtype=np.int64)]
    for source in np.unique(sources):
        rows = kept[sources == source]
        cap = caps.get(names[source], max_per_source)
        if cap is not None and len(rows) > cap:
            rows = rows[np.linspace(0, len(rows) - 1, cap).round().astype(np.int64)] if cap else rows[:0]
        chosen.append(rows)
    return np.sort(np.concatenate(chosen))


def _sources(mapped: MappedPairs) -> np.ndarray:
    if mapped.pair_sources is None:
        return np.zeros(mapped.num_pairs, dtype=np.int32)
    return np.asarray(mapped.pair_sources)


def source_counts(mapped: MappedPairs, pairs: np.ndarray | None = None) -> dict[str, int]:
    """Pairs per source (of ``pairs`` only, where given), largest first (a file without a source
    column counts as one "")."""
    names = mapped.sources or [""]
    sources = _sources(mapped) if pairs is None else _sources(mapped)[pairs]
    present, first, counts = np.unique(sources, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))  # largest first, ties in order of appearance
    return {names[present[i]]: int(counts[i]) for i in order}


RECOUNT_PAIRS = 1 << 18  # pairs gathered at a time while recounting


def recount(mapped: MappedPairs, pairs: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(words, counts, ranks) of the ``pairs`` of ``mapped``: the words they use by decreasing count
    (ties alphabetically), each word's count, and each mapped rank's rank among them (-1 for a
    word they do not use); the tokens are read a slice of pairs at a time."""
    counts = np.zeros(len(mapped.words), dtype=np.int64)
    for start in range(0, len(pairs), RECOUNT_PAIRS):
        chunk = pairs[start:start + RECOUNT_PAIRS]
        ids, _ = mapped.sentences(np.stack([2 * chunk, 2 * chunk + 1], axis=1).ravel())
        counts += np.bincount(ids, minlength=len(counts))
    used = np.flatnonzero(counts)
    alphabetical = np.empty(len(used), dtype=np.int64)
    alphabetical[np.argsort(np.array([mapped.words[i] for i in used], dtype=object))] = np.arange(len(used))
    order = used[np.lexsort((alphabetical, -counts[used]))]  # by count, then alphabetically
    ranks = np.full(len(mapped.words), -1, dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return [mapped.words[i] for i in order], counts[order], ranks


@dataclass
class Mixture:
    """The training pairs a run trains on: an index into the mapped pairs (whose arrays stay
    mapped) and their words recounted. Pair i of the mixture is pair ``pairs[i]`` of ``mapped``;
    sentence 2i + s its side s."""

    mapped: MappedPairs
    pairs: np.ndarray | None  # the mapped pairs kept, ascending (None: every pair)
    words: list[str]  # the words of the kept pairs, by decreasing count (ties alphabetically)
    counts: np.ndarray  # int64: the count of each of ``words`` in the kept pairs
    ranks: np.ndarray | None  # each mapped rank's rank in ``words`` (-1: unused); None: the same
    report: dict  # the mapped pairs' report and a ``mixture`` entry

    @property
    def num_pairs(self) -> int:
        return self.mapped.num_pairs if self.pairs is None else len(self.pairs)

    def mapped_sentences(self, sentences: np.ndarray) -> np.ndarray:
        """The mapped pairs' number of each of the mixture's ``sentences``."""
        sentences = np.asarray(sentences, dtype=np.int64)
        return sentences if self.pairs is None else 2 * self.pairs[sentences // 2] + sentences % 2

    def word_table(self, ids_of_ranks: np.ndarray) -> np.ndarray:
        """``ids_of_ranks`` (indexed by the mixture's ranks) indexed by the mapped pairs' ranks (0
        for a word the mixture does not use)."""
        if self.ranks is None:
            return ids_of_ranks
        return np.where(self.ranks >= 0, ids_of_ranks[np.maximum(self.ranks, 0)], 0)

    def sentences(self, sentences: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, offsets) of the mixture's ``sentences``, compact, each token's mapped rank looked
        up in ``table`` (:meth:`word_table`)."""
        return gather_sentences(self.mapped.tokens, self.mapped.offsets, self.mapped_sentences(sentences), table)

    def as_mapped_pairs(self) -> MappedPairs:
        """The mixture as mapped pairs of its own (its tokens copied, ranked by ``words``): for the
        evaluation's analyses of a finished model, not for training."""
        if self.pairs is None:
            return replace(self.mapped, report=self.report)
        ids, offsets = self.sentences(np.arange(2 * len(self.pairs)), self.ranks)
        sources = None if self.mapped.pair_sources is None else np.asarray(self.mapped.pair_sources)[self.pairs]
        return replace(self.mapped, tokens=ids.astype(np.int32), offsets=offsets, words=self.words,
                       counts=self.counts, report=self.report, pair_sources=sources)


def apply_mixture(mapped: MappedPairs, *, source_caps: str | None = None, min_tokens: int = 1,
                  min_overlap: float = 0.0, max_overlap: float = 1.0) -> Mixture:
    """The mapped pairs after the filters, ``source_caps`` as ``--source-caps`` takes it (``*=N``: every
    other source); the result's report gains a ``mixture`` entry (settings and pairs per source)."""
    caps = parse_source_caps(source_caps)
    max_per_source = caps.pop("*", None)
    pairs = select_pairs(mapped, max_per_source=max_per_source, source_caps=caps,
                         min_tokens=min_tokens, min_overlap=min_overlap, max_overlap=max_overlap)
    if len(pairs) < min(2, mapped.num_pairs):  # the filters left nothing to contrast
        raise ProbsentError(f"the training mixture keeps {len(pairs)} pair(s); loosen --source-caps"
                            f" / --min-tokens / --min-overlap / --max-overlap")
    if len(pairs) == mapped.num_pairs:
        kept, words, counts, ranks = None, mapped.words, mapped.counts, None
    else:
        kept = pairs
        words, counts, ranks = recount(mapped, pairs)
    mixture = {"max_per_source": max_per_source, "source_caps": caps, "min_tokens": min_tokens,
               "max_overlap": max_overlap, "min_overlap": min_overlap, "pairs": len(pairs),
               "pairs_per_source": source_counts(mapped, kept)}
    return Mixture(mapped, kept, words, counts, ranks, {**mapped.report, "mixture": mixture})
