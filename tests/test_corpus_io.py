"""`probsent specificity` on Parquet and JSON Lines files: every column and row kept, in
order, scores checked against WLO's closed-form entropy, bad input as one-line errors, atomic
output, several workers, flat memory."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from probsent.cli import main
from tests.helpers import REPO, wlo_specificity_reference
from tests.helpers import tiny_model as make_model

SENTENCES = ["The cat sat on the mat.", "a man plays guitar", None, "   ", "3 apples and a dog",
             "Tuesday, the president spoke."]


@pytest.fixture
def model_dir(tmp_path):
    model = make_model("wlo")
    model.save(tmp_path / "m")
    return str(tmp_path / "m"), model


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["specificity", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_scores(model, texts, scores) -> None:
    """Null where there is no sentence; elsewhere minus WLO's closed-form entropy."""
    present = [i for i, t in enumerate(texts) if t is not None and t.strip()]
    assert [i for i, s in enumerate(scores) if s is not None] == present
    np.testing.assert_allclose([scores[i] for i in present],
                               wlo_specificity_reference(model, [texts[i] for i in present]), atol=1e-4)


def test_parquet_keeps_columns_rows_and_order(model_dir, tmp_path, capsys) -> None:
    path, model = model_dir
    source = pa.table({"id": pa.array(range(len(SENTENCES)), pa.int32()), "body": SENTENCES,
                       "tags": [["a"], [], None, ["b", "c"], ["d"], []]})
    pq.write_table(source, tmp_path / "in.parquet", row_group_size=2)
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.parquet"), "--column", "body",
                       "--output", str(tmp_path / "out.parquet"))
    assert code == 0, err
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.column_names == ["id", "body", "tags", "specificity"]
    assert out.schema.field("id").type == pa.int32() and out.schema.field("specificity").type == pa.float64()
    assert out.select(["id", "body", "tags"]).to_pylist() == source.to_pylist()
    assert_scores(model, SENTENCES, out.column("specificity").to_pylist())


def test_jsonl_keeps_every_field(model_dir, tmp_path, capsys) -> None:
    path, model = model_dir
    rows = [{"text": "the cat", "meta": {"n": [1, 2.5, None]}, "ok": True}, {"text": None, "x": 1},
            {"other": "no text field"}, {"text": "a dog"}]
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n"
                                       + "\n".join(json.dumps(r) for r in rows[2:]) + "\n")
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"), "--output",
                       str(tmp_path / "out.jsonl"))
    assert code == 0, err
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in r.items() if k != "specificity"} for r in out] == rows
    assert_scores(model, [r.get("text") for r in rows], [r["specificity"] for r in out])


def test_jsonl_to_parquet_and_parquet_to_stdout(model_dir, tmp_path, capsys) -> None:
    path, model = model_dir
    rows = [{"text": t, "n": i} for i, t in enumerate(SENTENCES)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"), "--output",
                       str(tmp_path / "out.parquet"))
    assert code == 0, err
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column_names == ["text", "n", "specificity"]
    assert table.select(["text", "n"]).to_pylist() == rows
    code, out, _ = run(capsys, "--model", path, "--input", str(tmp_path / "out.parquet"), "--column", "text")
    assert code == 2  # the scored file already has a specificity column
    code, out, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"))
    assert code == 0, err
    printed = [json.loads(line) for line in out.splitlines()]  # a columnar input prints JSON Lines
    assert [r["n"] for r in printed] == list(range(len(SENTENCES)))
    assert_scores(model, SENTENCES, [r["specificity"] for r in printed])


def test_text_input_to_parquet(model_dir, tmp_path, capsys) -> None:
    path, model = model_dir
    (tmp_path / "in.txt").write_text("the cat\n\na dog barks\n")
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.txt"), "--output",
                       str(tmp_path / "out.parquet"))
    assert code == 0, err
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column("sentence").to_pylist() == ["the cat", "", "a dog barks"]
    assert_scores(model, ["the cat", "", "a dog barks"], table.column("specificity").to_pylist())


