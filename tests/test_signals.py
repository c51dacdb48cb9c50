"""SIGTERM and SIGHUP end `probsent specificity` and `probsent train` like Ctrl-C: one line,
exit 128 + the signal, no temporary left, no worker process left. Workers die with their
parent however it dies, and a later run removes the temporaries a SIGKILL left behind.
Real processes, real signals."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers import tiny_model as make_model

pytestmark = pytest.mark.slow

ENV = dict(os.environ, PYTHONPATH=str(REPO))
LINES = "the cat sat on the mat\na man plays guitar in the park\n" * 4096  # one chunk of 8,192


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (Linux /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition, seconds: float = 60.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def model_dir(tmp_path) -> str:
    make_model("wlo").save(tmp_path / "m")
    return str(tmp_path / "m")


def hangup_as_by_default() -> None:
    """In the child: SIGHUP's default action, whatever this test run inherited (under ``nohup``
    it is ignored, and an ignored SIGHUP stays ignored by design)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_scoring(model_dir: str, out: Path, workers: int) -> subprocess.Popen:
    """`probsent specificity` reading a standard input that stays open: three chunks are
    written, then it waits (mid-run, its temporary output beside ``out``)."""
    process = subprocess.Popen([sys.executable, "-m", "probsent.cli", "specificity", "--model", model_dir,
                                "--output", str(out), "--workers", str(workers)], env=ENV,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=hangup_as_by_default)
    process.stdin.write(LINES.encode() * 3)
    process.stdin.flush()
    assert wait_for(lambda: temporaries(out.parent)), process.stderr.read() if process.poll() is not None else ""
    if workers > 1:
        assert wait_for(lambda: len(children(process.pid)) >= workers)
        time.sleep(1.0)  # the workers load the model and score
    return process


@pytest.mark.parametrize("signum,workers", [(signal.SIGTERM, 2), (signal.SIGHUP, 2), (signal.SIGTERM, 1),
                                            (signal.SIGHUP, 1)])
def test_sigterm_and_sighup_end_scoring_cleanly(model_dir, tmp_path, signum, workers) -> None:
    out = tmp_path / "o.txt"
    process = start_scoring(model_dir, out, workers)
    helpers = children(process.pid)
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum
    assert err.decode() == f"probsent: stopped by {signal.Signals(signum).name}\n"
    assert sorted(os.listdir(tmp_path)) == ["m"]  # no output, no temporary
    assert wait_for(lambda: not any(alive(pid) for pid in helpers), 10)  # workers, resource tracker


def test_workers_die_with_a_killed_parent_and_the_next_run_removes_its_temporary(model_dir, tmp_path) -> None:
    out = tmp_path / "o.txt"
    process = start_scoring(model_dir, out, 2)
    helpers = children(process.pid)
    left = temporaries(tmp_path)
    assert len(left) == 1 and left[0].startswith(f".o.txt.") and f".{process.pid}." in left[0]
    process.kill()
    process.wait()
    assert wait_for(lambda: not any(alive(pid) for pid in helpers), 10)
    assert temporaries(tmp_path) == left  # SIGKILL: nothing could clean up
    done = subprocess.run([sys.executable, "-m", "probsent.cli", "specificity", "--model", model_dir,
                           "the cat", "--output", str(out)], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert temporaries(tmp_path) == [] and out.read_text().endswith("\tthe cat\n")


def test_only_stale_temporaries_of_this_host_are_removed(tmp_path) -> None:
    from probsent.files.atomic_writes import remove_stale_temporaries_of, temporary_beside

    target = tmp_path / "o.txt"
    dead = subprocess.Popen(["true"])
    dead.wait()
    mine = Path(temporary_beside(target))  # .o.txt.<host>.<pid>.<random>.tmp
    host = mine.name.split(".")[3]
    assert mine.name.split(".")[4] == str(os.getpid())
    mine.unlink()
    names = {"stale": f".o.txt.{host}.{dead.pid}.abcd_123.tmp",
             "running": f".o.txt.{host}.{os.getppid()}.abcd_123.tmp",
             "other host": f".o.txt.{host}x.{dead.pid}.abcd_123.tmp",
             "not ours": f".o.txt.{dead.pid}.tmp",
             "another output": f".p.txt.{host}.{dead.pid}.abcd_123.tmp"}
    for name in names.values():
        (tmp_path / name).write_text("x")
    assert remove_stale_temporaries_of(target) == [tmp_path / names["stale"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(v for k, v in names.items() if k != "stale")


def test_sigterm_ends_training_cleanly(tmp_path, toy_pairs) -> None:
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "probsent.cli", "train", "--model", "wlo", "--data",
                                str(toy_pairs(40)), "--out", str(out), "--batch-size", "10", "--megabatch", "2",
                                "--eval-every", "1", "--epochs", "1000", "--engine", "torch", "--no-validation"],
                               env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wait_for(lambda: (out / "log.jsonl").exists() and len((out / "log.jsonl").read_text().splitlines()) >= 2,
                    180)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM
    assert err.decode().splitlines()[-1] == "probsent: stopped by SIGTERM"
    assert "Traceback" not in err.decode()
    assert not [p for p in out.iterdir() if p.name.endswith((".tmp", ".old"))]
    assert (out / "last").is_dir() and (out / "best").is_dir()


def test_a_stop_inside_a_held_step_is_raised_at_its_end() -> None:
    from probsent.signals import Stopped, signals_held, stopping_on_signals

    done, sigterm_before = [], signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped):
        with stopping_on_signals():
            with signals_held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler runs here, and must not raise
                done.append("rest of the step")
    assert done == ["rest of the step"]
    sigint_before = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's Ctrl-C, whatever ran us
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals_held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                done.append("again")
        assert done[-1] == "again" and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, sigint_before)
    # a Ctrl-C held outside stopping_on_signals leaves SIGTERM's handler as it was
    assert signal.getsignal(signal.SIGTERM) == sigterm_before


def test_a_stop_while_a_directory_is_replaced_leaves_no_old_copy(tmp_path, monkeypatch) -> None:
    """SIGTERM between the swap and the removal of the old version (where a checkpoint's
    `.last.old` used to stay behind) waits for the removal."""
    import shutil

    from probsent.files import atomic_writes
    from probsent.signals import Stopped, stopping_on_signals

    target = tmp_path / "last"
    target.mkdir()
    (target / "old.txt").write_text("old")
    removing = shutil.rmtree

    def interrupted_rmtree(path, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        return removing(path, *args, **kwargs)

    monkeypatch.setattr(atomic_writes.shutil, "rmtree", interrupted_rmtree)
    with pytest.raises(Stopped):
        with stopping_on_signals():
            with atomic_writes.atomic_path(target) as new:
                new.mkdir()
                (new / "new.txt").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]
    assert (target / "new.txt").read_text() == "new"
