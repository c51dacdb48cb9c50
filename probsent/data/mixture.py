"""The training mixture: which pairs of a corpus a run learns from.

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

The selected pairs form a new corpus whose word ranks are recounted, so the model vocabulary
is the most frequent words of what is actually trained on.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from probsent.data.corpus import PairCorpus
from probsent.errors import ProbsentError


def _pair_of_token(corpus: PairCorpus, side: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair index, word rank) of every token on ``side`` (0: s1, 1: s2) of every pair."""
    lengths = np.diff(corpus.offsets)
    sentence = np.repeat(np.arange(len(lengths)), lengths)
    on_side = sentence % 2 == side
    return sentence[on_side] // 2, corpus.tokens[on_side].astype(np.int64)


def _distinct(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sorting is much faster here than ``np.unique``'s hashing)."""
    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys


def word_overlap(corpus: PairCorpus) -> np.ndarray:
    """Jaccard overlap |W1 & W2| / |W1 | W2| of the word sets of the two sides of every pair."""
    width = len(corpus.words)
    sets = []
    for side in (0, 1):
        pair, word = _pair_of_token(corpus, side)
        sets.append(_distinct(pair * width + word))  # each (pair, word) once
    shared = np.intersect1d(sets[0], sets[1], assume_unique=True)
    count = lambda keys: np.bincount(keys // width, minlength=corpus.num_pairs)  # noqa: E731
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


def select_pairs(corpus: PairCorpus, *, max_per_source: int | None = None,
                 source_caps: dict[str, int] | None = None, min_tokens: int = 1,
                 min_overlap: float = 0.0, max_overlap: float = 1.0) -> np.ndarray:
    """Indices (ascending) of the pairs kept by the filters of this module."""
    lengths = np.diff(corpus.offsets)
    keep = np.minimum(lengths[0::2], lengths[1::2]) >= min_tokens
    if max_overlap < 1.0 or min_overlap > 0.0:
        overlap = word_overlap(corpus)
        keep &= (overlap <= max_overlap) & (overlap >= min_overlap)
    kept = np.flatnonzero(keep)
    caps = source_caps or {}
    names = corpus.sources or [""]
    unknown = set(caps) - set(names)
    if unknown:
        raise ProbsentError(f"--source-caps: no source named {', '.join(sorted(unknown))} "
                            f"(sources: {', '.join(names)})")
    if max_per_source is None and not caps:
        return kept
    sources = _sources(corpus)[kept]
    chosen = [np.zeros(0, dtype=np.int64)]
    for source in np.unique(sources):
        rows = kept[sources == source]
        cap = caps.get(names[source], max_per_source)
        if cap is not None and len(rows) > cap:
            rows = rows[np.linspace(0, len(rows) - 1, cap).round().astype(np.int64)] if cap else rows[:0]
        chosen.append(rows)
    return np.sort(np.concatenate(chosen))


def _sources(corpus: PairCorpus) -> np.ndarray:
    if corpus.pair_sources is None:
        return np.zeros(corpus.num_pairs, dtype=np.int16)
    return corpus.pair_sources


def source_counts(corpus: PairCorpus) -> dict[str, int]:
    """Pairs per source, largest first (a file without a source column counts as one "")."""
    names = corpus.sources or [""]
    counts = Counter(names[i] for i in _sources(corpus).tolist())
    return dict(counts.most_common())


def subset(corpus: PairCorpus, pairs: np.ndarray) -> PairCorpus:
    """The corpus of ``pairs`` only, with word ranks recounted on it (ties alphabetically)."""
    sentences = np.stack([2 * pairs, 2 * pairs + 1], axis=1).ravel()
    starts, lengths = corpus.offsets[sentences], np.diff(corpus.offsets)[sentences]
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    positions = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    tokens = corpus.tokens[positions]
    counts = np.bincount(tokens, minlength=len(corpus.words))
    used = np.flatnonzero(counts)
    alphabetical = np.empty(len(used), dtype=np.int64)
    alphabetical[np.argsort(np.array([corpus.words[i] for i in used], dtype=object))] = np.arange(len(used))
    order = used[np.lexsort((alphabetical, -counts[used]))]  # by count, then alphabetically
    new_rank = np.empty(len(corpus.words), dtype=np.int32)
    new_rank[order] = np.arange(len(order), dtype=np.int32)
    pair_sources = None if corpus.pair_sources is None else corpus.pair_sources[pairs]
    return replace(corpus, tokens=new_rank[tokens], offsets=offsets,
                   words=[corpus.words[i] for i in order], counts=counts[order].astype(np.int64),
                   report=dict(corpus.report), pair_sources=pair_sources)


def apply_mixture(corpus: PairCorpus, *, source_caps: str | None = None, min_tokens: int = 1,
                  min_overlap: float = 0.0, max_overlap: float = 1.0) -> PairCorpus:
    """The corpus after the filters (``corpus`` itself is left as it is), ``source_caps`` as
    ``--source-caps`` takes it (``*=N``: every other source); the result's report gains a
    ``mixture`` entry (settings and pairs per source)."""
    caps = parse_source_caps(source_caps)
    max_per_source = caps.pop("*", None)
    pairs = select_pairs(corpus, max_per_source=max_per_source, source_caps=caps,
                         min_tokens=min_tokens, min_overlap=min_overlap, max_overlap=max_overlap)
    if len(pairs) < min(2, corpus.num_pairs):  # the filters left nothing to contrast
        raise ProbsentError(f"the training mixture keeps {len(pairs)} pair(s); loosen --source-caps"
                            f" / --min-tokens / --min-overlap / --max-overlap")
    chosen = corpus if len(pairs) == corpus.num_pairs else subset(corpus, pairs)
    mixture = {"max_per_source": max_per_source, "source_caps": caps, "min_tokens": min_tokens,
               "max_overlap": max_overlap, "min_overlap": min_overlap, "pairs": chosen.num_pairs,
               "pairs_per_source": source_counts(chosen)}
    return replace(chosen, report={**chosen.report, "mixture": mixture})
