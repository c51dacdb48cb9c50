"""False negatives among mined negatives, and mining again without them.

The hardest negative of a sentence in a mega-batch is often a paraphrase in all but name:
on loose pairs it shares more words with the sentence than the sentence's own partner does.
Pushing such a negative away teaches the model the wrong thing. Here a mined
negative j of sentence i is a *false negative* when it shares at least as many distinct
words with i as i's partner does (and at least one); ``--false-negatives remine`` replaces
it by the most similar sentence that is not one. ``--hardness-cap C`` likewise replaces a
negative that scores more than C above the sentence's partner (a negative far harder than the
paraphrase is most likely a paraphrase too).
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


def false_negative_limits(words: sp.csr_matrix, partner: np.ndarray) -> np.ndarray:
    """Per sentence, the number of shared distinct words from which another sentence is a
    false negative of it: as many as its partner shares with it, and at least one."""
    return np.maximum(shared_word_counts(words, np.arange(len(partner)), partner), 1)


def false_negative_mask(words: sp.csr_matrix, partner: np.ndarray, negative: np.ndarray,
                        limits: np.ndarray | None = None) -> np.ndarray:
    """Per sentence: is its mined ``negative`` a false negative (shares at least as many
    distinct words with it as its ``partner``, and at least one)?"""
    limits = false_negative_limits(words, partner) if limits is None else limits
    return shared_word_counts(words, np.arange(len(partner)), negative) >= limits


def similarity_ceilings(encoded: Encoding, partner: np.ndarray, cap: float) -> np.ndarray:
    """Per sentence i, the highest similarity a negative may have under ``--hardness-cap``:
    d(i, partner[i]) + ``cap``, in float64."""
    return _paired(encoded, partner) + cap


def _paired(encoded: Encoding, other: np.ndarray) -> np.ndarray:
    """d(i, other[i]) for every sentence i, float64."""
    with torch.no_grad():
        values = paired_similarity(encoded, encoded.index(torch.from_numpy(other)))
    return values.double().numpy()


def banned_negatives(encoded: Encoding, partner: np.ndarray, negative: np.ndarray,
                     words: sp.csr_matrix | None, ceiling: np.ndarray | None,
                     limits: np.ndarray | None = None) -> np.ndarray:
    """Per sentence: is its mined ``negative`` disallowed, a false negative (when ``words`` is
    given; ``limits``: :func:`false_negative_limits`, if already computed) or above its
    similarity ``ceiling`` (when given)?"""
    banned = np.zeros(len(partner), dtype=bool)
    if words is not None:
        banned |= false_negative_mask(words, partner, negative, limits)
    if ceiling is not None:
        banned |= _paired(encoded, negative) > ceiling
    return banned


def remine(encoded: Encoding, partner: np.ndarray, negative: np.ndarray, words: sp.csr_matrix | None = None,
           ceiling: np.ndarray | None = None) -> np.ndarray:
    """``negative`` with every disallowed negative replaced by the most similar sentence that
    is allowed: neither the sentence nor its partner, not a false negative (with ``words``), and
    not above the sentence's ``ceiling`` of similarity (with a ceiling). Kept where none is left."""
    negative = negative.copy()
    threshold = false_negative_limits(words, partner) if words is not None else None
    flagged = np.flatnonzero(banned_negatives(encoded, partner, negative, words, ceiling, threshold))
    for start in range(0, len(flagged), REMINE_ROWS):
        rows = flagged[start:start + REMINE_ROWS]
        pick = torch.from_numpy(rows)
        with torch.no_grad():
            similarity = pairwise_similarity(encoded.index(pick), encoded).double().numpy()
        banned = np.zeros_like(similarity, dtype=bool)
        if words is not None:
            banned |= (words[rows] @ words.T).toarray() >= threshold[rows, None]
        if ceiling is not None:
            banned |= similarity > ceiling[rows, None]
        banned[np.arange(len(rows)), rows] = True
        banned[np.arange(len(rows)), partner[rows]] = True
        similarity[banned] = -np.inf
        best = similarity.argmax(axis=1)
        usable = np.isfinite(similarity[np.arange(len(rows)), best])
        negative[rows[usable]] = best[usable]
    return negative
