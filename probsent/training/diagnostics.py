"""What moved inside a model: the numbers that say why a run learns specificity, or not.

Logged at every validation of ``probsent train`` (``log.jsonl``, plotted in the report) and
shown by ``probsent eval`` for a finished model (the recipe study, reproduction/docs/EXPERIMENTS.md):

- ``term_count_spearman``: Spearman correlation of a word's entropy term (WLO's sum_d log|A_w,d|)
  with the log of its training count. Specific words are rare, so a model whose variances learned
  specificity has a clearly *positive* value (frequent words: larger terms, more general).
- ``frequent_term``: the mean term of the 20 most frequent words: positive when function words
  make a sentence more general, as they should.
- ``negatives_sharing_more``: share of mined negatives that share more distinct words with their
  sentence than its own partner does (likely false negatives).
- ``active_hinge``: share of margin terms max(0, margin - d(s, partner) + d(s, negative)) above zero.
- ``prior_gradient_share``: ||gradient of lambda * KL / batch|| over ||gradient of the margin loss||,
  both with respect to the weights of the entropy terms (WLO's scales A): whether the prior acts.

The first two and the last need per-word entropy terms (the last, a prior too). The sample is the
same training pairs at every validation, encoded without scrambling, so the numbers move only
because the model does.

Why a model trained from scratch scores around -69 where the shipped model scores around +39.

Training starts every sentence at the paper's z_0 ~ N(0, I); the shipped WLO was written by
``probsent export --start-variance S`` with S = 1/64, which multiplies every variance by S (and
every mean by sqrt(S)). Minus the entropy, 1/2 sum_d log(1 / (2 pi e var_d)), then grows by the
same amount for every sentence: dim / 2 x log(1 / S), 25 x log 64 = 104.0 nats for dim 50. Rankings,
percentiles and P(specific) do not change; scores of two models are comparable only in one unit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from probsent.model_directory import DEFAULT_MODEL, read_config
from probsent.models import SentenceEncoder, with_word_entropy_terms
from probsent.models.batching import encode_by_length
from probsent.models.training_similarity import paired_similarity
from probsent.training.fast.engine import mine_fastest
from probsent.training.losses import KLPrior, MarginLoss, TrainingStep
from probsent.training.mining import partners_of_stacked_pairs


def shipped_start_variance() -> float:
    """The start variance the shipped model was written with (its config.json)."""
    return float(read_config(DEFAULT_MODEL)["model"]["start_variance"])


def unit_shift(dim: int, start_variance: float) -> float:
    """How much every score (minus the entropy, nats) of a WLO trained with z_0 ~ N(0, I) grows
    when it is written with z_0 ~ N(0, start_variance I): dim / 2 x log(1 / start_variance)."""
    return dim / 2 * math.log(1.0 / start_variance)


def unit_note(model_type: str, dim: int) -> str:
    """The clause ``train``'s last line adds for a WLO: its scores' unit against the shipped model's."""
    if model_type != "wlo":
        return ""
    start = shipped_start_variance()
    return (f" (its scores are in training's unit, z_0 ~ N(0, I): the shipped model was written with "
            f"--start-variance {start:g}, which adds {unit_shift(dim, start):.1f} to every score of a "
            f"{dim}-dimensional model and changes no ranking; `probsent export --start-variance {start:g}` "
            f"writes this one in that unit; docs/TRAINING.md)")

FREQUENT_WORDS = 20
SAMPLE_PAIRS = 2000


def word_sets(ids: np.ndarray, offsets: np.ndarray, sentences: np.ndarray) -> sp.csr_matrix:
    """A 0/1 matrix [len(sentences), vocabulary]: which known words (id > 0) each sentence has."""
    starts, ends = offsets[sentences], offsets[sentences + 1]
    rows = np.repeat(np.arange(len(sentences)), ends - starts)
    cols = np.concatenate([ids[s:e] for s, e in zip(starts, ends)]) if len(sentences) else np.zeros(0, np.int64)
    known = cols > 0
    width = int(cols.max()) + 1 if len(cols) else 1
    matrix = sp.csr_matrix((np.ones(int(known.sum()), np.int32), (rows[known], cols[known])),
                           shape=(len(sentences), width))
    matrix.data[:] = 1  # a repeated word counts once (duplicates were summed)
    return matrix


