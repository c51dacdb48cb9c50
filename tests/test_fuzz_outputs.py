"""Fuzz of the output side of `probsent specificity --output`: generated paths (new, nested,
odd names, too long), file kinds (regular files of every mode, symbolic links to files, to
directories and dangling, chains of links, FIFOs, device nodes, directories, paths under a
file), --force or not, three formats; and concurrent writers to one path.

Asserted for every case: exit 0 or 2, nothing on standard error or exactly one line, never a
traceback; a FIFO or device is still one (and a FIFO's reader got the rows); a link is still a
link and its target holds the output; a replaced file keeps its mode; without --force an
existing file is untouched; nothing else in the directory changes and no temporary is left.
Half the cases come from a fixed seed, half from a fresh one (``PROBSENT_FUZZ_SEED`` replays
it), shown in the test's name and every failure message.
"""
from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from probsent.cli import main
from tests.helpers import REPO
from tests.helpers import tiny_model as make_model

pytestmark = pytest.mark.slow

CASES = 150  # per seed
FIXED_SEED = 26
SEEDS = [FIXED_SEED, int(os.environ.get("PROBSENT_FUZZ_SEED") or random.SystemRandom().randrange(2**32))]
KINDS = ["new", "nested new", "file", "link to file", "link chain", "dangling link", "fifo", "device",
         "directory", "link to directory", "under a file", "too long", "odd name"]
SUFFIXES = [".txt", ".jsonl", ".parquet", ""]
MODES = [0o600, 0o640, 0o644, 0o444, 0o755, 0o777, 0o400]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("model") / "m"
    make_model("wlo").save(path)
    return str(path)


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under ``root``: its kind, and a file's mode and bytes, a link's target."""
    found: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[str(path)] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                found[str(path)] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
            else:
                found[str(path)] = (stat.S_IFMT(info.st_mode),)
    return found


def make_target(case: Path, kind: str, suffix: str, rng: random.Random) -> tuple[str, Path | None]:
    """Create what the output path names; returns the path and the file that should receive
    the rows (None: nothing should)."""
    name = "out" + suffix
    if kind == "new":
        return str(case / name), case / name
    if kind == "nested new":
        return str(case / "a" / "b" / name), case / "a" / "b" / name
    if kind == "odd name":
        odd = rng.choice([" spaced out", "-dash", "ünïcödé ✓", "tab\there", "new\nline", "#hash", "..dots"]) + suffix
        return str(case / odd), case / odd
    if kind == "too long":
        return str(case / ("x" * 300 + suffix)), None
    if kind == "directory":
        (case / name).mkdir()
        return str(case / name), None
    if kind == "link to directory":
        (case / "d").mkdir()
        (case / name).symlink_to(case / "d")
        return str(case / name), None
    if kind == "under a file":
        (case / "plain").write_text("plain\n")
        return str(case / "plain" / name), None
    if kind == "fifo":
        os.mkfifo(case / name)
        return str(case / name), case / name
    if kind == "device":
        if os.geteuid() != 0:
            return make_target(case, "new", suffix, rng)
        os.mknod(case / name, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # our own null device node
        return str(case / name), None
    real = case / "real" / ("target" + suffix)
    real.parent.mkdir()
    if kind != "dangling link":
        real.write_text("precious\n")
        real.chmod(rng.choice(MODES))
    if kind == "file":
        return str(real), real
    link = case / name
    if kind == "link chain":
        (case / "middle").symlink_to(real)
        link.symlink_to(case / "middle")
    else:
        link.symlink_to(real)
    return str(link), real


def read_fifo(path: Path, got: list[bytes]) -> threading.Thread:
    thread = threading.Thread(target=lambda: got.append(path.read_bytes()), daemon=True)
    thread.start()
    return thread


def release_fifo(path: Path) -> None:
    """Let a reader still waiting to open the FIFO see an end (the run never opened it)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def rows_in(path: Path, suffix: str, data: bytes | None = None) -> list[str]:
    """The sentences written to ``path`` (or in ``data``, read from a FIFO)."""
    if suffix == ".parquet":
        if data is not None:
            tmp = path.parent / "fifo-copy.parquet"
            tmp.write_bytes(data)
            rows = pq.read_table(tmp).column("sentence").to_pylist()
            tmp.unlink()
            return rows
        return pq.read_table(path).column("sentence").to_pylist()
    text = (data if data is not None else path.read_bytes()).decode()
    if suffix == ".jsonl":
        return [json.loads(line)["sentence"] for line in text.splitlines()]
    return [line.split("\t", 1)[1] for line in text.splitlines()]


