"""--data as users have their pairs: TSV (plain, gzip), Parquet, JSON Lines, several files, a
directory of parts, named columns, the first N pairs; every one reads the same pairs as the TSV."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from probsent.cli import main
from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.errors import ProbsentError
from tests.helpers import REPO, one_error

PAIRS = [("The cat sat on the mat.", "A cat sat!", "bible"), ("A dog ran in the park.", "The dog ran.", "captions"),
         ("Two men play guitar.", "Men play music.", "captions"),
         ("One woman reads.", "A woman reads a book.", "bible")]


def _pairs_of(path, tmp_path, **kwargs):
    mapped = load_mapped_pairs(path, cache_dir=tmp_path / "cache", **kwargs)
    sentences = [[mapped.words[t] for t in mapped.tokens[mapped.offsets[k]:mapped.offsets[k + 1]]]
                 for k in range(len(mapped.offsets) - 1)]
    return sentences, [mapped.sources[i] for i in mapped.pair_sources], mapped.words, mapped.counts.tolist()


@pytest.fixture
def tsv(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS), encoding="utf-8")
    return path


def test_gzip_parquet_and_jsonl_read_as_the_tsv(tmp_path, tsv) -> None:
    expected = _pairs_of(tsv, tmp_path)
    gz = tmp_path / "pairs.tsv.gz"
    gz.write_bytes(gzip.compress(tsv.read_bytes()))
    parquet = tmp_path / "pairs.parquet"
    pq.write_table(pa.table({"s1": [p[0] for p in PAIRS], "s2": [p[1] for p in PAIRS],
                             "source": [p[2] for p in PAIRS]}), parquet)
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text("".join(json.dumps({"s1": a, "s2": b, "source": s}) + "\n" for a, b, s in PAIRS))
    for path in (gz, parquet, jsonl):
        assert _pairs_of(path, tmp_path) == expected, path


def test_named_columns_and_no_source(tmp_path, tsv) -> None:
    sentences, sources, words, counts = _pairs_of(tsv, tmp_path)
    parquet = tmp_path / "named.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4], "premise": [p[0] for p in PAIRS], "hypothesis": [p[1] for p in PAIRS],
                             "corpus": [p[2] for p in PAIRS]}), parquet)
    assert _pairs_of(parquet, tmp_path, columns="premise,hypothesis,corpus") == (sentences, sources, words, counts)
    no_source = _pairs_of(parquet, tmp_path, columns="premise,hypothesis")
    assert no_source[0] == sentences and set(no_source[1]) == {""}


@pytest.mark.slow
def test_several_files_and_a_directory_of_parts(tmp_path, tsv) -> None:
    expected = _pairs_of(tsv, tmp_path)
    parts = tmp_path / "parts"
    parts.mkdir()
    lines = tsv.read_text().splitlines(keepends=True)
    (parts / "part-0.tsv").write_text("".join(lines[:2]))
    pq.write_table(pa.table({"s1": [p[0] for p in PAIRS[2:]], "s2": [p[1] for p in PAIRS[2:]],
                             "source": [p[2] for p in PAIRS[2:]]}), parts / "part-1.parquet")
    (parts / "_SUCCESS").write_text("")
    assert _pairs_of(parts, tmp_path) == expected
    joined = os.pathsep.join([str(parts / "part-0.tsv"), str(parts / "part-1.parquet")])
    assert _pairs_of(joined, tmp_path) == expected


def test_the_first_n_pairs(tmp_path, tsv) -> None:
    sentences, sources, _, _ = _pairs_of(tsv, tmp_path, max_pairs=3)
    assert len(sentences) == 6 and sources == ["bible", "captions", "captions"]


@pytest.mark.parametrize("case,fragment", [
    ("missing column", "no column 'hypothesis'"),
    ("columns on tsv", "a TSV file's are positional"),
    ("bad columns", "is not A,B or A,B,SOURCE"),
    ("not parquet", "not a readable Parquet file"),
    ("numbers", "is int64, not text"),
])
def test_a_bad_file_or_column_is_one_line(tmp_path, tsv, case, fragment) -> None:
    parquet = tmp_path / "pairs.parquet"
    pq.write_table(pa.table({"premise": ["a b"], "s2": ["c d"]}), parquet)
    if case == "missing column":
        path, columns = parquet, "premise,hypothesis"
    elif case == "columns on tsv":
        path, columns = tsv, "a,b"
    elif case == "bad columns":
        path, columns = parquet, "premise"
    elif case == "not parquet":
        path, columns = tmp_path / "bad.parquet", None
        path.write_bytes(b"not parquet at all")
    else:
        path, columns = tmp_path / "numbers.parquet", None
        pq.write_table(pa.table({"s1": [1, 2], "s2": ["c d", "e f"]}), path)
    with pytest.raises(ProbsentError, match=fragment):
        load_mapped_pairs(path, cache_dir=tmp_path / "cache", columns=columns)


@pytest.mark.slow
def test_train_reads_parquet_with_named_columns_and_max_pairs(tmp_path, capsys) -> None:
    parquet = tmp_path / "pairs.parquet"
    rows = PAIRS * 30
    pq.write_table(pa.table({"a": [p[0] for p in rows], "b": [p[1] for p in rows]}), parquet)
    code = main(["train", "--data", str(parquet), "--columns", "a,b", "--max-pairs", "50", "--out",
                 str(tmp_path / "run"), "--batch-size", "10", "--megabatch", "2", "--max-steps", "2",
                 "--no-validation"])
    assert code == 0
    config = json.loads((tmp_path / "run" / "last" / "config.json").read_text())
    assert config["training"]["data_report"]["pairs"] == 50
    code = main(["train", "--data", str(parquet), "--columns", "a,missing", "--out", str(tmp_path / "run2"),
                 "--no-validation"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "no column 'missing'" in err[-1] and not (tmp_path / "run2").exists()


# -- issue 50, item 2: JSON Lines nested too deeply, one bounded reader for training and scoring ----

def _train_in_a_process(data, out) -> subprocess.CompletedProcess:
    """``probsent train`` in its own process: a reader that crashes (pyarrow's segfault) cannot take
    the test run with it."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PROBSENT_CACHE": str(out.parent / "cache")}
    return subprocess.run([sys.executable, "-m", "probsent.cli", "train", "--data", str(data), "--out", str(out),
                           "--batch-size", "2", "--megabatch", "1", "--max-steps", "1", "--no-validation"],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("line,depth", [(1, 1_000), (2, 20_000)])
def test_json_lines_nested_too_deeply_is_one_line_in_training(tmp_path, line, depth) -> None:
    """Depth 1,000 on line 1 was a RecursionError traceback, depth 20,000 on line 2 a pyarrow
    segfault (rc 139); both are now the scoring reader's one line, naming the file and line."""
    rows = [json.dumps({"s1": a, "s2": b}) for a, b, _ in PAIRS]
    rows.insert(line - 1, '{"s1": "a b", "s2": "c d", "n": ' + "[" * depth + "]" * depth + "}")
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(rows) + "\n")
    done = _train_in_a_process(data, tmp_path / "run")
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    one_error(done.stderr, f"{data}:{line}: not valid JSON (nested too deeply")
    assert not (tmp_path / "run").exists()


