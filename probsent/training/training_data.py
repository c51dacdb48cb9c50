"""What a run trains on, built from its settings: the corpus read and cached, the mixture
(per-source caps, token and overlap filters, ``--resample-like``), the pairs of the later epochs
(``--then-min-overlap``), the vocabulary with each word's training count, and every sentence's
word ids under that vocabulary."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from probsent.data.corpus import PairCorpus, load_corpus
from probsent.data.mixture import apply_mixture, word_overlap
from probsent.data.resample import resampled_like
from probsent.data.vocab import Vocabulary
from probsent.errors import ProbsentError
from probsent.training.config import TrainConfig


@dataclass
class TrainingData:
    corpus: PairCorpus
    close_pairs: np.ndarray | None  # loose then close: the pairs of every epoch after the first
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
    read = load_corpus(config.data, config.max_pairs, config.max_tokens, progress=progress)
    corpus = apply_mixture(read, max_per_source=config.max_per_source, source_caps=config.source_caps,
                           min_tokens=config.min_tokens, min_overlap=config.min_overlap,
                           max_overlap=config.max_overlap)
    if config.resample_like is not None:
        corpus = resampled_like(corpus, config.resample_like, config.resample_pairs, config.max_tokens, log)
    log(f"data: {corpus.report['summary']}")
    if corpus.num_pairs != read.num_pairs or len(read.sources) > 1:
        mix = ", ".join(f"{name or '(none)'} {n:,}" for name, n in corpus.report["mixture"]["pairs_per_source"].items())
        log(f"training mixture: {corpus.num_pairs:,} pairs: {mix}")
    close_pairs = None
    if config.then_min_overlap > 0.0:
        close_pairs = np.flatnonzero(word_overlap(corpus) >= config.then_min_overlap)
        if not len(close_pairs):
            raise ProbsentError(f"{config.data}: no training pair overlaps at least "
                                f"{config.then_min_overlap} (--then-min-overlap)")
        log(f"loose then close: epochs after the first train on {len(close_pairs):,} pairs "
            f"of word overlap >= {config.then_min_overlap}")
    kept = min(config.vocab_size, int(np.sum(corpus.counts >= config.min_count)))
    vocab = corpus.vocabulary(kept)
    return TrainingData(corpus, close_pairs, vocab, vocabulary_counts(corpus.counts, kept),
                        corpus.model_ids(len(vocab)))
