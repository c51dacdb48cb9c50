"""Semantic search, as sentence-transformers' ``util.semantic_search``: the ``top_k`` corpus
entries most similar to each query, merged block by block so that the corpus streams through
(memory holds the queries, one block of the corpus and the hits so far).

    from probsent import util
    hits = util.semantic_search(model.encode(queries)[0], model.encode(corpus)[0], top_k=5)
    hits[0]  # [{"corpus_id": 17, "score": 0.93}, ...], highest score first

``util.cos_sim(a, b)`` is sentence-transformers' matrix of cosines (a NumPy array).
``SentenceModel.semantic_search(queries, corpus)`` does the same from sentences (any iterable,
read ``corpus_chunk_size`` at a time) with any of the model's similarity measures, and
``probsent similarity`` from files. Ties are broken by the lower corpus id, so the hits never
depend on the block size; a corpus entry that is null or blank (a NaN similarity) is never a
hit. What the similarity can and cannot tell apart: docs/USE_WITH.md#what-similarity-cannot-do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from probsent.errors import InvalidValueError
from probsent.readouts.similarity import measure_matrix

__all__ = ["TopHits", "cos_sim", "semantic_search"]

CORPUS_CHUNK = 8192  # corpus entries compared at a time
_MAX_CELLS = 1 << 21  # float64 numbers of work per similarity block (as the API's similarity)


class TopHits:
    """The best ``top_k`` corpus entries of each of ``queries`` queries so far, fed block by block
    in corpus order (:meth:`add`); ``texts`` keeps each hit's text where blocks carry texts."""

    def __init__(self, queries: int, top_k: int) -> None:
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise InvalidValueError(f"top_k must be a whole number >= 1, not {top_k!r}")
        self.top_k = int(top_k)
        self.scores = np.zeros((queries, 0))
        self.ids = np.zeros((queries, 0), dtype=np.int64)
        self.texts = np.empty((queries, 0), dtype=object)
        self.seen = 0  # corpus entries added so far: the next block's first id

    def add(self, block: np.ndarray, texts: list[str | None] | None = None) -> None:
        """Merge the (queries, m) similarities of the next ``m`` corpus entries (NaN: no hit)."""
        block = np.asarray(block, dtype=np.float64).reshape(len(self.scores), -1)
        count = block.shape[1]
        scores = np.hstack([self.scores, np.where(np.isnan(block), -np.inf, block)])
        ids = np.hstack([self.ids, np.broadcast_to(np.arange(self.seen, self.seen + count), block.shape)])
        column_texts = np.empty(count, dtype=object)
        column_texts[:] = texts if texts is not None else [None] * count
        every = np.hstack([self.texts, np.broadcast_to(column_texts, block.shape)])
        order = np.lexsort((ids, -scores), axis=1)[:, :self.top_k]  # highest score, then lowest id
        self.scores, self.ids = np.take_along_axis(scores, order, 1), np.take_along_axis(ids, order, 1)
        self.texts = np.take_along_axis(every, order, 1)
        self.seen += count

    def hits(self) -> list[list[dict[str, Any]]]:
        """Per query, its hits highest score first: ``{"corpus_id": int, "score": float}`` (and
        ``"text"`` where the blocks carried texts); fewer than ``top_k`` where the corpus holds fewer."""
        out = []
        for scores, ids, texts in zip(self.scores.tolist(), self.ids.tolist(), self.texts.tolist()):
            out.append([{"corpus_id": i, "score": s, **({"text": t} if t is not None else {})}
                        for s, i, t in zip(scores, ids, texts) if s != -np.inf])
        return out


def semantic_search(query_embeddings: Any, corpus_embeddings: Any, top_k: int = 10,
                    corpus_chunk_size: int = CORPUS_CHUNK) -> list[list[dict[str, Any]]]:
    """The ``top_k`` corpus entries of highest cosine similarity to each query.

    Parameters
    ----------
    query_embeddings, corpus_embeddings : array-like
        [n, dim] and [m, dim] vectors (a deterministic model's :meth:`encode`, or a probabilistic
        one's means: ``encode(...)[0]``), or a (mean, variance) tuple, whose means are compared.
        A 1-D array is one query. A row with a NaN (a null sentence's) matches nothing.
    top_k : int, default 10
        Hits per query.
    corpus_chunk_size : int, default 8192
        Corpus rows compared at a time (the hits never depend on it).

    Returns
    -------
    list of list of dict
        Per query, ``{"corpus_id": int, "score": float}`` highest score first (ties: lower id
        first), as sentence-transformers' ``util.semantic_search``.

    Examples
    --------
    >>> import numpy as np
    >>> from probsent.util import semantic_search
    >>> semantic_search(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [2.0, 0.1], [1.0, 0.0]]), top_k=2)
    [[{'corpus_id': 2, 'score': 1.0}, {'corpus_id': 1, 'score': 0.99875...}]]
    """
    queries, corpus = _means(query_embeddings), _means(corpus_embeddings)
    if queries.shape[1] != corpus.shape[1]:
        raise InvalidValueError(f"queries have {queries.shape[1]} dimensions and the corpus {corpus.shape[1]}")
    hits = TopHits(len(queries), top_k)
    step = max(1, int(corpus_chunk_size))
    for start in range(0, len(corpus), step):
        hits.add(_cosines(queries, corpus[start:start + step]))
    return hits.hits()


def cos_sim(a: Any, b: Any) -> np.ndarray:
    """The cosine of every row of ``a`` with every row of ``b``, as sentence-transformers'
    ``util.cos_sim`` (a NumPy array, not a tensor: no torch).

    Parameters
    ----------
    a, b : array-like
        [n, dim] and [m, dim] vectors (a 1-D array is one row), or (mean, variance) tuples, whose
        means are compared; torch tensors on the CPU are read as arrays.

    Returns
    -------
    numpy.ndarray
        [n, m] float64 cosines; NaN in the row or column of a vector with a NaN (a null
        sentence's), 0 for a vector of zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from probsent.util import cos_sim
    >>> cos_sim(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 1.0])).round(4).tolist()
    [[0.7071], [0.7071]]
    """
    first, second = _means(a), _means(b)
    if first.shape[1] != second.shape[1]:
        raise InvalidValueError(f"a has {first.shape[1]} dimensions and b {second.shape[1]}")
    return _cosines(first, second)


def _means(embeddings: Any) -> np.ndarray:
    """[n, dim] float64 rows of an array, or of a (mean, variance) tuple's means; 1-D is one row."""
    array = np.asarray(embeddings[0] if isinstance(embeddings, tuple) else embeddings, dtype=np.float64)
    if array.ndim not in (1, 2):
        raise TypeError(f"embeddings are [n, dim] or [dim], not {array.shape}")
    return array[None] if array.ndim == 1 else array


def _cosines(queries: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    """The cosine matrix (NaN for a row with a NaN), by the API's cosine read-out."""
    bad_q, bad_c = ~np.isfinite(queries).all(1), ~np.isfinite(corpus).all(1)
    matrix = measure_matrix("cosine", (np.where(bad_q[:, None], 0.0, queries), None),
                            (np.where(bad_c[:, None], 0.0, corpus), None), _MAX_CELLS)
    matrix[bad_q, :] = np.nan
    matrix[:, bad_c] = np.nan
    return matrix
