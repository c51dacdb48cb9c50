"""``probsent similarity``'s engine: the top-k sentences of a corpus file for each query, the
corpus read chunk by chunk (text lines, JSON Lines, Parquet: :mod:`probsent.corpus_scoring.formats`),
so memory holds the queries, one chunk and the hits so far, whatever the corpus's size.

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
from typing import TYPE_CHECKING, Any, Iterable, TextIO

from probsent.corpus_scoring.formats import Chunk

if TYPE_CHECKING:
    from probsent.api import SentenceModel

__all__ = ["search_corpus", "write_hits"]

# In a TSV row a sentence is one field on one line: its tabs and line breaks become spaces.
_ONE_FIELD = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def search_corpus(model: "SentenceModel", queries: list[str], chunks: Iterable[Chunk], top_k: int,
                  measure: str | None = None, batch_size: int = 256) -> list[list[dict[str, Any]]]:
    """Each query's ``top_k`` hits in the corpus's chunks, with their texts (``"text"``), by
    :meth:`probsent.api.SentenceModel.semantic_search`: the queries encoded once, the corpus
    encoded and compared chunk by chunk as it is read."""
    rows = (text for chunk in chunks for text in chunk.texts)
    return model.semantic_search(queries, rows, top_k, batch_size, measure, with_text=True)


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