def test_json_nesting_is_counted_outside_strings_up_to_the_limit(tmp_path) -> None:
    """The depth is JSON's own: brackets inside strings (escaped quotes and backslashes included)
    do not count; MAX_JSON_DEPTH levels read (the row's object is one), one more is refused."""
    from probsent.files.json_lines import MAX_JSON_DEPTH

    inner = MAX_JSON_DEPTH - 1
    deepest = '{"s1": "a b", "s2": "c d", "n": ' + "[" * inner + "]" * inner + "}"
    in_strings = json.dumps({"s1": "[" * 500 + ' \\" [{ \\\\', "s2": '"' + "{" * 500, "x": "\\" * 3 + "["})
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join([deepest, in_strings] + [json.dumps({"s1": a, "s2": b}) for a, b, _ in PAIRS]) + "\n")
    sentences, *_ = _pairs_of(data, tmp_path)
    assert len(sentences) == 2 * (2 + len(PAIRS)) and sentences[0] == ["a", "b"]
    data.write_text(deepest.replace("[", "[[", 1).replace("]", "]]", 1) + "\n")
    with pytest.raises(ProbsentError, match=rf"pairs\.jsonl:1: not valid JSON \(nested too deeply"):
        load_mapped_pairs(data, cache_dir=tmp_path / "cache")


def test_the_depth_count_against_the_parsed_values() -> None:
    """first_too_deep on a block of random JSON rows (strings full of brackets, quotes and
    backslashes) against the depth of each row's parsed value, walked in Python."""
    import random

    from probsent.files.json_lines import first_too_deep

    rng = random.Random(5)
    pieces = ['[', ']', '{', '}', '"', '\\', '\\"', '\\\\', 'a', ' ', 'é']

    def value(depth: int):
        kind = rng.random()
        if depth == 0 or kind < 0.3:
            return "".join(rng.choice(pieces) for _ in range(rng.randrange(6)))
        if kind < 0.65:
            return [value(depth - 1) for _ in range(rng.randrange(1, 3))]
        return {"".join(rng.choice(pieces) for _ in range(3)): value(depth - 1) for _ in range(rng.randrange(1, 3))}

    def walked(v) -> int:
        if isinstance(v, list):
            return 1 + max(map(walked, v), default=0)
        if isinstance(v, dict):
            return 1 + max(map(walked, v.values()), default=0)
        return 0

    for _ in range(200):
        rows = [{"s1": value(rng.randrange(9))} for _ in range(rng.randrange(1, 6))]
        limit = rng.randrange(1, 9)
        expected = next((i for i, row in enumerate(rows) if walked(row) > limit), None)
        block = "\n".join(json.dumps(row, ensure_ascii=rng.random() < 0.5) for row in rows).encode() + b"\n"
        assert first_too_deep(block, limit) == expected, (rows, limit)


