"""``probsent specificity`` against a hostile user's inputs (issue 32, findings 8, 10-12, 14, 15,
18 and 19): Parquet parts with different columns, non-finite numbers and surrogate field names
in JSON Lines, huge integers, deep nesting, endless lines, too many workers, late errors and
byte-order marks."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from probsent.cli import main
from probsent.corpus_scoring.formats import MAX_JSON_DEPTH
from probsent.signals import usable_cores
from probsent.files.untrusted import MAX_LINE_BYTES
from tests.helpers import REPO, one_error, run_specificity
from tests.helpers import tiny_model as make_model

ENV = dict(os.environ, PYTHONPATH=str(REPO))


@pytest.fixture
def model_dir(tmp_path) -> str:
    make_model("wlo").save(tmp_path / "m")
    return str(tmp_path / "m")


run = run_specificity


def strict_json(line: str):
    """Parse as strict JSON: a bare NaN or Infinity is an error, as in strict readers."""
    def refuse(constant: str):
        raise ValueError(f"not strict JSON: {constant}")
    return json.loads(line, parse_constant=refuse)


# -- finding 8: Parquet parts with different columns --------------------------------------

@pytest.mark.slow
def test_parquet_parts_with_extra_columns_keep_them(model_dir, tmp_path, capsys) -> None:
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    pq.write_table(pa.table({"text": ["the cat", "a dog"], "n": [1, 2]}), dataset / "part-0.parquet")
    pq.write_table(pa.table({"text": ["a bird"], "n": [3], "extra": ["kept"]}), dataset / "part-1.parquet")
    code, out, err = run(capsys, "--model", model_dir, "--input", str(dataset))
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["extra"] for row in rows] == [None, None, "kept"]
    assert [row["n"] for row in rows] == [1, 2, 3]


def test_parquet_parts_with_conflicting_types_name_the_column_and_parts(model_dir, tmp_path, capsys) -> None:
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    pq.write_table(pa.table({"text": ["the cat"], "n": [1]}), dataset / "part-0.parquet")
    pq.write_table(pa.table({"text": ["a dog"], "n": ["one"]}), dataset / "part-1.parquet")
    code, out, err = run(capsys, "--model", model_dir, "--input", str(dataset))
    assert code == 2 and out == ""
    one_error(err, "column 'n' is int64 in part-0.parquet but string in part-1.parquet")


# -- finding 10: strict JSON out, distinct field names --------------------------------------

def test_json_lines_output_is_strict_json(model_dir, tmp_path, capsys) -> None:
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": ["the cat", "a dog"], "x": [math.nan, math.inf],
                             "deep": [[math.nan, 1.0], [-math.inf]]}), source)
    code, out, err = run(capsys, "--model", model_dir, "--input", str(source))
    assert code == 0, err
    rows = [strict_json(line) for line in out.splitlines()]
    assert [row["x"] for row in rows] == [None, None] and rows[0]["deep"] == [None, 1.0]
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "the cat", "big": 1e400, "small": -1e400, "ok": 2.5}\n')
    for output in ([], ["--output", str(tmp_path / "out.jsonl")]):
        code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl), *output)
        assert code == 0, err
        written = out if not output else Path(output[1]).read_text()
        row = strict_json(written)
        assert row["big"] is None and row["small"] is None and row["ok"] == 2.5


def test_lone_surrogate_field_names_stay_distinct(model_dir, tmp_path, capsys) -> None:
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "the cat", "\\ud800": 1, "\\udfff": 2, "v": "\\ud800"}\n')
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl))
    assert code == 0, err
    row = json.loads(out)
    assert row["\\ud800"] == 1 and row["\\udfff"] == 2 and row["v"] == "\ufffd"  # names spelled, values replaced
    jsonl.write_text('{"text": "the cat", "\\ud800": 1, "\\\\ud800": 2}\n')  # the spelling already taken
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl))
    assert code == 2 and out == ""
    one_error(err, f"{jsonl}:1: two field names become one")


# -- findings 11 and 12: huge integers and deep nesting -------------------------------------

@pytest.mark.parametrize("line,problem", [
    ('{"text": "a", "n": ' + "9" * 5000 + "}", "not valid JSON (Exceeds the limit"),
    ('{"text": "a", "n": ' + "[" * 500 + "]" * 500 + "}", f"not valid JSON (nested too deeply: more than {MAX_JSON_DEPTH} levels)"),
    ('{"text": "a", "n": ' + "[" * 100_000 + "]" * 100_000 + "}", f"not valid JSON (nested too deeply: more than {MAX_JSON_DEPTH} levels)"),
])
def test_huge_integers_and_deep_nesting_are_one_line(model_dir, tmp_path, capsys, line, problem) -> None:
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "the cat"}\n' + line + "\n")
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl))
    assert code == 2
    one_error(err, f"{jsonl}:2: ", problem)


def test_nesting_up_to_the_limit_is_written_back(model_dir, tmp_path, capsys) -> None:
    depth = MAX_JSON_DEPTH - 1
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "the cat", "n": ' + "[" * depth + "]" * depth + "}\n")
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl))
    assert code == 0, err
    assert json.loads(out)["n"] == json.loads("[" * depth + "]" * depth)


# -- finding 14: --workers capped at the cores ----------------------------------------------

@pytest.mark.slow
def test_workers_are_capped_at_the_cores_available(model_dir, tmp_path) -> None:
    text = tmp_path / "in.txt"
    text.write_text("the cat sat\n" * 20_000)  # three chunks: worker processes are started
    done = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity", "--model", model_dir, "--input",
                           str(text), "--workers", "1000"], env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"probsent: --workers 1000 is more than the {usable_cores()} cores available; "
                           f"using {usable_cores()}\n")
    assert len(done.stdout.splitlines()) == 20_000


# -- finding 15: a line without end ---------------------------------------------------------

def test_an_endless_line_is_one_line_naming_it(model_dir, tmp_path) -> None:
    """``--input /dev/zero``: the line never ends; memory stays near the cap, the error names line 1."""
    for source, name in (["--input", "/dev/zero"], "/dev/zero"), ([], "standard input"):
        with open("/dev/zero", "rb") as zeros:
            done = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity", "--model", model_dir,
                                   *source], stdin=zeros, env=ENV, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and done.stdout == ""
        one_error(done.stderr, f"{name}:1: a line longer than {MAX_LINE_BYTES:,} bytes")


def test_a_long_json_line_and_a_long_training_line_are_one_line(model_dir, tmp_path, capsys,
                                                                monkeypatch) -> None:
    monkeypatch.setattr("probsent.files.untrusted.MAX_LINE_BYTES", 1000)
    monkeypatch.setattr("probsent.files.untrusted.bounded_lines.__defaults__", (1000,))
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "the cat"}\n{"text": "' + "a " * 1000 + '"}\n')
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl))
    assert code == 2 and out == ""
    one_error(err, f"{jsonl}:2: a line longer than 1,000 bytes")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("the cat\ta cat\n" + "x " * 1000 + "\ty\n")
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))
    code = main(["train", "--data", str(pairs), "--out", str(tmp_path / "run"), "--no-validation"])
    err = capsys.readouterr().err
    assert code == 2
    one_error(err, f"{pairs}:2: a line longer than 1,000 bytes")
    assert not (tmp_path / "run").exists()


def test_training_tokenizes_only_up_to_the_token_cap(tmp_path) -> None:
    """A long training sentence is cut as before (the same tokens), without tokenizing the rest."""
    from probsent.data.pairs import ReadReport, read_tokenized_pairs
    from probsent.text.tokenize import tokenize

    long = "The cat sat on the mat, didn't it? " * 2000
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(f"{long}\ta short one\n")
    report = ReadReport()
    [(first, second, _)] = list(read_tokenized_pairs(pairs, max_tokens=100, report=report))
    assert first == tokenize(long)[:100] and second == tokenize("a short one")
    assert report.truncated_sentences == 1


# -- finding 18: errors before any work -----------------------------------------------------

def test_an_empty_output_path_is_refused_first(model_dir, capsys) -> None:
    code, out, err = run(capsys, "--model", model_dir, "the cat", "--output", "")
    assert code == 2 and out == ""
    one_error(err, "--output: an empty path")


@pytest.mark.slow
def test_a_missing_json_field_is_refused_before_any_output(model_dir, tmp_path, capsys) -> None:
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('{"text": "the cat"}\n' * 20_000)
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl), "--column", "nope")
    assert code == 2 and out == ""  # not 16,384 null lines first
    one_error(err, "no row has a field 'nope'")
    jsonl.write_text('{"text": "the cat"}\n' * 9000 + '{"late": "a dog"}\n')  # found late: still scored
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl), "--column", "late")
    assert code == 0, err
    assert len(out.splitlines()) == 9001 and json.loads(out.splitlines()[-1])["specificity"] is not None


# -- finding 19: byte-order marks -----------------------------------------------------------

def test_a_byte_order_mark_on_any_line_or_argument_is_dropped(model_dir, tmp_path, capsys) -> None:
    code, plain, err = run(capsys, "--model", model_dir, "the cat", "a dog")
    assert code == 0, err
    code, marked, err = run(capsys, "--model", model_dir, "\ufeffthe cat", "\ufeffa dog")
    assert code == 0 and marked == plain, err
    text = tmp_path / "in.txt"
    text.write_bytes(b"\xef\xbb\xbfthe cat\n\xef\xbb\xbfa dog\n")  # two files joined with cat
    code, out, err = run(capsys, "--model", model_dir, "--input", str(text))
    assert code == 0 and out == plain and "\ufeff" not in out, err
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_bytes(b'{"text": "the cat"}\n\xef\xbb\xbf{"text": "a dog"}\n')
    code, out, err = run(capsys, "--model", model_dir, "--input", str(jsonl))
    assert code == 0, err
    assert [json.loads(line)["text"] for line in out.splitlines()] == ["the cat", "a dog"]


def test_a_json_lines_fifo_is_read_once(model_dir, tmp_path) -> None:
    """The field check before output reads only regular files: a FIFO's rows reach the scorer."""
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"printf '%s\\n' '{{\"text\": \"the cat\"}}' > {fifo}"])
    done = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity", "--model", model_dir, "--input",
                           str(fifo)], env=ENV, capture_output=True, text=True, timeout=120)
    writer.wait(30)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"] == "the cat"
