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
    from probsent.corpus_scoring import encode_command as encoding

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
    from probsent.corpus_scoring import encode_command as encoding

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
        if not (model / name).exists():  # the model files present (the shipped model has no open vocabulary)
            continue
        data = (model / name).read_bytes()
        digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    before = model_identity(model)
    assert before == {"path": str(model.resolve()), "sha256": digest.hexdigest()}
    (model / "README.md").write_text("my notes", encoding="utf-8")
    assert model_identity(model) == before
    (model / "calibration.json").write_text((model / "calibration.json").read_text(encoding="utf-8") + " ",
                                            encoding="utf-8")
    assert model_identity(model)["sha256"] != before["sha256"]


@pytest.mark.parametrize("command", ["encode", "specificity"])
@pytest.mark.parametrize("extra,fragment", [(["--column", "text"], "--column text"),
                                            (["--input", "README.md"], "not both")])
def test_flags_that_sentences_as_arguments_would_ignore_are_one_line(tmp_path, capsys, command, extra,
                                                                     fragment) -> None:
    """Issue 50, item 15: ``encode --column text "x"`` (or ``--input f "x"``) ran, ignoring the flag."""
    output = ["--output", str(tmp_path / "o.npy")] if command == "encode" else []
    assert main([command, "A sentence.", *extra, *output]) == 2
    one_error(capsys.readouterr().err, fragment)
    assert not (tmp_path / "o.npy").exists()


def test_the_output_that_is_the_input_is_refused_in_words_for_any_command(tmp_path, capsys) -> None:
    """Issue 50, item 15: the refusal said "write the scores" to ``encode``, which writes encodings."""
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"text": ["A sentence."]}), source)
    assert main(["encode", "--input", str(source), "--output", str(source), "--force"]) == 2
    err = capsys.readouterr().err
    one_error(err, "is the input file; write the output to a new file")


HOLD_LOCK = ("import sys, time; from pathlib import Path; from probsent.files.user_output import lock_output; "
             "lock = lock_output(Path(sys.argv[1]).resolve(), sys.argv[1]); print('held', flush=True); time.sleep(60)")


@pytest.mark.parametrize("command", [["encode", "--input", "{input}", "--output", "{output}"],
                                     ["specificity", "--input", "{input}", "--output", "{output}"],
                                     ["similarity", "--corpus", "{input}", "--output", "{output}", "a query"]])
def test_a_second_writer_of_an_output_is_refused_in_one_line_and_writes_nothing(tmp_path, capsys, command) -> None:
    """Issue 50, item 1: one lock for every writer of an output. While another process holds the
    output's writer lock (as a running encode does from before its first write), a run writing the
    same file stops with one line naming it (pid, host), exit 2, and leaves the files beside it as
    they were (an overlapping encode deleted the first's ``.partial.next``, and the first then put a
    half-written file in place)."""
    import os
    import socket

    from tests.helpers import REPO

    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(100)) + "\n", encoding="utf-8")
    output = tmp_path / ("out.npy" if command[0] == "encode" else "out.tsv")
    (tmp_path / f".{output.name}.partial").write_bytes(b"the first run's rows")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(output)], cwd=tmp_path, text=True,
                              stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert holder.stdout.readline() == "held\n"
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
        argv = [part.format(input=source, output=output) for part in command]
        assert main(argv) == 2
        one_error(capsys.readouterr().err, str(output), "another probsent process is writing it",
                  f"pid {holder.pid} on {socket.gethostname()}")
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    finally:
        holder.kill()
        holder.wait()
    assert main([part.format(input=source, output=output) for part in command]) == 0  # the kernel freed it
    assert not (tmp_path / f".{output.name}.lock").exists()


@pytest.mark.slow
def test_two_overlapping_encodes_leave_one_complete_output(tmp_path) -> None:
    """Issue 50, item 1, as found: a second ``probsent encode`` to the output of a running one
    (held still with SIGSTOP while it writes) is refused in one line; the first then finishes
    a complete file."""
    import os
    import signal
    import time

    from tests.helpers import REPO

    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(300_000)) + "\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "probsent.cli", "encode", "--input", str(source), "--output", str(out)]
    first = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    partial = tmp_path / ".out.parquet.partial.next"
    while not partial.exists() and first.poll() is None:
        time.sleep(0.01)
    first.send_signal(signal.SIGSTOP)
    try:
        second = subprocess.run(argv, env=env, capture_output=True, text=True)
        assert second.returncode == 2 and "another probsent process is writing it" in second.stderr
        assert second.stderr.count("\n") == 1 and partial.exists()
    finally:
        first.send_signal(signal.SIGCONT)
    assert first.wait() == 0, first.stderr.read()
    assert pq.ParquetFile(out).metadata.num_rows == 300_000


