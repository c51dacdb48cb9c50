"""The negative miner of a mega-batch: for every sentence, the most similar other sentence that
is not its paraphrase (by the similarity the loss uses), then, where asked, the hardness capped.

The hardest negative is often a paraphrase in all but name, so ``--hardness-cap C`` replaces one
that scores more than C above the sentence's partner by the most similar sentence that does not
(:func:`remine`). The plain searches (:mod:`probsent.training.mining`; torch's
:func:`~probsent.models.training_similarity.pairwise_similarity` in :func:`remine`) are the specification;
the compiled kernels (mining's; :mod:`probsent.gaussian_matrix`'s N x M similarity, which
:func:`remine` takes for Gaussians) are tested equal to them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from probsent.gaussian import VARIANCE_FLOOR_LOG
from probsent.gaussian_matrix import expected_inner_product_matrix, in_domain
from probsent.models.base import Encoding, SentenceEncoder
from probsent.models.batching import encode_by_length
from probsent.models.training_similarity import paired_similarity, pairwise_similarity
from probsent.settings import TrainConfig
from probsent.training.fast.engine import FastWLOEngine, mine_fastest
from probsent.training.mining import partners_of_stacked_pairs

REMINE_ROWS = 32  # rows of the similarity matrix computed at once when mining again


def megabatch_negatives(config: TrainConfig, sentences: np.ndarray, count: int, encoder: SentenceEncoder,
                        ids: np.ndarray, offsets: np.ndarray, fast: FastWLOEngine | None) -> np.ndarray:
    """The mined negative (a row of ``sentences``: all s1 of ``count`` pairs, then all s2) of every
    sentence of the mega-batch, by the compiled engine where it runs, else on the torch model's
    encodings (Gaussians on the CPU by the compiled mining kernel)."""
    partner = partners_of_stacked_pairs(count)
    if fast is not None:
        negative, encoded = fast.negatives(ids, offsets, sentences, count)
    else:
        encoder.eval()
        with torch.no_grad():
            encoded = encode_by_length(encoder, ids, offsets, sentences, config.batch_size)
        encoder.train()
        negative = mine_fastest(encoded, partner)
    if config.hardness_cap is None:
        return negative
    on_cpu = Encoding(encoded.mean.cpu(), None if encoded.logvar is None else encoded.logvar.cpu())
    return remine(on_cpu, partner.numpy(), negative, config.hardness_cap)


def _paired(encoded: Encoding, other: np.ndarray) -> np.ndarray:
    """d(i, other[i]) for every sentence i, float64."""
    return paired_similarity(encoded, encoded.index(torch.from_numpy(other))).double().numpy()


def _similarity_rows(encoded: Encoding) -> Callable[[np.ndarray], np.ndarray]:
    """A function giving d(rows[k], j) for every sentence j, float64 [len(rows), n]: by the
    compiled N x M kernel for Gaussians within its domain (training's variance floor applied),
    else by torch. The float64 arrays and the domain check are made once, for every call."""
    if encoded.logvar is not None:
        mean = encoded.mean.double().numpy()
        logvar = np.maximum(encoded.logvar.double().numpy(), VARIANCE_FLOOR_LOG)
        if in_domain(mean, logvar):
            var = np.exp(logvar)

            def compiled(rows: np.ndarray) -> np.ndarray:
                out = np.empty((len(rows), len(mean)))
                expected_inner_product_matrix(mean[rows], var[rows], mean, var, out)
                return out

            return compiled

    return lambda rows: pairwise_similarity(encoded.index(torch.from_numpy(rows)), encoded).double().numpy()


@torch.no_grad()
def remine(encoded: Encoding, partner: np.ndarray, negative: np.ndarray, cap: float) -> np.ndarray:
    """``negative`` with every negative above its sentence i's ceiling, d(i, partner[i]) + ``cap``
    (float64), replaced by the most similar sentence that is allowed: neither i nor its partner,
    and not above the ceiling. Kept where none is left."""
    ceiling = _paired(encoded, partner) + cap
    negative = negative.copy()
    flagged = np.flatnonzero(_paired(encoded, negative) > ceiling)
    similarity_rows = _similarity_rows(encoded) if len(flagged) else None
    for start in range(0, len(flagged), REMINE_ROWS):
        rows = flagged[start:start + REMINE_ROWS]
        similarity = similarity_rows(rows)
        banned = similarity > ceiling[rows, None]
        banned[np.arange(len(rows)), rows] = True
        banned[np.arange(len(rows)), partner[rows]] = True
        similarity[banned] = -np.inf
        best = similarity.argmax(axis=1)
        usable = np.isfinite(similarity[np.arange(len(rows)), best])
        negative[rows[usable]] = best[usable]
    return negative
