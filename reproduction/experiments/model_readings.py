"""What the recipe study reads from a trained model for its records (experiments/recipe_records.py)
and tables (docs/RESULTS.md): where its specificity sits among the words, and where it puts the
scale of its similarities. Study tools: training and ``probsent eval`` do not use them."""
from __future__ import annotations

import numpy as np

from probsent.models import SentenceEncoder, with_word_entropy_terms

# frequency-rank bands of the vocabulary (rank 1: the most frequent word; None: to the end)
RANK_BANDS = ((1, 20), (21, 100), (101, 1_000), (1_001, 5_000), (5_001, 20_000), (20_001, None))
RANK_BAND_LABELS = tuple(f"{low}+" if high is None else f"{low}-{high}" for low, high in RANK_BANDS)


def term_by_rank_band(encoder: SentenceEncoder) -> dict[str, float]:
    """Mean entropy term of the vocabulary words in each frequency-rank band of
    :data:`RANK_BANDS` ("1-20", ..., "20001+"), for a model whose vocabulary is ordered by
    training frequency after ``<unk>`` (id = rank). Shows where specificity sits: a model whose
    variances learned it has terms falling from frequent to rare; terms that drift back toward
    the initialization's for rare words show words too rare to be trained. Bands past the
    vocabulary are left out; empty for models without per-word entropy terms."""
    if not encoder.has_word_entropy_terms:
        return {}
    terms = with_word_entropy_terms(encoder, "the rank bands").word_entropy_terms().detach().cpu().double().numpy()
    bands = {}
    for (low, high), label in zip(RANK_BANDS, RANK_BAND_LABELS):
        chosen = terms[low:len(terms) if high is None else min(high + 1, len(terms))]
        if len(chosen):
            bands[label] = float(chosen.mean())
    return bands


def sentence_scale(mean: np.ndarray, logvar: np.ndarray) -> dict[str, float]:
    """Where a probabilistic model puts the scale of its similarities, from the encodings of
    some sentences (``mean`` and ``logvar`` [n, dim]): ``mean_norm``, the average Euclidean
    norm of the means, and ``log_variance``, the average log-variance per dimension (0 is the
    prior's N(0, I)). The expected inner product compares (mu1 - mu2)^2 with the summed
    variances, so the margin can be met by spreading the means or by shrinking every
    variance; these two numbers show which one a run did."""
    return {"mean_norm": float(np.linalg.norm(np.asarray(mean, np.float64), axis=1).mean()),
            "log_variance": float(np.asarray(logvar, np.float64).mean())}