@pytest.mark.parametrize("seed", SEEDS, ids=lambda seed: f"seed{seed}")
def test_fuzz_output_targets(model_dir, tmp_path, capsys, seed) -> None:
    rng = random.Random(seed)
    sentences = ["the cat sat", "a dog ran in the park"]
    for number in range(CASES):
        case = tmp_path / f"case{number}"
        case.mkdir()
        kind, suffix, force = rng.choice(KINDS), rng.choice(SUFFIXES), rng.random() < 0.5
        where = f"seed {seed}, case {number}: {kind}, {suffix or 'no suffix'}, force {force}"
        output, receiver = make_target(case, kind, suffix, rng)
        before = snapshot(case)
        got: list[bytes] = []
        reader = read_fifo(Path(output), got) if kind == "fifo" else None
        code = main(["specificity", "--model", model_dir, *sentences, "--output", output,
                     *(["--force"] if force else [])])
        if reader is not None:
            release_fifo(Path(output))
            reader.join(30)
        err = capsys.readouterr().err
        assert code in (0, 2), f"{where}: exit {code}, {err}"
        assert (err == "") == (code == 0) and err.count("\n") <= 1 and "Traceback" not in err, f"{where}: {err}"
        if code == 2:
            assert err.startswith("probsent: error: "), f"{where}: {err}"
        after = snapshot(case)
        assert not [p for p in after if Path(p).name.endswith(".tmp")], f"{where}: a temporary is left"
        existing = kind in ("file", "link to file", "link chain")
        if receiver is None or (existing and not force):
            assert code == 2 or kind == "device", f"{where}: exit {code}"
            assert after == before, f"{where}: something changed"
            continue
        assert code == 0, f"{where}: {err}"
        if kind == "fifo":
            assert stat.S_ISFIFO(os.lstat(output).st_mode), where
            assert rows_in(receiver, suffix, got[0]) == sentences, where
            continue
        assert rows_in(receiver, suffix) == sentences, where
        if existing:  # replaced: same mode, links still links, nothing else touched
            assert stat.S_IMODE(receiver.stat().st_mode) == before[str(receiver)][1], where
        changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
        assert changed <= {str(receiver), *map(str, receiver.parents)}, f"{where}: {changed}"


def test_concurrent_writers_leave_one_complete_output(model_dir, tmp_path) -> None:
    """Writers started together on one new path, with and without --force: each ends 0 or 2
    with one line, and the file is one writer's complete output, never a mix. A writer stops
    because the file exists (without --force) or because another is writing it (the output's
    writer lock, issue 50: with or without --force)."""
    target = tmp_path / "shared.jsonl"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    writers = [subprocess.Popen([sys.executable, "-m", "probsent.cli", "specificity", "--model", model_dir,
                                 *[f"writer {i} line {j}" for j in range(300)], "--output", str(target),
                                 *(["--force"] if i % 2 else [])],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
               for i in range(3)]
    results = [(w.wait(timeout=300), w.stderr.read()) for w in writers]
    assert all(code in (0, 2) for code, _ in results), results
    assert any(code == 0 for code, _ in results), results
    for i, (code, err) in enumerate(results):
        if code == 2:
            assert err.count("\n") == 1 and ("another probsent process is writing it" in err
                                             or (i % 2 == 0 and "already exists" in err)), results
    rows = [json.loads(line)["sentence"] for line in target.read_text().splitlines()]
    owner = rows[0].split(" line ")[0]
    assert rows == [f"{owner} line {j}" for j in range(300)]
    assert sorted(os.listdir(tmp_path)) == ["shared.jsonl"]
