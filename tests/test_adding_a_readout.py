"""Adding a read-out touches one file: this one declares a toy read-out with one ``readout(...)``
line (undone after each test) and finds it everywhere a read-out shows up, with no other module
knowing about it: the API method, ``probsent specificity``'s flag and its column in text, JSON
Lines and Parquet output, Spark's column and spaCy's doc and span attributes.

The toy is each sentence's token count, NaN where there is no sentence. The expected values are
counted by hand: "A man plays a guitar." is a / man / plays / a / guitar / . (6 tokens),
"Einstein published relativity in 1905." is einstein / published / relativity / in / 1905 / .
(6 tokens); the two as one text are 11 (the Treebank tokenizer splits only a text's last
period: "guitar." stays one token).
"""
from __future__ import annotations

import json
import math
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import probsent
from probsent.cli import main
from probsent.errors import ProbsentError
from probsent.readouts.readout_table import READOUTS, readout, unregister_readout

TOY = "toy_tokens"
SENTENCES = ["A man plays a guitar.", None, "Einstein published relativity in 1905.", "  "]
COUNTS = [6.0, None, 6.0, None]  # by hand (above); None: no sentence


@contextmanager
def toy_readout() -> Iterator[None]:
    """The toy declared, then taken away. Its computation is a lambda: Spark sends it to its
    executors by value, with no module of this test to import there."""
    readout(TOY, "also write the toy: each sentence's token count",
            lambda scored: np.where(np.isnan(scored.scores), np.nan, scored.engine.token_counts(scored.texts)))
    try:
        yield
    finally:
        unregister_readout(TOY)


@pytest.fixture
def toy() -> Iterator[None]:
    with toy_readout():
        yield


def _nan_as_none(values) -> list:
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in values]


def test_the_toy_is_an_api_method(toy) -> None:
    model = probsent.load()
    assert _nan_as_none(model.toy_tokens(SENTENCES).tolist()) == COUNTS
    assert model.toy_tokens(SENTENCES[0]) == 6.0
    assert TOY in dir(model) and TOY in model.toy_tokens.__doc__


def test_the_toy_is_a_flag_and_a_text_column(toy, capsys) -> None:
    assert main(["specificity", "--coverage", "--toy-tokens", "--header", SENTENCES[0]]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split("\t") == ["specificity", "coverage", TOY, "sentence"]  # the table's order
    assert row.split("\t")[1:] == ["1.0000", "6.0000", SENTENCES[0]]
    with pytest.raises(SystemExit):
        main(["specificity", "--help"])
    assert "--toy-tokens" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_the_toy_is_a_column_of_json_lines_and_parquet(toy, tmp_path, suffix: str) -> None:
    source, out = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    if suffix == ".jsonl":
        source.write_text("".join(json.dumps({"id": k, "text": t}) + "\n" for k, t in enumerate(SENTENCES)))
    else:
        pq.write_table(pa.table({"id": list(range(len(SENTENCES))), "text": SENTENCES}), source)
    assert main(["specificity", "--input", str(source), "--output", str(out), "--toy-tokens"]) == 0
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        rows = pq.read_table(out).to_pylist()
    assert [list(row) for row in rows] == [["id", "text", "specificity", TOY]] * len(SENTENCES)
    assert [row[TOY] for row in rows] == COUNTS
    if suffix == ".jsonl":  # an input that has the column already is refused, as for every read-out
        out.unlink()
        source.write_text(json.dumps({"text": "a", TOY: 1}) + "\n")
        assert main(["specificity", "--input", str(source), "--output", str(out), "--toy-tokens"]) == 2


def test_an_unknown_readout_is_refused_and_the_toy_leaves_no_trace() -> None:
    with toy_readout():
        assert TOY in READOUTS
    assert TOY not in READOUTS and TOY not in dir(probsent.load())
    with pytest.raises(AttributeError):
        probsent.load().toy_tokens("a")


def test_the_toy_is_a_spacy_attribute_of_docs_and_spans() -> None:
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Doc, Span

    # The component module is imported before the toy exists: its import-time list of attributes
    # (spaCy's ``assigns``, shared by the whole process) must not keep a read-out this test takes
    # away again; the component's extensions and values still come from the table as it is now.
    import probsent.integrations.spacy  # noqa: F401

    with toy_readout():
        _the_toy_in_a_spacy_pipeline(spacy, Doc, Span)


def _the_toy_in_a_spacy_pipeline(spacy, Doc, Span) -> None:
    try:
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        nlp.add_pipe("probsent")
        doc = nlp("A man plays a guitar. Einstein published relativity in 1905.")
        assert doc._.toy_tokens == 11.0  # the whole text, read as one sentence: "guitar." one token
        assert [s._.toy_tokens for s in doc.sents] == [6.0, 6.0]
        assert doc[0:5]._.toy_tokens == 5.0  # "A man plays a guitar", scored when read
    finally:
        for owner in (Doc, Span):
            if owner.has_extension(TOY):
                owner.remove_extension(TOY)


@pytest.mark.slow
def test_the_toy_is_a_spark_column(toy) -> None:
    from tests.spark_support import require_spark

    require_spark()
    from probsent.spark import add_specificity, local_session

    spark = local_session(1)
    try:
        df = spark.createDataFrame([(t,) for t in SENTENCES], "text string")
        rows = add_specificity(df, toy_tokens=True).collect()
        assert [row[TOY] for row in rows] == COUNTS
        assert rows[0].asDict().keys() == {"text", "specificity", TOY}
        with pytest.raises(ProbsentError, match="no read-out 'toy_token'"):
            add_specificity(df, toy_token=True)
    finally:
        spark.stop()