def shared_word_counts(words: sp.csr_matrix, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of distinct words row ``a[k]`` shares with row ``b[k]`` of ``words``, for each k."""
    return np.asarray(words[a].multiply(words[b]).sum(axis=1)).ravel().astype(np.int64)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values``, tied values sharing the mean of their ranks (float64)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # each run of equal values
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    ranks[order] = np.repeat((starts + ends + 1) / 2, ends - starts)
    return ranks


def rank_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation of ``x`` and ``y``: Pearson's of their average ranks (the
    definition scipy.stats.spearmanr computes; here in NumPy, so that a training run does not
    hold scipy.stats' 50 MB for one diagnostic). NaN where either is constant."""
    rx, ry = average_ranks(np.asarray(x, np.float64)), average_ranks(np.asarray(y, np.float64))
    rx, ry = rx - rx.mean(), ry - ry.mean()
    scale = np.sqrt(np.dot(rx, rx) * np.dot(ry, ry))
    return float(np.dot(rx, ry) / scale) if scale > 0 else float("nan")


def word_term_statistics(encoder: SentenceEncoder, counts: np.ndarray) -> dict[str, float]:
    """``term_count_spearman`` and ``frequent_term`` (empty for a model without per-word entropy
    terms); ``counts[i]``: the training count of vocabulary word i (index 0, ``<unk>``, left out)."""
    if not encoder.has_word_entropy_terms:
        return {}
    terms = with_word_entropy_terms(encoder, "the word-term diagnostics").word_entropy_terms()
    terms = terms.detach().cpu().double().numpy()[1:]
    known = np.asarray(counts[1:len(terms) + 1], dtype=np.float64)
    order = np.argsort(-known, kind="stable")
    rho = rank_correlation(terms[:len(known)], np.log(np.maximum(known, 1)))
    return {"term_count_spearman": float(rho),
            "frequent_term": float(terms[order[:FREQUENT_WORDS]].mean())}


@dataclass
class DiagnosticSample:
    """Training pairs to diagnose a model on, split as training mines them (mega-batches)."""

    pairs: np.ndarray  # pair indices
    per_megabatch: int  # pairs per mega-batch

    @classmethod
    def draw(cls, num_pairs: int, per_megabatch: int, seed: int, size: int = SAMPLE_PAIRS) -> "DiagnosticSample":
        """``size`` pairs (at most all of them), the same for a given seed."""
        rng = np.random.default_rng(seed + 7919)
        pairs = np.sort(rng.choice(num_pairs, size=min(size, num_pairs), replace=False))
        return cls(pairs, max(2, per_megabatch))


@torch.no_grad()
def negative_statistics(encoder: SentenceEncoder, ids: np.ndarray, offsets: np.ndarray,
                        sample: DiagnosticSample, margin: float, batch_size: int) -> dict[str, float]:
    """``negatives_sharing_more`` and ``active_hinge`` on ``sample``, negatives mined per
    mega-batch as training mines them."""
    sharing, active, total = 0, 0, 0
    was_training = encoder.training
    encoder.eval()
    for start in range(0, len(sample.pairs), sample.per_megabatch):
        pairs = sample.pairs[start:start + sample.per_megabatch]
        if len(pairs) < 2:
            continue
        count = len(pairs)
        sentences = np.concatenate([2 * pairs, 2 * pairs + 1])  # all s1, then all s2
        encoded = encode_by_length(encoder, ids, offsets, sentences, batch_size)
        partner = partners_of_stacked_pairs(count)
        negative = torch.from_numpy(mine_fastest(encoded, partner))
        rows = np.arange(2 * count)
        words = word_sets(ids, offsets, sentences)
        sharing += int(np.sum(shared_word_counts(words, rows, negative.numpy())
                              > shared_word_counts(words, rows, partner.numpy())))
        # each margin term, margin - d(s, partner) + d(s, negative), of s1 and of s2
        terms = (margin - paired_similarity(encoded, encoded.index(partner))
                 + paired_similarity(encoded, encoded.index(negative)))
        active += int((terms > 0).sum())
        total += 2 * count
    encoder.train(was_training)
    if not total:
        return {}
    return {"negatives_sharing_more": sharing / total, "active_hinge": active / total}


def prior_gradient_share(encoder: SentenceEncoder, ids: np.ndarray, offsets: np.ndarray,
                         sample: DiagnosticSample, margin: float, prior_weight: float,
                         batch_size: int) -> dict[str, float]:
    """``prior_gradient_share`` on the first mini-batch of ``sample``, its negatives mined within
    that mini-batch (empty without per-word entropy terms or without a prior)."""
    if not encoder.has_word_entropy_terms or prior_weight <= 0:
        return {}
    weights = with_word_entropy_terms(encoder, "the prior's gradient share").entropy_weights()
    pairs = sample.pairs[:batch_size]
    count = len(pairs)
    if count < 2:
        return {}
    sentences = np.concatenate([2 * pairs, 2 * pairs + 1])
    with torch.no_grad():
        plain = encode_by_length(encoder, ids, offsets, sentences, batch_size)
        negative = mine_fastest(plain, partners_of_stacked_pairs(count))
    picked = np.concatenate([sentences, sentences[negative]])  # s1, s2, n1, n2
    out = encode_by_length(encoder, ids, offsets, picked, count, with_kl=True)
    step = TrainingStep(encoder, out, count, ids, offsets, picked, weights.device)
    parts = (MarginLoss(margin)(step)["margin"], KLPrior(prior_weight)(step)["prior"])
    norms = []
    for part in parts:
        (grad,) = torch.autograd.grad(part, weights, retain_graph=True)
        norms.append(float((grad.coalesce().values() if grad.is_sparse else grad).norm()))
    return {"prior_gradient_share": norms[1] / norms[0] if norms[0] > 0 else float("inf")}


def diagnose(encoder: SentenceEncoder, ids: np.ndarray, offsets: np.ndarray, counts: np.ndarray,
             sample: DiagnosticSample, margin: float, prior_weight: float,
             batch_size: int = 100) -> dict[str, float]:
    """Every diagnostic of the module docstring that applies to ``encoder``, trained with the
    paper's prior at ``prior_weight``."""
    return {**word_term_statistics(encoder, counts),
            **negative_statistics(encoder, ids, offsets, sample, margin, batch_size),
            **prior_gradient_share(encoder, ids, offsets, sample, margin, prior_weight, batch_size)}
