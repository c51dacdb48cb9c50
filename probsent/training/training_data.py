"""What a run trains on, built from its settings: the pairs read and mapped, the mixture (per-source
caps, token and overlap filters) as an index into it, the vocabulary with each word's training
count, and the table that turns the mapped pairs' word ranks into the vocabulary's ids as a step reads
its sentences (no copy of the pairs' tokens)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.data.mixture import Mixture, apply_mixture
from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.settings import TrainConfig


@dataclass
class TrainingData:
    mixture: Mixture  # the pairs trained on (pair i: the mixture's pair i)
    vocab: Vocabulary
    word_counts: np.ndarray  # the training count of each vocabulary word
    rank_ids: np.ndarray  # int64: each mapped word rank's vocabulary id (0: <unk>)

    @property
    def num_pairs(self) -> int:
        return self.mixture.num_pairs

    @property
    def report(self) -> dict:
        return self.mixture.report

    def sentences(self, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ids, offsets) of the mixture's ``sentences`` (2i: s1 of pair i, 2i + 1: its s2) under
        the vocabulary: sentence ``sentences[j]`` is ``ids[offsets[j]:offsets[j + 1]]``."""
        return self.mixture.sentences(sentences, self.rank_ids)


def vocabulary_counts(counts: np.ndarray, kept: int) -> np.ndarray:
    """The training count of each vocabulary word (``<unk>`` first, then the ``kept`` most
    frequent words of pairs whose ``counts`` are sorted); ``<unk>`` (every rarer word)
    counts as the rarest kept word."""
    known = counts[:kept]
    return np.concatenate([[known[-1] if kept else 1], known]).astype(np.int64)


def build_vocabulary(mixture: Mixture, vocab_size: int, min_count: int) -> tuple[Vocabulary, np.ndarray, np.ndarray]:
    """(vocabulary, each entry's training count, each mapped rank's id): ``<unk>`` and the
    ``vocab_size`` most frequent words of the training pairs seen at least ``min_count`` times.
    The one place where the words that get an entry, and their counts, are chosen."""
    kept = min(vocab_size, int(np.sum(mixture.counts >= min_count)))
    vocab = Vocabulary([UNKNOWN] + mixture.words[:kept])
    ranks = np.arange(len(mixture.words), dtype=np.int64)
    ids_of_ranks = np.where(ranks < kept, ranks + 1, 0)
    return vocab, vocabulary_counts(mixture.counts, kept), mixture.word_table(ids_of_ranks)


def build_training_data(config: TrainConfig, log: Callable[[str], None], progress: bool) -> TrainingData:
    """The run's data, each step said in ``log``; a one-line error where nothing is left to train on."""
    read = load_mapped_pairs(config.data, config.max_pairs, progress=progress, columns=config.columns)
    mixture = apply_mixture(read, source_caps=config.source_caps, min_tokens=config.min_tokens,
                            min_overlap=config.min_overlap, max_overlap=config.max_overlap)
    log(f"data: {mixture.report['summary']}")
    if mixture.num_pairs != read.num_pairs or len(read.sources) > 1:
        per_source = mixture.report["mixture"]["pairs_per_source"]
        mix = ", ".join(f"{name or '(none)'} {n:,}" for name, n in per_source.items())
        log(f"training mixture: {mixture.num_pairs:,} pairs: {mix}")
    vocab, counts, rank_ids = build_vocabulary(mixture, config.vocab_size, config.min_count)
    return TrainingData(mixture, vocab, counts, rank_ids)
