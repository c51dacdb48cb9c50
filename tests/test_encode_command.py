"""probsent encode: its files hold what model.encode gives, row for row; bad outputs are one line."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import probsent
from probsent.cli import main

SENTENCES = ["A man plays a guitar.", "", "Someone is outside.", "Einstein published relativity in 1905."]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


def _expected(model, sentences):
    present = [s for s in sentences if s is not None and s.strip()]
    mean, variance = model.encode(present)
    return dict(zip(present, mean)), dict(zip(present, variance))


def test_parquet_output_equals_the_api(tmp_path, model) -> None:
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": [1, 2, 3, 4, 5], "text": SENTENCES + [None]}), source)
    out = tmp_path / "out.parquet"
    assert main(["encode", "--input", str(source), "--output", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column_names == ["id", "text", "mean", "variance"]
    assert table.schema.field("mean").type == pa.list_(pa.float32(), 50)
    means, variances = _expected(model, SENTENCES)
    for row, text in enumerate(SENTENCES + [None]):
        if text in means:
            assert np.array_equal(np.array(table.column("mean")[row].as_py(), np.float32), means[text])
            assert np.array_equal(np.array(table.column("variance")[row].as_py(), np.float32), variances[text])
        else:  # blank or null: no sentence
            assert table.column("mean")[row].as_py() is None and table.column("variance")[row].as_py() is None


def test_npy_output_of_text_lines_equals_the_api(tmp_path, model) -> None:
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = tmp_path / "out.npy"
    assert main(["encode", "--input", str(source), "--output", str(out)]) == 0
    array = np.load(out)
    assert array.shape == (4, 2, 50) and array.dtype == np.float32
    means, variances = _expected(model, SENTENCES)
    for row, text in enumerate(SENTENCES):
        if text in means:
            assert np.array_equal(array[row, 0], means[text]) and np.array_equal(array[row, 1], variances[text])
        else:
            assert np.isnan(array[row]).all()


def test_jsonl_input(tmp_path, model) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"body": "A man plays a guitar."}\n{"body": "Someone is outside."}\n', encoding="utf-8")
    out = tmp_path / "out.parquet"
    assert main(["encode", "--input", str(source), "--column", "body", "--output", str(out)]) == 0
    mean = np.array(pq.read_table(out).column("mean").to_pylist(), np.float32)
    np.testing.assert_array_equal(mean, model.encode(["A man plays a guitar.", "Someone is outside."])[0])


@pytest.mark.parametrize("output,fragment", [("out.csv", "writes .parquet or .npy"), ("exists.npy", "exists")])
def test_bad_outputs_are_one_line(tmp_path, capsys, output, fragment) -> None:
    (tmp_path / "exists.npy").write_bytes(b"mine")
    code = main(["encode", "a sentence", "--output", str(tmp_path / output)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and fragment in err
    assert (tmp_path / "exists.npy").read_bytes() == b"mine"  # never overwritten without --force


@pytest.mark.slow
def test_encode_starts_without_torch(tmp_path) -> None:
    code = ("import sys; from probsent.cli import main; "
            f"code = main(['encode', 'A sentence.', '--output', {str(tmp_path / 'o.npy')!r}]); "
            "assert 'torch' not in sys.modules; sys.exit(code)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
