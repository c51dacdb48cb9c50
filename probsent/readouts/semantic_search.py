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
MERGE_CELLS = 1 << 20  # (query, candidate) cells merged at a time: bounds a search's memory whatever the query count


class TopHits:
    """The best ``top_k`` corpus entries of each of ``queries`` queries so far, fed block by block
    in corpus order (:meth:`add`); ``texts`` keeps each hit's text where blocks carry texts.

    Memory is the hits themselves (``queries x top_k``) plus one merge step of at most about
    MERGE_CELLS (query, candidate) cells: a block's similarities are asked for, and merged, a few
    queries at a time, as many as MERGE_CELLS allows (at least one)."""

    def __init__(self, queries: int, top_k: int) -> None:
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise InvalidValueError(f"top_k must be a whole number >= 1, not {top_k!r}")
        self.top_k, self.queries = int(top_k), int(queries)
        self.scores = np.full((self.queries, self.top_k), -np.inf)  # -inf: no hit (yet)
        self.ids = np.full((self.queries, self.top_k), -1, dtype=np.int64)
        self.texts = np.empty((self.queries, self.top_k), dtype=object)
        self.seen = 0  # corpus entries added so far: the next block's first id

    def add(self, block: Any, texts: list[str | None] | None = None, count: int | None = None) -> None:
        """Merge the similarities of the next ``count`` corpus entries (NaN: no hit): ``block`` is
        their (queries, count) array, or a function giving the rows of the queries in a slice
        (called with consecutive slices, so the whole matrix never needs to exist)."""
        if callable(block):
            if count is None:
                raise TypeError("a function of the query rows needs the count of corpus entries")
            similarities = block
        else:
            matrix = np.asarray(block, dtype=np.float64).reshape(self.queries, -1)
            similarities, count = (lambda rows: matrix[rows]), matrix.shape[1]
        if count == 0:
            return
        ids = np.arange(self.seen, self.seen + count)
        column_texts = None
        if texts is not None:
            column_texts = np.empty(count, dtype=object)
            column_texts[:] = texts
        step = max(1, MERGE_CELLS // (count + self.top_k))
        for start in range(0, self.queries, step):
            rows = slice(start, min(start + step, self.queries))
            self._merge(rows, np.asarray(similarities(rows), dtype=np.float64), ids, column_texts)
        self.seen += count

    def _merge(self, rows: slice, block: np.ndarray, ids: np.ndarray, texts: np.ndarray | None) -> None:
        """Keep, for the queries in ``rows``, the best ``top_k`` of their hits so far and ``block``:
        highest score first, then the lowest id. Where the block is wide, the candidates are first
        cut (in linear time) to those at least as high as the ``top_k``-th highest score, ties
        included, so that the exact ordering sorts only about ``top_k`` of them."""
        k = self.top_k
        scores = np.hstack([self.scores[rows], np.where(np.isnan(block), -np.inf, block)])
        every_id = np.hstack([self.ids[rows], np.broadcast_to(ids, block.shape)])
        positions = None  # the candidates' columns in `scores` (None: every column)
        width = scores.shape[1]
        if width > 2 * k:
            kth = np.partition(scores, width - k, axis=1)[:, width - k]  # each row's k-th highest score
            keep = (scores >= kth[:, None]) & (scores > -np.inf)
            count = max(int(keep.sum(axis=1).max()), 1)
            positions = np.argsort(~keep, axis=1, kind="stable")[:, :count]  # the kept first (a linear sort)
            scores = np.take_along_axis(scores, positions, 1)
            every_id = np.take_along_axis(every_id, positions, 1)
        order = np.lexsort((every_id, -scores), axis=1)[:, :k]  # highest score, then lowest id
        kept_scores, kept_ids = np.take_along_axis(scores, order, 1), np.take_along_axis(every_id, order, 1)
        chosen = order if positions is None else np.take_along_axis(positions, order, 1)  # columns in the merge
        if order.shape[1] < k:  # fewer candidates than top_k: the rest stay empty
            missing = k - order.shape[1]
            kept_scores = np.pad(kept_scores, ((0, 0), (0, missing)), constant_values=-np.inf)
            kept_ids = np.pad(kept_ids, ((0, 0), (0, missing)), constant_values=-1)
            chosen = np.pad(chosen, ((0, 0), (0, missing)), constant_values=0)
        if texts is not None:  # a chosen column below k is a hit kept from before, from k on the block's
            earlier = np.take_along_axis(self.texts[rows], np.minimum(chosen, k - 1), 1)
            self.texts[rows] = np.where(chosen < k, earlier, texts[np.maximum(chosen - k, 0)])
        self.scores[rows], self.ids[rows] = kept_scores, kept_ids

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
    if len(queries) and len(corpus) and queries.shape[1] != corpus.shape[1]:
        raise InvalidValueError(f"queries have {queries.shape[1]} dimensions and the corpus {corpus.shape[1]}")
    hits = TopHits(len(queries), top_k)
    step = max(1, int(corpus_chunk_size))
    for start in range(0, len(corpus) if len(queries) else 0, step):
        block = corpus[start:start + step]
        hits.add(lambda rows: _cosines(queries[rows], block), count=len(block))
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
    """[n, dim] float64 rows of an array, or of a (mean, variance) tuple's means; 1-D is one row,
    and an empty list or array none (sentence-transformers' ``semantic_search([], corpus)`` is ``[]``)."""
    array = np.asarray(embeddings[0] if isinstance(embeddings, tuple) else embeddings, dtype=np.float64)
    if array.ndim not in (1, 2):
        raise TypeError(f"embeddings are [n, dim] or [dim], not {array.shape}")
    if array.size == 0:
        return array.reshape(0, array.shape[-1] if array.ndim == 2 else 0)
    return array[None] if array.ndim == 1 else array


def _cosines(queries: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    """The cosine matrix (NaN for a row with a NaN), by the API's cosine read-out."""
    bad_q, bad_c = ~np.isfinite(queries).all(1), ~np.isfinite(corpus).all(1)
    matrix = measure_matrix("cosine", (np.where(bad_q[:, None], 0.0, queries), None),
                            (np.where(bad_c[:, None], 0.0, corpus), None), _MAX_CELLS)
    matrix[bad_q, :] = np.nan
    matrix[:, bad_c] = np.nan
    return matrix
