"""False negatives among mined negatives, and mining again without them.

The hardest negative of a sentence in a mega-batch is often a paraphrase in all but name.
``--hardness-cap C`` replaces a negative that scores more than C above the sentence's partner
(a negative far harder than the paraphrase is most likely a paraphrase too) by the most similar
sentence that is not. The training diagnostics count, with :func:`word_sets` and
:func:`shared_word_counts`, the negatives that share at least as many distinct words with the
sentence as its partner does. (The study's ``--false-negatives remine``, which re-mined those
too, trains at the tag study-2026-11.)
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from probsent.models.base import Encoding
from probsent.models.similarity import paired_similarity, pairwise_similarity

REMINE_ROWS = 32  # rows of the similarity matrix computed at once when mining again


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


def similarity_ceilings(encoded: Encoding, partner: np.ndarray, cap: float, pooled: bool = False) -> np.ndarray:
    """Per sentence i, the highest similarity a negative may have under ``--hardness-cap``:
    d(i, partner[i]) + ``cap``, in float64 (``pooled``: ``--similarity-distance pooled``'s d)."""
    return _paired(encoded, partner, pooled) + cap


def _paired(encoded: Encoding, other: np.ndarray, pooled: bool = False) -> np.ndarray:
    """d(i, other[i]) for every sentence i, float64."""
    with torch.no_grad():
        values = paired_similarity(encoded, encoded.index(torch.from_numpy(other)), pooled=pooled)
    return values.double().numpy()


def above_ceilings(encoded: Encoding, negative: np.ndarray, ceiling: np.ndarray, pooled: bool = False) -> np.ndarray:
    """Per sentence: does its mined ``negative`` score above its similarity ``ceiling``?"""
    return _paired(encoded, negative, pooled) > ceiling


def remine(encoded: Encoding, partner: np.ndarray, negative: np.ndarray, ceiling: np.ndarray,
           pooled: bool = False) -> np.ndarray:
    """``negative`` with every negative above its sentence's ``ceiling`` of similarity replaced by
    the most similar sentence that is allowed: neither the sentence nor its partner, and not
    above the ceiling. Kept where none is left."""
    negative = negative.copy()
    if pooled and encoded.mean.device.type == "cpu":  # the same search by bound and prune
        from probsent.training.mining import mine_pooled_pruned

        found = mine_pooled_pruned(encoded, torch.from_numpy(partner), torch.from_numpy(ceiling))
        if found is not None:
            found = found.numpy()
            flagged = above_ceilings(encoded, negative, ceiling, pooled) & (found < len(found))
            negative[flagged] = found[flagged]
            return negative
    flagged = np.flatnonzero(above_ceilings(encoded, negative, ceiling, pooled))
    for start in range(0, len(flagged), REMINE_ROWS):
        rows = flagged[start:start + REMINE_ROWS]
        pick = torch.from_numpy(rows)
        with torch.no_grad():
            similarity = pairwise_similarity(encoded.index(pick), encoded, pooled).double().numpy()
        banned = similarity > ceiling[rows, None]
        banned[np.arange(len(rows)), rows] = True
        banned[np.arange(len(rows)), partner[rows]] = True
        similarity[banned] = -np.inf
        best = similarity.argmax(axis=1)
        usable = np.isfinite(similarity[np.arange(len(rows)), best])
        negative[rows[usable]] = best[usable]
    return negative
