"""What a run trains on, built from its settings: the corpus read and cached, the mixture (per-source
caps, token and overlap filters), the vocabulary with each word's training count, and every
sentence's word ids under that vocabulary."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from probsent.data.corpus import PairCorpus, load_corpus
from probsent.data.mixture import apply_mixture
from probsent.data.vocab import Vocabulary
from probsent.training.config import TrainConfig


@dataclass
class TrainingData:
    corpus: PairCorpus
    vocab: Vocabulary
    word_counts: np.ndarray  # the training count of each vocabulary word
    ids: np.ndarray  # every sentence's word ids under ``vocab``


def vocabulary_counts(counts: np.ndarray, kept: int) -> np.ndarray:
    """The training count of each vocabulary word (``<unk>`` first, then the ``kept`` most
    frequent words of a corpus whose ``counts`` are sorted); ``<unk>`` (every rarer word)
    counts as the rarest kept word."""
    known = counts[:kept]
    return np.concatenate([[known[-1] if kept else 1], known]).astype(np.int64)


def build_training_data(config: TrainConfig, log: Callable[[str], None], progress: bool) -> TrainingData:
    """The run's data, each step said in ``log``; a one-line error where nothing is left to train on."""
    read = load_corpus(config.data, progress=progress)
    corpus = apply_mixture(read, source_caps=config.source_caps, min_tokens=config.min_tokens,
                           min_overlap=config.min_overlap, max_overlap=config.max_overlap)
    log(f"data: {corpus.report['summary']}")
    if corpus.num_pairs != read.num_pairs or len(read.sources) > 1:
        mix = ", ".join(f"{name or '(none)'} {n:,}" for name, n in corpus.report["mixture"]["pairs_per_source"].items())
        log(f"training mixture: {corpus.num_pairs:,} pairs: {mix}")
    kept = min(config.vocab_size, int(np.sum(corpus.counts >= config.min_count)))
    vocab = corpus.vocabulary(kept)
    return TrainingData(corpus, vocab, vocabulary_counts(corpus.counts, kept), corpus.model_ids(len(vocab)))