# -- issue 50, item 4: a directory of parts is read as the scoring commands read a dataset ---------

def _pair_set(corpus_of):
    sentences, sources, words, counts = corpus_of
    pairs = sorted(zip(map(tuple, sentences[0::2]), map(tuple, sentences[1::2]), sources))
    return pairs, sorted(zip(words, counts))


def test_spark_partition_folders_are_read_with_their_source(tmp_path, tsv) -> None:
    """``partitionBy("source")`` puts each pair's source in its folder's name and leaves it out of
    the files: a folder of such folders only was refused, and a part beside them dropped them."""
    expected = _pair_set(_pairs_of(tsv, tmp_path))
    parts = tmp_path / "parts"
    for i, (a, b, source) in enumerate(PAIRS):
        folder = parts / f"source={source}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"s1": [a], "s2": [b]}), folder / f"part-{i}.snappy.parquet")
        (folder / f".part-{i}.snappy.parquet.crc").write_bytes(b"crc")
    (parts / "_SUCCESS").write_text("")
    (parts / "_temporary").mkdir()
    (parts / "_temporary" / "part-9.parquet").write_bytes(b"half written")
    assert _pair_set(_pairs_of(parts, tmp_path)) == expected
    mixed = tmp_path / "mixed"  # a part at the top beside a folder of parts (text, as Spark names it)
    (mixed / "year=2026").mkdir(parents=True)  # name order at each level: part-00000 first
    lines = tsv.read_text().splitlines(keepends=True)
    (mixed / "part-00000").write_text("".join(lines[:2]))
    (mixed / "year=2026" / "part-00001.txt").write_text("".join(lines[2:]))
    assert _pairs_of(mixed, tmp_path) == _pairs_of(tsv, tmp_path)


def test_a_file_that_is_no_part_is_one_line_not_pairs(tmp_path, tsv) -> None:
    """A README.md in the folder was trained on as TSV; now it is one line naming it, as the scoring
    commands refuse it. A part without a suffix that is Parquet (as Hive names them) reads as Parquet."""
    parts = tmp_path / "parts"
    parts.mkdir()
    lines = tsv.read_text().splitlines(keepends=True)
    (parts / "part-0.tsv").write_text("".join(lines[:2]))
    pq.write_table(pa.table({"s1": [p[0] for p in PAIRS[2:]], "s2": [p[1] for p in PAIRS[2:]],
                             "source": [p[2] for p in PAIRS[2:]]}), parts / "part-1")
    assert _pairs_of(parts, tmp_path) == _pairs_of(tsv, tmp_path)
    (parts / "README.md").write_text("About\tthese pairs\n")
    with pytest.raises(ProbsentError, match=r"parts/README\.md: not a part of pairs") as caught:
        load_mapped_pairs(parts, cache_dir=tmp_path / "cache")
    assert "\n" not in str(caught.value)


def test_a_fifo_in_a_dataset_is_one_line_for_training_and_scoring(tmp_path, tsv, capsys) -> None:
    """Both readers list a directory with one function (probsent/files/dataset_directory.py): a FIFO
    among the parts is refused by its kind, never opened and waited on."""
    from probsent.files.dataset_directory import dataset_files

    parts = tmp_path / "parts"
    (parts / "x=1").mkdir(parents=True)
    pq.write_table(pa.table({"s1": ["a b"], "s2": ["c d"], "text": ["a b"]}), parts / "x=1" / "part-0.parquet")
    assert dataset_files(parts) == [parts / "x=1" / "part-0.parquet"]
    os.mkfifo(parts / "x=1" / "part-1.parquet")
    with pytest.raises(ProbsentError, match=r"part-1\.parquet: a FIFO, not a part of the dataset directory"):
        load_mapped_pairs(parts, cache_dir=tmp_path / "cache")
    code = main(["specificity", "--input", str(parts), "--output", str(tmp_path / "out.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    one_error(err, "part-1.parquet: a FIFO, not a part of the dataset directory")