def test_empty_parquet_gives_empty_output(model_dir, tmp_path, capsys) -> None:
    path, _ = model_dir
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tmp_path / "in.parquet")
    assert run(capsys, "--model", path, "--input", str(tmp_path / "in.parquet"), "--output",
               str(tmp_path / "out.parquet"))[0] == 0
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.num_rows == 0 and out.column_names == ["text", "specificity"]


@pytest.mark.slow
def test_several_workers_give_the_same_rows(model_dir, tmp_path, capsys) -> None:
    """Three chunks over two worker processes: the same rows, in order, as one process."""
    path, model = model_dir
    texts = [f"the cat number {i} sat on {'the mat' if i % 3 else 'a dog'}" for i in range(20_000)]
    texts[12_345] = None
    pq.write_table(pa.table({"text": texts, "i": range(len(texts))}), tmp_path / "in.parquet")
    for workers in ("1", "2"):
        code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.parquet"), "--workers",
                           workers, "--output", str(tmp_path / f"out{workers}.parquet"))
        assert code == 0, err
    one, two = pq.read_table(tmp_path / "out1.parquet"), pq.read_table(tmp_path / "out2.parquet")
    assert two.column("i").to_pylist() == list(range(len(texts)))
    assert two.column("specificity").to_pylist() == one.column("specificity").to_pylist()
    picked = [0, 1, 8191, 8192, 12_345, 16_384, 19_999]
    assert_scores(model, [texts[i] for i in picked], [two.column("specificity")[i].as_py() for i in picked])


def test_output_is_never_overwritten_without_force(model_dir, tmp_path, capsys) -> None:
    path, _ = model_dir
    (tmp_path / "in.jsonl").write_text('{"text": "the cat"}\n')
    target = tmp_path / "out.jsonl"
    target.write_text("precious\n")
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"), "--output", str(target))
    assert code == 2 and "already exists; add --force" in err and err.count("\n") == 1
    assert target.read_text() == "precious\n"
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"), "--output",
                       str(tmp_path / "in.jsonl"), "--force")
    assert code == 2 and "is the input file" in err
    assert run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"), "--output", str(target),
               "--force")[0] == 0
    assert json.loads(target.read_text())["text"] == "the cat"


def test_an_error_late_in_the_input_leaves_the_old_output(model_dir, tmp_path, capsys) -> None:
    """Atomic output: a bad line after 10,000 good rows is an error, the existing file is kept
    and no temporary file is left behind."""
    path, _ = model_dir
    lines = [json.dumps({"text": f"sentence {i}"}) for i in range(10_000)] + ['{"text": 7}']
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    target = tmp_path / "out.parquet"
    target.write_bytes(b"old")
    code, _, err = run(capsys, "--model", path, "--input", str(tmp_path / "in.jsonl"), "--output",
                       str(target), "--force")
    assert code == 2 and err == f"probsent: error: {tmp_path / 'in.jsonl'}:10001: field 'text' is a number, not a string\n"
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "m", "out.parquet"]


def damaged_parquet(tmp_path, how: str):
    """A Parquet file of 30,000 rows (4 row groups), damaged in one of three ways."""
    path = tmp_path / "in.parquet"
    texts = [f"row {i} of a parquet file with words" for i in range(30_000)]
    pq.write_table(pa.table({"text": texts}), path, row_group_size=8_000, write_page_checksum=True)
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "middle":
        middle = len(data) // 2
        data[middle:middle + 64] = bytes(64)
    else:
        data = bytearray(b"just some text, not parquet\n" * 10)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("how", ["not parquet", "truncated", "middle"])
