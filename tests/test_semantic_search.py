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
from probsent.readouts.semantic_search import TopHits, semantic_search

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
    from reproduction.experiments import similarity_limits

    block = similarity_limits.render()
    assert similarity_limits.shown() == block  # docs/USE_WITH.md shows what the shipped model measures
    model = probsent.load()
    closer = sum(model.similarity(s, n) > model.similarity(s, p) for s, p, n in similarity_limits.NEGATION_GROUPS)
    assert f"closer than the paraphrase in {closer} of {len(similarity_limits.NEGATION_GROUPS)}" in "\n".join(block)
    card = (REPO / "probsent" / "pretrained" / "wlo" / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "\n".join(block) in card


@pytest.mark.parametrize("merge_cells", [1, 7, 1 << 20])
def test_hits_do_not_depend_on_how_many_queries_are_merged_at_a_time(model, monkeypatch, merge_cells) -> None:
    """Issue 50, item 3: a block's similarities are merged a few queries at a time (at least one);
    the hits are the brute-force ranking's whatever that number, for arrays and for sentences."""
    import probsent.readouts.semantic_search as util  # where the search lives (probsent.util re-exports it)

    monkeypatch.setattr(util, "MERGE_CELLS", merge_cells)
    rng = np.random.default_rng(3)
    queries, corpus = rng.normal(size=(9, 4)), rng.normal(size=(30, 4))
    cosine = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ (
        corpus / np.linalg.norm(corpus, axis=1, keepdims=True)).T
    got = semantic_search(queries, corpus, top_k=4, corpus_chunk_size=11)
    assert [[j for j, _ in row] for row in pairs(got)] == [[j for j, _ in row] for row in brute_force(cosine, 4)]
    expected = brute_force(model.similarity(QUERIES, CORPUS), 3)
    assert pairs(model.semantic_search(QUERIES, CORPUS, top_k=3, corpus_chunk_size=3)) == expected


def test_search_memory_is_bounded_whatever_the_query_count(monkeypatch) -> None:
    """Issue 50, item 3: memory beyond the inputs and the hits is one merge step's, not
    (queries x corpus chunk): 2,000 queries against a 4,096-entry block once took 2,000 x 4,096
    cells of each temporary (64 MB each). The bound: the inputs and the hits, plus 16 float64
    numbers (128 bytes) per cell of one merge step (the similarities, their NaN mask and -inf
    copy, the stacked scores and ids, the sort's keys and order, the kept rows: about ten
    arrays of a step's cells), with room to spare."""
    import tracemalloc

    import probsent.readouts.semantic_search as util  # where the search lives (probsent.util re-exports it)

    monkeypatch.setattr(util, "MERGE_CELLS", 1 << 14, raising=False)
    rng = np.random.default_rng(0)
    queries, corpus = rng.normal(size=(2000, 8)), rng.normal(size=(4096, 8))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        hits = semantic_search(queries, corpus, top_k=5, corpus_chunk_size=4096)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    inputs = queries.nbytes + corpus.nbytes
    kept = 2000 * 5 * (8 + 8 + 8) + 2000 * 5 * 400  # the arrays of hits, and the hits as dicts (< 400 B each)
    assert len(hits) == 2000 and all(len(found) == 5 for found in hits)
    assert peak < 2 * inputs + kept + 128 * (1 << 14), peak


def test_no_query_is_no_hits_as_sentence_transformers(model) -> None:
    """Issue 50, item 13: ``semantic_search([], corpus)`` is ``[]`` (it raised "cannot reshape"),
    and a query against an empty corpus has no hits."""
    corpus = np.ones((3, 4))
    assert semantic_search([], corpus) == [] and semantic_search(np.zeros((0, 4)), corpus) == []
    assert semantic_search(np.ones((2, 4)), []) == [[], []]
    assert model.semantic_search([], CORPUS) == [] and model.semantic_search(QUERIES, []) == [[], [], []]


def test_a_querys_number_is_its_line_or_its_place_whatever_the_blanks(tmp_path: Path, capsys) -> None:
    """Issue 50, item 14: users join on the query number, so it means one thing: its line in
    ``--queries`` (blank lines counted) or its place among the arguments, from 1; a blank query
    has no hits and no output, in either form."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(c or "" for c in CORPUS) + "\n", encoding="utf-8")
    queries = tmp_path / "queries.txt"
    queries.write_text(f"\n{QUERIES[0]}\n   \n{QUERIES[1]}\n", encoding="utf-8")  # lines 2 and 4
    numbers = {}
    for source in (["--queries", str(queries)], ["", QUERIES[0], "   ", QUERIES[1]]):
        for fmt in ("tsv", "json"):
            assert main(["similarity", "--corpus", str(corpus), "--top-k", "1", "--format", fmt, *source]) == 0
            lines = capsys.readouterr().out.splitlines()
            numbers[source[0], fmt] = ([int(line.split("\t")[0]) for line in lines] if fmt == "tsv"
                                       else [json.loads(line)["number"] for line in lines])
    assert set(map(tuple, numbers.values())) == {(2, 4)}, numbers


@pytest.fixture(scope="module")
def encoded_corpus(tmp_path_factory) -> dict[str, Path]:
    """The corpus as sentences (Parquet, with an id column) and as probsent encode wrote it."""
    work = tmp_path_factory.mktemp("encoded")
    sentences = work / "corpus.parquet"
    pq.write_table(pa.table({"id": list(range(len(CORPUS))), "body": pa.array(CORPUS, pa.string())}), sentences)
    out = {"sentences": sentences}
    for suffix in ("parquet", "npy"):
        out[suffix] = work / f"encoded.{suffix}"
        assert main(["encode", "--input", str(sentences), "--column", "body", "--output", str(out[suffix])]) == 0
    return out


@pytest.mark.parametrize("kind", ["parquet", "npy"])
@pytest.mark.parametrize("measure", [None, "expected_inner_product"])
def test_an_encoded_corpus_is_searched_as_its_sentences(model, encoded_corpus, capsys, kind, measure) -> None:
    """Issue 50, item 20: ``similarity --corpus`` reads what ``probsent encode`` wrote and finds the
    hits of the corpus's sentences, without encoding them again: the same corpus rows in the same
    order, the same texts (Parquet; a .npy file holds none), and scores within float32's rounding:
    both paths compare float32 encodings (encode's output is model.encode's, bit for bit) and
    return float32 similarities, so they differ at most by a few units of float32's 6e-8 relative
    rounding of the values compared; 1e-6 relative bounds that."""
    argv = ["similarity", "--top-k", "3", "--format", "json", *QUERIES] + (["--measure", measure] if measure else [])
    assert main([*argv, "--corpus", str(encoded_corpus["sentences"]), "--column", "body"]) == 0
    expected = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main([*argv, "--corpus", str(encoded_corpus[kind])]) == 0
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [[h["corpus_id"] for h in r["hits"]] for r in got] == [[h["corpus_id"] for h in r["hits"]] for r in expected]
    for mine, theirs in zip(got, expected):
        np.testing.assert_allclose([h["score"] for h in mine["hits"]], [h["score"] for h in theirs["hits"]], rtol=1e-6)
        texts = [h["sentence"] for h in mine["hits"]]
        assert texts == ([h["sentence"] for h in theirs["hits"]] if kind == "parquet" else [None] * len(texts))


def test_an_encoded_corpus_of_another_model_or_of_no_known_model_is_refused(encoded_corpus, tmp_path, capsys) -> None:
    """Issue 50, item 20: the encodings are compared only with queries of the model that wrote them
    (the model files' SHA-256 recorded by encode); a .npy file without that record is refused."""
    from tests.helpers import tiny_model

    tiny_model("wlo").save(tmp_path / "other")
    for kind in ("parquet", "npy"):
        assert main(["similarity", "--corpus", str(encoded_corpus[kind]), "--model", str(tmp_path / "other"),
                     "a query"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("probsent: error: ") and err.count("\n") == 1 and "encoded by another model" in err
    bare = tmp_path / "bare.npy"
    np.save(bare, np.ones((3, 2, 50), np.float32))
    assert main(["similarity", "--corpus", str(bare), "a query"]) == 2
    assert "holds no record of the model that encoded it" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["sentences", "npy"])
def test_searching_shows_a_progress_bar_on_a_terminal(encoded_corpus, capsys, monkeypatch, kind) -> None:
    """Issue 50, item 20: as ``specificity``, a bar on standard error where it is a terminal; the hits
    on standard output are the same with it."""
    column = ["--column", "body"] if kind == "sentences" else []
    argv = ["similarity", "--corpus", str(encoded_corpus[kind]), *column, *QUERIES]
    assert main(argv) == 0
    plain = capsys.readouterr()
    assert "searching" not in plain.err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(argv) == 0
    shown = capsys.readouterr()
    assert "searching" in shown.err and shown.out == plain.out


@pytest.mark.parametrize("seed", range(4))
def test_wide_blocks_with_many_ties_and_nans_equal_a_full_sort(seed) -> None:
    """The cut of a wide block's candidates to its top_k-th score (ties included) loses no hit and
    keeps the lower-id rule: scores of few distinct values (ties everywhere), NaN rows and columns,
    blocks wider and narrower than 2 x top_k."""
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 4, size=(7, 300)).astype(float)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    matrix[2] = np.nan  # a query with no hit at all
    matrix[:, 150:200] = np.nan  # a stretch of null corpus rows
    for top_k in (1, 5, 40):
        hits = TopHits(7, top_k)
        for start, step in zip(range(0, 300, 37), [37] * 10):
            hits.add(matrix[:, start:start + step], texts=[f"t{j}" for j in range(start, min(start + step, 300))])
        found = hits.hits()
        assert pairs(found) == brute_force(matrix, top_k)
        assert all(h["text"] == f"t{h['corpus_id']}" for row in found for h in row)
