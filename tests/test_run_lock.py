"""One writer per run directory: a second `probsent train --out d` (with or without --resume)
while one runs gets one line naming the holder, exit 2, and writes nothing. Two real processes."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.slow

ENV = dict(os.environ, PYTHONPATH=str(REPO))


def train_command(data: Path, out: Path, seed: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "probsent.cli", "train", "--model", "wlo", "--data", str(data), "--out", str(out),
            "--batch-size", "10", "--megabatch", "2", "--eval-every", "1", "--epochs", "1000", "--engine", "torch",
            "--seed", str(seed), "--no-validation", *extra]


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*"))}


def test_a_second_run_into_a_busy_directory_is_refused_and_writes_nothing(tmp_path, toy_pairs) -> None:
    data, out = toy_pairs(40), tmp_path / "run"
    first = subprocess.Popen(train_command(data, out, 1), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and not (out / "log.jsonl").exists() and first.poll() is None:
            time.sleep(0.05)
        assert (out / "log.jsonl").exists(), first.stderr.read().decode() if first.poll() is not None else ""
        first.send_signal(signal.SIGSTOP)  # hold still, so that any write of the second run would show
        before = snapshot(out)
        for extra in ([], ["--resume"]):
            second = subprocess.run(train_command(data, out, 2, *extra), env=ENV, capture_output=True, text=True)
            assert second.returncode == 2
            assert second.stderr.count("\n") == 1 and second.stderr.startswith("probsent: error: ")
            assert f"pid {first.pid} on {socket.gethostname()}, started " in second.stderr
            assert snapshot(out) == before
    finally:
        first.send_signal(signal.SIGCONT)
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=120)
    assert first.returncode == 128 + signal.SIGTERM
    # the lock goes with its holder: the run can be resumed now
    resumed = subprocess.run(train_command(data, out, 1, "--resume", "--max-steps", "1"), env=ENV,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr


def test_a_lock_left_by_a_killed_process_is_free_and_a_removed_lock_file_is_not_trusted(tmp_path) -> None:
    from probsent.training.run_directory import LOCK, lock_run_directory

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from probsent.training.run_directory import lock_run_directory; "
                               "lock_run_directory(Path(sys.argv[1])); print('held', flush=True); time.sleep(60)",
                               str(tmp_path)], env=ENV, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    holder.kill()
    holder.wait()
    lock = lock_run_directory(tmp_path)  # SIGKILL released it
    assert (tmp_path / LOCK).read_text().startswith(f"pid {os.getpid()} ")
    lock.release()
    assert not (tmp_path / LOCK).exists()
