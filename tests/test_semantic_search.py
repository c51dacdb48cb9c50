"""Semantic search (issue 44, item 4): ``probsent.util.semantic_search``,
``SentenceModel.semantic_search`` and ``probsent similarity``, checked against a brute-force
ranking of the full similarity matrix."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import probsent
from probsent.cli import main
from probsent.corpus_scoring.formats import Chunk
from probsent.corpus_scoring.search import search_corpus
from probsent.errors import InvalidValueError
from probsent.util import TopHits, semantic_search

REPO = Path(__file__).resolve().parents[1]
CORPUS = ["Stocks fell sharply on Monday.", "A man plays a guitar.", None, "A cat sleeps on the sofa.",
          "The Dow fell 2.3 % on Tuesday.", "", "A man plays a guitar.", "Einstein published relativity in 1905."]
QUERIES = ["The market dropped.", "Someone plays music.", "A kitten naps."]


def brute_force(matrix: np.ndarray, top_k: int) -> list[list[tuple[int, float]]]:
    """Each row's top_k (column, value), highest value first, lower column first on ties, NaN left out."""
    out = []
    for row in np.asarray(matrix, dtype=np.float64):
        ranked = sorted((j for j in range(len(row)) if not np.isnan(row[j])), key=lambda j: (-row[j], j))
        out.append([(j, float(row[j])) for j in ranked[:top_k]])
    return out


def pairs(hits) -> list[list[tuple[int, float]]]:
    return [[(h["corpus_id"], h["score"]) for h in found] for found in hits]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


@pytest.mark.parametrize("step", [1, 2, 3, 7, 100])
def test_top_hits_merged_by_blocks_equal_a_full_sort(step) -> None:
    rng = np.random.default_rng(step)
    matrix = np.round(rng.normal(size=(5, 23)), 1)  # rounded: many ties
    matrix[rng.random(matrix.shape) < 0.1] = np.nan
    hits = TopHits(5, 4)
    for start in range(0, 23, step):
        hits.add(matrix[:, start:start + step])
    assert pairs(hits.hits()) == brute_force(matrix, 4)
    with pytest.raises(InvalidValueError, match="top_k"):
        TopHits(1, 0)


def test_util_semantic_search_is_the_cosine_by_hand() -> None:
    queries = np.array([[1.0, 0.0], [0.0, 2.0]])
    corpus = np.array([[0.0, 1.0], [2.0, 0.1], [1.0, 0.0], [np.nan, 1.0], [-1.0, -1.0]])
    cosine = np.array([[q @ c / np.linalg.norm(q) / np.linalg.norm(c) for c in corpus] for q in queries])
    for chunk in (1, 2, 8192):
        got = semantic_search(queries, corpus, top_k=3, corpus_chunk_size=chunk)
        assert [[j for j, _ in row] for row in pairs(got)] == [[j for j, _ in row] for row in brute_force(cosine, 3)]
        np.testing.assert_allclose([[s for _, s in row] for row in pairs(got)],
                                   [[s for _, s in row] for row in brute_force(cosine, 3)], rtol=1e-12)
    assert semantic_search(queries[0], (corpus, np.ones_like(corpus)), top_k=1)[0][0]["corpus_id"] == 2


@pytest.mark.parametrize("measure", [None, "kernel", "expected_inner_product"])
def test_model_search_is_the_brute_force_ranking_in_any_chunking(model, measure) -> None:
    matrix = model.similarity(QUERIES, CORPUS, measure=measure)
    expected = brute_force(matrix, 3)
    for chunk in (1, 3, 8192):
        got = pairs(model.semantic_search(QUERIES, iter(CORPUS), top_k=3, measure=measure, corpus_chunk_size=chunk))
        assert [[j for j, _ in row] for row in got] == [[j for j, _ in row] for row in expected]
        assert all(j not in (2, 5) for row in got for j, _ in row)  # null and blank rows are never hits
    encoded = model.encode([c or "" for c in CORPUS])
    assert model.semantic_search(QUERIES[1], encoded, top_k=1)[0][0]["corpus_id"] == 1
    assert model.semantic_search([None, "A man plays a guitar."], CORPUS, top_k=1)[0] == []  # a null query