def test_a_resumed_encode_knows_its_input_by_content_not_size_and_time(tmp_path, monkeypatch, capsys) -> None:
    """Issue 50, item 6: an input edited in place with the same size and its old modification time
    (as ``cp -p``, ``rsync -t`` or ``touch -r`` leave it) is another input: the partial output of
    the first is refused in one line, never continued into a mix of the two."""
    import os

    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(20000)) + "\n", encoding="utf-8")
    out = tmp_path / "out.npy"
    restore = _interrupted(monkeypatch, after=1)
    assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 130
    restore()
    stamp = os.stat(source)
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("a", "e"), encoding="utf-8")  # same size, other sentences
    os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert os.stat(source).st_size == stamp.st_size and os.stat(source).st_mtime_ns == stamp.st_mtime_ns
    capsys.readouterr()
    assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 2
    one_error(capsys.readouterr().err, "another input, model or output")
    assert not out.exists()


def test_an_encode_written_inside_its_input_dataset_resumes(tmp_path, monkeypatch, capsys) -> None:
    """Issue 50, item 8: an output inside the Parquet dataset it reads. Its own hidden partial files
    (and lock) were part of the input's identity, so the run could never continue; the input is now
    what its reader reads, and the resumed file equals a run that never stopped."""
    from probsent.corpus_scoring import encode_command as encoding

    monkeypatch.setattr(encoding, "ROW_GROUP", 4096)
    dataset = tmp_path / "data"
    dataset.mkdir()
    lines = _lines(20000)
    pq.write_table(pa.table({"text": lines[:12000]}), dataset / "part-0.parquet")
    pq.write_table(pa.table({"text": lines[12000:]}), dataset / "part-1.parquet")
    whole, resumed = tmp_path / "whole.parquet", dataset / "encoded.parquet"
    assert main(["encode", "--input", str(dataset), "--output", str(whole), "--workers", "1"]) == 0
    restore = _interrupted(monkeypatch, after=2)
    assert main(["encode", "--input", str(dataset), "--output", str(resumed), "--workers", "1"]) == 130
    restore()
    capsys.readouterr()
    assert main(["encode", "--input", str(dataset), "--output", str(resumed), "--workers", "1"]) == 0
    assert "8,192 of them by an earlier, interrupted run" in capsys.readouterr().err  # 2 chunks: 8,192 + 3,808 rows
    assert resumed.read_bytes() == whole.read_bytes()


class _DiskFullAfter:
    """A file whose writes fail as on a full disk (ENOSPC) once ``room`` more bytes are written."""

    def __init__(self, handle, room: int) -> None:
        self.handle, self.room = handle, room

    def write(self, data) -> int:
        import errno

        if len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return self.handle.write(data)

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.handle.close()


def _full_disk_for(monkeypatch, name: str, room: int) -> None:
    """Writes to the file called ``name`` fail as on a full disk after ``room`` bytes."""
    import builtins

    from probsent.corpus_scoring import encode_command as encoding

    def opening(path, mode="r", *args, **kwargs):
        handle = builtins.open(path, mode, *args, **kwargs)
        return _DiskFullAfter(handle, room) if str(path).endswith(name) else handle

    monkeypatch.setattr(encoding, "open", opening, raising=False)


