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
from tests.helpers import one_error

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
    assert code == 2
    one_error(capsys.readouterr().err, fragment)
    assert (tmp_path / "exists.npy").read_bytes() == b"mine"  # never overwritten without --force


@pytest.mark.slow
def test_encode_starts_without_torch(tmp_path) -> None:
    code = ("import sys; from probsent.cli import main; "
            f"code = main(['encode', 'A sentence.', '--output', {str(tmp_path / 'o.npy')!r}]); "
            "assert 'torch' not in sys.modules; sys.exit(code)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


WORDS = "a man woman plays guitar dog runs in the park near river , . big small red quickly".split()


def _lines(count: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 12)))) for _ in range(count)]


def test_blank_rows_are_those_the_api_calls_missing(tmp_path, model) -> None:
    # a row is null in the output exactly where model.encode has no sentence (zero mean, NaN variance)
    odd = ["\u200b", "\xa0", "\u3000 ", "\x1c", "x\u200b", "\t", "\u00ad", "word"]
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": odd}), source)
    out = tmp_path / "out.parquet"
    assert main(["encode", "--input", str(source), "--output", str(out)]) == 0
    written = pq.read_table(out).column("mean").to_pylist()
    mean, variance = model.encode(odd)
    for text, row, m, v in zip(odd, written, mean, variance):
        if np.isnan(v).all():
            assert row is None and not m.any(), repr(text)
        else:
            assert np.array_equal(np.array(row, np.float32), m), repr(text)
    # Python's whitespace gives no token (a null row); U+200B, U+00AD and U+001C... are not
    # whitespace to str.isspace: U+200B and U+00AD are one <unk> token each, and get a row
    assert [row is None for row in written] == [False, True, True, True, False, True, False, False]


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".parquet", ".npy"])
def test_workers_write_the_same_file(tmp_path, suffix) -> None:
    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(20000)) + "\n", encoding="utf-8")
    outputs = [tmp_path / f"out{workers}{suffix}" for workers in (1, 2)]
    for workers, out in zip((1, 2), outputs):
        assert main(["encode", "--input", str(source), "--output", str(out), "--workers", str(workers)]) == 0
    assert outputs[0].read_bytes() == outputs[1].read_bytes()


def _interrupted(monkeypatch, after: int):
    """Make the encode command stop (as Ctrl-C does: exit status 130) when it asks for the encodings
    of the chunk after the first ``after``."""
    from probsent.corpus_scoring import encoding

    calls = []
    original = encoding.chunk_encodings

    def stopping(model, texts, batch_size=256):
        calls.append(len(texts))
        if len(calls) > after:
            raise KeyboardInterrupt()
        return original(model, texts, batch_size)

    monkeypatch.setattr(encoding, "chunk_encodings", stopping)
    return lambda: monkeypatch.setattr(encoding, "chunk_encodings", original)


@pytest.mark.parametrize("suffix", [".parquet", ".npy"])
def test_an_interrupted_run_continues_into_the_same_file(tmp_path, monkeypatch, suffix) -> None:
    from probsent.corpus_scoring import encoding

    monkeypatch.setattr(encoding, "ROW_GROUP", 4096)  # several row groups in a small file
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": np.arange(20000), "text": _lines(20000)}), source)
    whole, resumed = tmp_path / f"whole{suffix}", tmp_path / f"resumed{suffix}"
    assert main(["encode", "--input", str(source), "--output", str(whole), "--workers", "1"]) == 0
    restore = _interrupted(monkeypatch, after=2)
    assert main(["encode", "--input", str(source), "--output", str(resumed), "--workers", "1"]) == 130
    restore()
    partial = tmp_path / f".resumed{suffix}.partial"
    assert not resumed.exists() and partial.exists()  # nothing in place, the rows so far kept
    if suffix == ".npy":  # a kill mid-row: the partial row is written again
        with open(partial, "r+b") as handle:
            handle.truncate(partial.stat().st_size - 100)
    else:  # whole row groups only: 2 chunks of 8,192 rows = 4 groups of 4,096
        assert pq.ParquetFile(partial).metadata.num_rows == 16384
    assert main(["encode", "--input", str(source), "--output", str(resumed), "--workers", "1"]) == 0
    assert resumed.read_bytes() == whole.read_bytes()
    assert not partial.exists() and not (tmp_path / f".resumed{suffix}.partial.json").exists()


def test_a_partial_output_of_another_input_is_refused_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    sources = [tmp_path / "a.txt", tmp_path / "b.txt"]
    for seed, path in enumerate(sources):
        path.write_text("\n".join(_lines(9000, seed)) + "\n", encoding="utf-8")
    out = tmp_path / "out.npy"
    restore = _interrupted(monkeypatch, after=1)
    assert main(["encode", "--input", str(sources[0]), "--output", str(out), "--workers", "1"]) == 130
    restore()
    partial = tmp_path / ".out.npy.partial"
    kept = partial.read_bytes()
    capsys.readouterr()
    assert main(["encode", "--input", str(sources[1]), "--output", str(out), "--workers", "1"]) == 2
    one_error(capsys.readouterr().err, "another input, model or output", "--force")
    assert partial.read_bytes() == kept and not out.exists()
    assert main(["encode", "--input", str(sources[1]), "--output", str(out), "--workers", "1", "--force"]) == 0
    expected = model_means(sources[1])
    assert np.array_equal(np.load(out)[:, 0], expected) and not partial.exists()


def model_means(path) -> np.ndarray:
    return probsent.load().encode(path.read_text(encoding="utf-8").splitlines())[0]


def test_a_killed_runs_parquet_without_footer_starts_over(tmp_path, capsys) -> None:
    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(50)) + "\n", encoding="utf-8")
    whole, out = tmp_path / "whole.parquet", tmp_path / "out.parquet"
    assert main(["encode", "--input", str(source), "--output", str(whole)]) == 0
    from probsent.corpus_scoring.resumable import Partial, input_identity, model_identity

    identity = {"input": input_identity(str(source), None), "model": model_identity(probsent.load().path),
                "output": "parquet"}
    partial = Partial(str(out), identity)
    assert partial.claim(force=False) is False  # a new run's record
    partial.data.write_bytes(b"PAR1" + b"\0" * 100)  # what a kill mid-write leaves: no footer
    capsys.readouterr()
    assert main(["encode", "--input", str(source), "--output", str(out)]) == 0
    assert "started over" in capsys.readouterr().err
    assert out.read_bytes() == whole.read_bytes()


def test_a_model_is_identified_by_its_model_files_only(tmp_path) -> None:
    """A README beside the model files leaves a resumable run's model the same; a changed
    calibration makes it another (the SHA-256 over the model files, computed here by hand)."""
    import hashlib
    import shutil

    from probsent.corpus_scoring.resumable import model_identity
    from probsent.model_directory import MODEL_FILES

    model = tmp_path / "m"
    shutil.copytree(probsent.load().path, model)
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        data = (model / name).read_bytes()
        digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    before = model_identity(model)
    assert before == {"path": str(model.resolve()), "sha256": digest.hexdigest()}
    (model / "README.md").write_text("my notes", encoding="utf-8")
    assert model_identity(model) == before
    (model / "calibration.json").write_text((model / "calibration.json").read_text(encoding="utf-8") + " ",
                                            encoding="utf-8")
    assert model_identity(model)["sha256"] != before["sha256"]
