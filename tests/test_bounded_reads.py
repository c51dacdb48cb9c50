"""The last unbounded reads and small input slips of issue 43 (findings 8 and 10): every input is
read by lines of a bounded length (explain's --input and standard input, the percentile reference),
a Parquet text cell is held to the same limit, a FIFO is never handed to Arrow, a closed standard
input, a CRLF vocabulary and an --output ending in / are handled in one line."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import probsent
from probsent.cli import main
from probsent.errors import ProbsentError
from probsent.model_directory import DEFAULT_MODEL
from probsent.readouts.percentiles import reference_sample
from tests.helpers import one_error

REPO = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(REPO))
MEMORY = 3 * 2**30  # the address space a bounded read stays far below (an unbounded one reaches it)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _cli(args: list[str], stdin=None, timeout: float = 120) -> subprocess.CompletedProcess:  # noqa: ANN001
    return subprocess.run([sys.executable, "-m", "probsent.cli", *args], env=ENV, capture_output=True, text=True,
                          stdin=stdin, timeout=timeout, preexec_fn=_limited)


@pytest.mark.slow
def test_explain_reads_input_by_bounded_lines() -> None:
    done = _cli(["explain", "--input", "/dev/zero"])
    assert done.returncode == 2
    one_error(done.stderr, "/dev/zero:1: a line longer than")
    with open("/dev/zero", "rb") as zeros:
        done = _cli(["explain", "--input", "-"], stdin=zeros)
    assert done.returncode == 2
    one_error(done.stderr, "standard input:1: a line longer than")


def test_explain_reads_lines_as_specificity_does(tmp_path: Path, capsys) -> None:
    (tmp_path / "in.txt").write_bytes(b"\xef\xbb\xbfA cat.\r\n\r\n  \nA dog.\n")
    assert main(["explain", "--format", "json", "--input", str(tmp_path / "in.txt")]) == 0
    out = capsys.readouterr().out
    assert '"A cat."' in out and '"A dog."' in out and "\\r" not in out and "\\ufeff" not in out


def test_the_percentile_reference_is_read_by_bounded_lines(tmp_path: Path) -> None:
    with pytest.raises(ProbsentError, match="/dev/zero:1: a line longer than"):
        reference_sample("/dev/zero")
    (tmp_path / "pairs.tsv").write_bytes(b"A cat.\tA kitten.\tnews\r\nA dog.\tA puppy.\tnews\r\n")
    assert reference_sample(tmp_path / "pairs.tsv") == ["A cat.", "A dog."]


def test_a_parquet_cell_beyond_the_line_limit_is_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr("probsent.corpus_scoring.formats.MAX_LINE_BYTES", 1000)
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": ["A cat.", "x" * 1001, "A dog."]}), path)
    assert main(["specificity", "--input", str(path), "--output", str(tmp_path / "out.parquet")]) == 2
    one_error(capsys.readouterr().err, f"{path}: row 2: a text of 1,001 bytes")
    assert not (tmp_path / "out.parquet").exists()
    pq.write_table(pa.table({"text": ["A cat.", "x" * 1000]}), path)  # at the limit: scored
    assert main(["specificity", "--input", str(path), "--output", str(tmp_path / "out.parquet")]) == 0


@pytest.mark.slow
def test_a_fifo_named_parquet_is_one_line_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "in.parquet"
    os.mkfifo(fifo)
    done = _cli(["specificity", "--input", str(fifo)], timeout=60)
    assert done.returncode == 2
    one_error(done.stderr, f"{fifo}: a FIFO, not a Parquet file")


@pytest.mark.slow
def test_explain_with_standard_input_closed_is_one_line() -> None:
    done = subprocess.run(["bash", "-c", f"exec {sys.executable} -m probsent.cli explain --input - <&-"],
                          env=ENV, capture_output=True, text=True)
    assert done.returncode == 2
    one_error(done.stderr, "standard input is closed")


def test_a_vocabulary_with_crlf_line_ends_reads_as_with_lf(tmp_path: Path) -> None:
    import shutil

    path = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL, path)
    (path / "vocab.txt").write_bytes((DEFAULT_MODEL / "vocab.txt").read_bytes().replace(b"\n", b"\r\n"))
    sentence = "Einstein published relativity in 1905."
    assert probsent.load(path).coverage(sentence) == 1.0
    assert probsent.load(path).specificity(sentence) == probsent.load().specificity(sentence)


def test_an_output_ending_in_a_slash_is_a_directory_not_a_file(tmp_path: Path, capsys) -> None:
    for command in (["specificity", "A cat.", "--output"], ["explain", "A cat.", "--html"]):
        target = str(tmp_path / "newdir") + "/"
        assert main([*command, target]) == 2
        one_error(capsys.readouterr().err, f"{target}: names a directory")
        assert not (tmp_path / "newdir").exists()
