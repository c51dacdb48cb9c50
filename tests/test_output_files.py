"""`probsent specificity --output`: special files written directly, symlinks written through,
modes kept, "add --force" checked again at the end, OS errors as one line; and the input
side of issue 26 (byte-order marks, lone surrogates, damaged calibration, Parquet columns and
datasets). Real files, FIFOs and device nodes, all in a temporary directory."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from probsent.cli import main
from tests.helpers import REPO, one_error, run_specificity
from tests.helpers import tiny_model as make_model

ENV = dict(os.environ, PYTHONPATH=str(REPO))
CLI = [sys.executable, "-m", "probsent.cli"]


@pytest.fixture
def model_dir(tmp_path) -> str:
    make_model("wlo").save(tmp_path / "m")
    return str(tmp_path / "m")


run = run_specificity


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


# -- row 1: FIFOs and devices are written to, never replaced ------------------------------

@pytest.mark.parametrize("force", [True, False])
def test_a_fifo_is_written_to_not_replaced(model_dir, tmp_path, force) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = subprocess.run([*CLI, "specificity", "--model", model_dir, "the cat", "a dog", "--output", str(fifo),
                           *(["--force"] if force else [])], env=ENV, capture_output=True, text=True, timeout=120)
    reader.join(30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [line.split("\t")[1] for line in got[0].decode().splitlines()] == ["the cat", "a dog"]
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_device_is_written_to_not_replaced(model_dir, tmp_path, capsys) -> None:
    node = tmp_path / "null"  # our own node of the null device, never the system's /dev/null
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    code, _, err = run(capsys, "--model", model_dir, "the cat", "--output", str(node), "--force")
    assert code == 0, err
    assert stat.S_ISCHR(os.lstat(node).st_mode) and os.lstat(node).st_rdev == os.makedev(1, 3)
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_dev_stdout_and_a_process_substitution_are_written_to(model_dir, tmp_path) -> None:
    stdout = tmp_path / "stdout"  # what /dev/stdout is, made here: code that renames over it harms nothing
    stdout.symlink_to("/proc/self/fd/1")
    done = subprocess.run([*CLI, "specificity", "--model", model_dir, "the cat", "--output", str(stdout), "--force"],
                          env=ENV, capture_output=True, text=True)
    assert stdout.is_symlink()
    assert done.returncode == 0 and done.stdout.endswith("\tthe cat\n"), done.stderr
    command = (f"{sys.executable} -m probsent.cli specificity --model {model_dir} 'the cat' 'a dog' "
               f"--output >(wc -l > {tmp_path / 'count'}) --force; sleep 1")
    done = subprocess.run(["bash", "-c", command], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "count").read_text().strip() == "2"


# -- row 9: modes and symbolic links ----------------------------------------------------

def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_usual(model_dir, tmp_path, capsys) -> None:
    private = tmp_path / "p.txt"
    private.write_text("old\n")
    private.chmod(0o600)
    assert run(capsys, "--model", model_dir, "the cat", "--output", str(private), "--force")[0] == 0
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text().endswith("\tthe cat\n")
    umask = os.umask(0o022)
    try:
        assert run(capsys, "--model", model_dir, "the cat", "--output", str(tmp_path / "new.txt"))[0] == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_a_symlink_is_written_through(model_dir, tmp_path, capsys) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "scores.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert run(capsys, "--model", model_dir, "the cat", "--output", str(link), "--force")[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text().endswith("\tthe cat\n") and stat.S_IMODE(target.stat().st_mode) == 0o640
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "real" / "later.txt")
    assert run(capsys, "--model", model_dir, "a dog", "--output", str(dangling))[0] == 0
    assert dangling.is_symlink() and (tmp_path / "real" / "later.txt").read_text().endswith("\ta dog\n")
    code, _, err = run(capsys, "--model", model_dir, "a dog", "--output", str(link))
    assert code == 2
    one_error(err, "already exists; add --force")
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []


# -- row 10: "exists, add --force" is checked again at the final rename ------------------

@pytest.mark.slow
def test_a_file_written_during_the_run_is_never_overwritten_without_force(model_dir, tmp_path) -> None:
    out = tmp_path / "r.txt"
    process = subprocess.Popen([*CLI, "specificity", "--model", model_dir, "--output", str(out)], env=ENV,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write(b"the cat sat on the mat\n" * 20_000)
    process.stdin.flush()
    deadline = time.time() + 60
    while not leftovers(tmp_path) and time.time() < deadline:
        time.sleep(0.02)
    assert leftovers(tmp_path), "no temporary output appeared"
    out.write_text("keep\n")  # the user writes the file while the run goes on
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    one_error(err.decode(), str(out), "already exists", "add --force")
    assert out.read_text() == "keep\n" and leftovers(tmp_path) == []


# -- row 5: OS errors on output are one line naming the path ------------------------------

def test_os_errors_on_output_are_one_line(model_dir, tmp_path, capsys) -> None:
    (tmp_path / "file.txt").write_text("x")
    for output in (tmp_path / "file.txt" / "x.txt", tmp_path / "file.txt" / "deeper" / "x.txt"):
        code, _, err = run(capsys, "--model", model_dir, "the cat", "--output", str(output))
        assert code == 2
        one_error(err, f"{output}: cannot write (Not a directory)")
    code, _, err = run(capsys, "--model", model_dir, "the cat", "--output", str(tmp_path))
    assert code == 2
    one_error(err, "is a directory")


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_a_full_disk_on_standard_output_is_one_line(model_dir, tmp_path) -> None:
    full = tmp_path / "full"  # our own node of the full device (writes fail with ENOSPC)
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    with open(full, "w") as stdout:
        done = subprocess.run([*CLI, "specificity", "--model", model_dir, "the cat"], env=ENV, stdout=stdout,
                              stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2
    assert done.stderr == "probsent: error: standard output: cannot write (No space left on device)\n"


def test_a_closed_standard_input_is_one_line(model_dir) -> None:
    done = subprocess.run(["bash", "-c", f"exec {sys.executable} -m probsent.cli specificity --model {model_dir} <&-"],
                          env=ENV, capture_output=True, text=True)
    assert done.returncode == 2
    one_error(done.stderr, "standard input is closed")


def test_a_failed_run_leaves_no_directory_it_created(model_dir, tmp_path, capsys) -> None:
    (tmp_path / "in.jsonl").write_text('{"text": "a cat"}\n{"text": 5}\n')
    code, _, err = run(capsys, "--model", model_dir, "--input", str(tmp_path / "in.jsonl"), "--output",
                       str(tmp_path / "new" / "deeper" / "o.jsonl"))
    assert code == 2
    one_error(err, "in.jsonl:2")
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "m"]


# -- row 4: lone surrogates; row 6: byte-order marks --------------------------------------

@pytest.mark.parametrize("suffix", ["", ".jsonl", ".parquet"])
def test_lone_surrogates_become_replacement_characters(model_dir, tmp_path, capsys, suffix) -> None:
    (tmp_path / "s.jsonl").write_text('{"text": "a \\ud800 cat", "\\udc80": ["\\udfff"]}\n{"text": "dog"}\n')
    args = ["--model", model_dir, "--input", str(tmp_path / "s.jsonl")]
    if suffix:
        args += ["--output", str(tmp_path / f"o{suffix}")]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    if suffix == ".parquet":
        rows = pq.read_table(tmp_path / "o.parquet").to_pylist()
    else:
        text = out if not suffix else (tmp_path / "o.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
    # in a value it becomes U+FFFD; in a field name it is spelled out, so that names stay distinct (issue 32)
    assert [row["text"] for row in rows] == ["a \ufffd cat", "dog"] and rows[0]["\\udc80"] == ["\ufffd"]
    assert all(row["specificity"] is not None for row in rows)


def test_a_leading_byte_order_mark_is_dropped(model_dir, tmp_path) -> None:
    done = subprocess.run([*CLI, "specificity", "--model", model_dir], input=b"\xef\xbb\xbfthe cat\nthe cat\n",
                          env=ENV, capture_output=True)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.decode().splitlines()
    assert first == second and first.endswith("\tthe cat")
    (tmp_path / "in.jsonl").write_bytes(b'\xef\xbb\xbf{"text": "the cat"}\n{"text": "the cat"}\n')
    done = subprocess.run([*CLI, "specificity", "--model", model_dir, "--input", str(tmp_path / "in.jsonl")],
                          env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows[0] == rows[1] and list(rows[0]) == ["text", "specificity"]


# -- row 7: a damaged calibration.json ---------------------------------------------------

@pytest.mark.parametrize("content,problem", [
    ('{"slope": "0.5", "intercept": 0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1}',
     'slope must be a number, not "0.5"'),
    ('{"slope": null, "intercept": 0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1}',
     "slope must be a number, not null"),
    ('{"slope": NaN, "intercept": 0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1}',
     "slope must be finite, not nan"),
    ('{"slope": 1, "intercept": 0, "fitted_on": "x", "sentences": 2.5, "accuracy_at_half": 1}',
     "sentences must be a whole number"),
    ('{"slope": 1}', "missing field 'intercept'"),
    ("[1, 2]", "a JSON object is expected"),
    ("{", "damaged calibration"),
    (None, "Is a directory"),
])
def test_a_damaged_calibration_is_one_line(model_dir, capsys, content, problem) -> None:
    path = Path(model_dir) / "calibration.json"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    code, out, err = run(capsys, "--model", model_dir, "the cat", "--probability")
    assert code == 2 and out == ""
    one_error(err, f"{path}: damaged calibration", problem)


# -- row 8 and the Parquet dataset directory ----------------------------------------------

def test_unsupported_and_duplicate_columns_are_one_line(model_dir, tmp_path, capsys) -> None:
    (tmp_path / "in.jsonl").write_text('{"text": "a", "m": {}}\n')
    code, _, err = run(capsys, "--model", model_dir, "--input", str(tmp_path / "in.jsonl"), "--output",
                       str(tmp_path / "o.parquet"))
    assert code == 2
    one_error(err, f"{tmp_path / 'o.parquet'}: cannot write these columns as Parquet", "write .jsonl instead")
    assert not (tmp_path / "o.parquet").exists() and leftovers(tmp_path) == []
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["text", "text"])
    pq.write_table(table, tmp_path / "dup.parquet")
    code, _, err = run(capsys, "--model", model_dir, "--input", str(tmp_path / "dup.parquet"))
    assert code == 2
    one_error(err, "column 'text' appears more than once")


@pytest.mark.slow
def test_a_parquet_dataset_directory_is_read_as_one_table(model_dir, tmp_path, capsys) -> None:
    dataset = tmp_path / "spark-out"
    dataset.mkdir()
    for part in (2, 0, 1):  # written out of order: read in the order of the names
        pq.write_table(pa.table({"id": [2 * part, 2 * part + 1], "text": [f"cat {part}", None]}),
                       dataset / f"part-0000{part}-abc.snappy.parquet")
    (dataset / "_SUCCESS").write_text("")
    (dataset / ".part-00000-abc.snappy.parquet.crc").write_bytes(b"crc")
    code, _, err = run(capsys, "--model", model_dir, "--input", str(dataset), "--output", str(tmp_path / "o.parquet"))
    assert code == 0, err
    out = pq.read_table(tmp_path / "o.parquet")
    assert out.column("id").to_pylist() == list(range(6))
    assert out.column("text").to_pylist() == ["cat 0", None, "cat 1", None, "cat 2", None]
    assert out.column("specificity").null_count == 3


def test_export_never_replaces_a_directory_made_during_the_run(tmp_path, monkeypatch) -> None:
    import probsent.export as export
    from probsent import ProbsentError

    out = tmp_path / "small"
    write = export.write_model_files

    def and_meanwhile(*args, **kwargs):
        write(*args, **kwargs)
        out.mkdir()  # a user makes the directory, and puts a file in it, while the export runs
        (out / "notes.txt").write_text("mine")

    monkeypatch.setattr(export, "write_model_files", and_meanwhile)
    with pytest.raises(ProbsentError, match="appeared during the run"):
        export.export_model(make_model("wlo"), out)
    assert os.listdir(out) == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("argv", [["specificity", "A sentence."], ["explain", "A sentence."],
                                  ["similarity", "--corpus", "README.md", "A sentence."]])
def test_closed_standard_output_is_one_line(argv) -> None:
    """Issue 50, item 9: started with standard output closed (``>&-``: no ``sys.stdout``), a
    command that writes there says so in one line, exit status 2 (it was a traceback)."""
    import shlex

    done = subprocess.run(["bash", "-c", f"exec {shlex.join([*CLI, *argv])} >&-"], env=ENV, cwd=REPO,
                          capture_output=True, text=True)
    assert done.returncode == 2
    one_error(done.stderr, "standard output is closed")