def test_damaged_parquet_is_one_line(model_dir, tmp_path, capsys, how) -> None:
    path, _ = model_dir
    source = damaged_parquet(tmp_path, how)
    code, _, err = run(capsys, "--model", path, "--input", str(source), "--output", str(tmp_path / "out.parquet"))
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"probsent: error: {source}: ")
    assert ("damaged Parquet data after row" if how == "middle" else "not a readable Parquet file") in err
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("content, args, message", [
    (None, ["--column", "body"], "in.parquet: no column 'body' (columns: text, n)"),
    (None, ["--column", "n"], "in.parquet: column 'n' holds int64, not text"),
    ('{"text": "a"}\n{"text": ["a", "b"]}\n', [], "in.jsonl:2: field 'text' is a array, not a string"),
    ('{"text": "a"}\n{"text": "b",}\n', [], "in.jsonl:2: not valid JSON (Expecting property name"),
    ('{"text": "a"}\n[1, 2]\n', [], "in.jsonl:2: not a JSON object"),
    (b'{"text": "caf\xe9"}\n', [], "in.jsonl:1: not valid UTF-8"),
    ('{"body": "a"}\n{"body": "b"}\n', [], "in.jsonl: no row has a field 'text'"),
    ('{"text": "a", "specificity": 1}\n', [], "in.jsonl:1: already has a field 'specificity'"),
    ('{"text": "a"}\n' * 9000 + '{"text": "b", "late": 1}\n', ["--output", "out.parquet", "--workers", "1"],
     "in.jsonl:9001: field 'late' appears only after the first chunk of rows"),
    ("a line\n", ["--column", "text"], "in.txt: --column needs Parquet (.parquet) or JSON Lines"),
    (None, ["--output", "out.tsv"], "out.tsv: a parquet input's columns need a .parquet or .jsonl output"),
])
def test_bad_input_is_one_line(model_dir, tmp_path, capsys, content, args, message) -> None:
    path, _ = model_dir
    if content is None:
        source = tmp_path / "in.parquet"
        pq.write_table(pa.table({"text": ["a", None], "n": [1, 2]}), source)
    else:
        source = tmp_path / ("in.txt" if "--column" in args else "in.jsonl")
        source.write_bytes(content if isinstance(content, bytes) else content.encode())
    os.chdir(tmp_path)
    code, out, err = run(capsys, "--model", path, "--input", source.name, *args)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"probsent: error: {message}"), err
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.slow
def test_parquet_memory_stays_flat(model_dir, tmp_path) -> None:
    """Peak Arrow and Python memory of scoring 16,384 and 65,536 rows, each in a fresh
    process: a streaming reader and writer hold a few chunks whatever the file's size."""
    path, _ = model_dir
    script = (
        "import sys, tracemalloc, pyarrow as pa, pyarrow.parquet as pq\n"
        "from probsent.cli import main\n"
        "n = int(sys.argv[1]); src = sys.argv[2] + f'/in{n}.parquet'\n"
        "with pq.ParquetWriter(src, pa.schema([('text', pa.string())])) as writer:\n"
        "    for start in range(0, n, 8192):\n"
        "        writer.write_table(pa.table({'text': [f'the cat number {i} sat on the mat'"
        " for i in range(start, min(n, start + 8192))]}))\n"
        "tracemalloc.start()\n"
        "assert main(['specificity', '--model', sys.argv[3], '--workers', '1', '--input', src,"
        " '--output', src + '.out.parquet']) == 0\n"
        "print(tracemalloc.get_traced_memory()[1], pa.default_memory_pool().max_memory())\n")
    peaks = {}
    for n in (16_384, 65_536):
        result = subprocess.run([sys.executable, "-c", script, str(n), str(tmp_path), path], cwd=REPO,
                                capture_output=True, text=True, check=True)
        peaks[n] = [int(v) for v in result.stdout.split()]
    (python_small, arrow_small), (python_large, arrow_large) = peaks[16_384], peaks[65_536]
    assert python_large < 1.5 * python_small, peaks
    assert arrow_large < 1.5 * arrow_small + 2**20, peaks