def test_a_full_disk_keeps_the_partial_output_and_says_what_is_kept(tmp_path, monkeypatch, capsys) -> None:
    """Issue 50, item 12: an encode that meets a full disk leaves no half-written file of its own
    (a Parquet file cut short, without a footer, was later blamed on a kill), keeps the partial
    output of the earlier run as it was, says in its one line which hidden files are kept and
    their size; a resume needing more free space than the disk has says so before any work; the
    run that finally has room writes the bytes of a run that never stopped."""
    import shutil

    from probsent.corpus_scoring import encode_command as encoding

    monkeypatch.setattr(encoding, "ROW_GROUP", 4096)
    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(30000)) + "\n", encoding="utf-8")
    whole, out = tmp_path / "whole.parquet", tmp_path / "out.parquet"
    assert main(["encode", "--input", str(source), "--output", str(whole), "--workers", "1"]) == 0
    partial, following = tmp_path / ".out.parquet.partial", tmp_path / ".out.parquet.partial.next"
    with monkeypatch.context() as patch:  # a full disk at the first run: nothing of it is kept but its record
        _full_disk_for(patch, ".partial.next", 200_000)
        capsys.readouterr()
        assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 2
        one_error(capsys.readouterr().err, f"{out}: cannot write (No space left on device)",
                  "kept .out.parquet.partial.json (")
        assert not partial.exists() and not following.exists()
    restore = _interrupted(monkeypatch, after=2)
    assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 130
    restore()
    size = partial.stat().st_size
    assert f"kept .out.parquet.partial ({size / 1e6:,.1f} MB), .out.parquet.partial.json (" in capsys.readouterr().err
    kept = partial.read_bytes()
    with monkeypatch.context() as patch:  # the copy of the partial output meets the full disk
        _full_disk_for(patch, ".partial.next", size // 2)
        assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 2
        one_error(capsys.readouterr().err, "No space left on device", f".out.parquet.partial ({size / 1e6:,.1f} MB)")
        assert partial.read_bytes() == kept and not following.exists()
    with monkeypatch.context() as patch:  # less free space than the copy needs: said before any work
        patch.setattr(encoding.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 100, 100))
        assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 2
        one_error(capsys.readouterr().err, "continuing copies the rows already written", "0.0 MB free")
        assert partial.read_bytes() == kept and not following.exists()
    assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "killed" not in err and "16,384 of them by an earlier, interrupted run" in err
    assert out.read_bytes() == whole.read_bytes()


def test_a_full_disk_at_the_last_flush_keeps_no_cut_file(tmp_path, monkeypatch, capsys) -> None:
    """Issue 50, item 12: the footer fits the writer's buffer but not the disk (the failure shows
    when the buffer is flushed): the file cut short is not kept as the partial output."""
    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(50)) + "\n", encoding="utf-8")
    out = tmp_path / "out.parquet"

    class FlushFails(_DiskFullAfter):
        def write(self, data) -> int:
            return self.handle.write(data)

        def flush(self) -> None:
            import errno

            raise OSError(errno.ENOSPC, "No space left on device")

    import builtins

    from probsent.corpus_scoring import encode_command as encoding

    monkeypatch.setattr(encoding, "open", lambda path, mode="r", *a, **k: FlushFails(builtins.open(path, mode, *a, **k), 0)
                        if str(path).endswith(".next") else builtins.open(path, mode, *a, **k), raising=False)
    assert main(["encode", "--input", str(source), "--output", str(out), "--workers", "1"]) == 2
    one_error(capsys.readouterr().err, "No space left on device")
    assert not (tmp_path / ".out.parquet.partial").exists() and not (tmp_path / ".out.parquet.partial.next").exists()


@pytest.mark.slow
def test_a_killed_encode_with_workers_leaves_no_leaked_semaphore_warning(tmp_path) -> None:
    """Issue 50, item 15: SIGKILL of an ``encode --workers 2`` left multiprocessing's resource
    tracker printing "There appear to be 1 leaked semaphore objects to clean up at shutdown"
    (it removes them all the same). The run's standard error, read to its end (the workers and
    the tracker gone), holds no such line; the partial output is there to continue."""
    import os
    import signal
    import time

    from tests.helpers import REPO

    source = tmp_path / "in.txt"
    source.write_text("\n".join(_lines(400_000)) + "\n", encoding="utf-8")
    argv = [sys.executable, "-m", "probsent.cli", "encode", "--input", str(source), "--output",
            str(tmp_path / "out.npy"), "--workers", "2"]
    run = subprocess.Popen(argv, env=dict(os.environ, PYTHONPATH=str(REPO)), stderr=subprocess.PIPE, text=True)
    partial = tmp_path / ".out.npy.partial"
    deadline = time.time() + 120
    while time.time() < deadline and run.poll() is None and (not partial.exists() or partial.stat().st_size < 10**6):
        time.sleep(0.01)  # rows written: the workers are running
    assert run.poll() is None, run.stderr.read()
    run.kill()
    _, err = run.communicate(timeout=120)
    assert "leaked" not in err and "Traceback" not in err, err
    assert partial.exists()
