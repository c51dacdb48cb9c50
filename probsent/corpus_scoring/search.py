"""``probsent similarity``'s engine: the top-k sentences of a corpus file for each query, the
corpus read chunk by chunk (text lines, JSON Lines, Parquet: :mod:`probsent.corpus_scoring.formats`;
or the encodings ``probsent encode`` wrote, searched without encoding the corpus again:
:mod:`probsent.corpus_scoring.encoded_corpus`), so memory holds the queries, one chunk and the
hits so far, whatever the corpus's size.

Output, one hit a line, each query's hits highest score first (ties: the earlier corpus row):
TSV ``query number, rank, corpus row, score, query, corpus sentence`` (numbers from 1 for the
query and the rank, from 0 for the corpus row, as ``semantic_search``'s ``corpus_id``), or one
JSON object a line per query, ``{"number", "query", "hits": [{"corpus_id", "score", "sentence"}]}``.
A query's number is the caller's (``probsent similarity``: its line in the queries file, blank
lines counted, or its place among the arguments), so that it means one thing however the
queries came.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable, Iterator, TextIO

from probsent.corpus_scoring.encoded_corpus import EncodedCorpus, check_encoding_model
from probsent.corpus_scoring.formats import Chunk
from probsent.readouts.semantic_search import TopHits

if TYPE_CHECKING:
    from probsent.api import SentenceModel

__all__ = ["search_corpus", "search_encoded", "write_hits"]

# In a TSV row a sentence is one field on one line: its tabs and line breaks become spaces.
_ONE_FIELD = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def search_corpus(model: "SentenceModel", queries: list[str], chunks: Iterable[Chunk], top_k: int,
                  measure: str | None = None, batch_size: int = 256,
                  progress: bool = False) -> list[list[dict[str, Any]]]:
    """Each query's ``top_k`` hits in the corpus's chunks, with their texts (``"text"``), by
    :meth:`probsent.api.SentenceModel.semantic_search`: the queries encoded once, the corpus
    encoded and compared chunk by chunk as it is read (with a progress bar on standard error
    where ``progress``)."""
    with _progress_bar(progress) as bar:
        rows = (text for chunk in _counted(chunks, bar) for text in chunk.texts)
        return model.semantic_search(queries, rows, top_k, batch_size, measure, with_text=True)


def search_encoded(model: "SentenceModel", queries: list[str], corpus: "EncodedCorpus", top_k: int,
                   measure: str | None = None, batch_size: int = 256,
                   progress: bool = False) -> list[list[dict[str, Any]]]:
    """Each query's ``top_k`` hits in a corpus encoded once by ``probsent encode`` (checked to
    be ``model``'s encodings: :func:`probsent.corpus_scoring.encoded_corpus.check_encoding_model`),
    read chunk by chunk, with its texts where the file holds them; the same hits as
    :func:`search_corpus` on its sentences, without encoding them again."""
    check_encoding_model(corpus, model)
    query = model.encode(queries, batch_size=batch_size)
    hits = TopHits(len(queries), top_k)
    rows_of = (lambda rows: (query[0][rows], query[1][rows])) if isinstance(query, tuple) else (lambda rows: query[rows])
    with _progress_bar(progress, corpus.rows) as bar:
        for mean, variance, texts in corpus.chunks():
            encoded = mean if variance is None else (mean, variance)
            hits.add(lambda rows: model.similarity(rows_of(rows), encoded, measure=measure), texts, count=len(mean))
            if bar is not None:
                bar.update(len(mean))
    return hits.hits()


@contextmanager
def _progress_bar(shown: bool, total: int | None = None) -> Iterator[Any]:
    """A tqdm bar on standard error counting the corpus's sentences (None where not ``shown``)."""
    if not shown:
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(total=total, unit=" sentences", desc="searching")
    try:
        yield bar
    finally:
        bar.close()


def _counted(chunks: Iterable[Chunk], bar: Any) -> Iterator[Chunk]:
    for chunk in chunks:
        yield chunk
        if bar is not None:
            bar.update(len(chunk.texts))


def write_hits(out: TextIO, queries: list[str], hits: list[list[dict[str, Any]]], fmt: str = "tsv",
               numbers: list[int] | None = None) -> None:
    """Write the hits of each query to ``out`` as TSV lines or one JSON object per query; each
    query's number is ``numbers``' (default: 1, 2, ...)."""
    numbers = range(1, len(queries) + 1) if numbers is None else numbers
    for number, query, found in zip(numbers, queries, hits):
        if fmt == "json":
            out.write(json.dumps({"number": number, "query": query, "hits": [{"corpus_id": h["corpus_id"], "score": h["score"],
                                                             "sentence": h.get("text")} for h in found]},
                                 ensure_ascii=False) + "\n")
            continue
        for rank, hit in enumerate(found, start=1):
            out.write(f"{number}\t{rank}\t{hit['corpus_id']}\t{hit['score']:.4f}\t{query.translate(_ONE_FIELD)}\t"
                      f"{(hit.get('text') or '').translate(_ONE_FIELD)}\n")