def test_search_corpus_streams_chunks(model) -> None:
    consumed = []

    def chunks():
        for start in range(0, len(CORPUS), 2):
            consumed.append(start)
            yield Chunk(CORPUS[start:start + 2])
    hits = search_corpus(model, QUERIES, chunks(), 2)
    assert consumed == [0, 2, 4, 6]
    assert pairs(hits) == pairs(model.semantic_search(QUERIES, CORPUS, top_k=2))
    assert hits[1][0]["text"] == "A man plays a guitar."


def test_cli_on_text_jsonl_and_parquet(model, tmp_path: Path, capsys) -> None:
    text = tmp_path / "corpus.txt"
    text.write_text("\n".join(c or "" for c in CORPUS) + "\n", encoding="utf-8")
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text("".join(json.dumps({"body": c}) + "\n" for c in CORPUS), encoding="utf-8")
    parquet = tmp_path / "corpus.parquet"
    pq.write_table(pa.table({"body": pa.array(CORPUS, pa.string())}), parquet)
    expected = model.semantic_search(QUERIES, CORPUS, top_k=2)
    for corpus, column in ((text, []), (jsonl, ["--column", "body"]), (parquet, ["--column", "body"])):
        assert main(["similarity", "--corpus", str(corpus), *column, "--top-k", "2", *QUERIES]) == 0
        rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
        assert [(int(r[0]), int(r[1]), int(r[2])) for r in rows] == [
            (q + 1, rank + 1, hit["corpus_id"]) for q, found in enumerate(expected) for rank, hit in enumerate(found)]
        assert [float(r[3]) for r in rows] == pytest.approx([h["score"] for f in expected for h in f], abs=1e-4)
        assert rows[0][4] == QUERIES[0] and rows[0][5] == CORPUS[expected[0][0]["corpus_id"]]
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUERIES) + "\n\n", encoding="utf-8")
    out = tmp_path / "hits.jsonl"
    assert main(["similarity", "--corpus", str(text), "--queries", str(queries), "--format", "json",
                 "--output", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["query"] for r in records] == QUERIES
    assert [[h["corpus_id"] for h in r["hits"]] for r in records] == [
        [h["corpus_id"] for h in found] for found in model.semantic_search(QUERIES, CORPUS, top_k=10)]
    assert main(["similarity", "--corpus", str(text), "x y z", "--output", str(out)]) == 2  # never overwritten
    assert "already exists" in capsys.readouterr().err and len(out.read_text().splitlines()) == 3


@pytest.mark.parametrize("argv,message", [
    (["similarity", "--corpus", "nope.txt", "a query"], "nope.txt: no such file"),
    (["similarity", "--corpus", "README.md"], "no query"),
    (["similarity", "--corpus", "README.md", "--top-k", "0", "x"], "--top-k"),
])
def test_cli_errors_are_one_line_with_status_2(argv, message) -> None:
    out = subprocess.run([sys.executable, "-m", "probsent", *argv], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_what_similarity_cannot_do_is_measured_and_current() -> None:
    from experiments import similarity_limits

    block = similarity_limits.render()
    assert similarity_limits.shown() == block  # docs/USE_WITH.md shows what the shipped model measures
    model = probsent.load()
    closer = sum(model.similarity(s, n) > model.similarity(s, p) for s, p, n in similarity_limits.NEGATION_GROUPS)
    assert f"closer than the paraphrase in {closer} of {len(similarity_limits.NEGATION_GROUPS)}" in "\n".join(block)
    card = (REPO / "probsent" / "pretrained" / "wlo" / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "\n".join(block) in card
