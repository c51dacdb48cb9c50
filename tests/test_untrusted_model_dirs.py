"""A model directory is untrusted input (issue 32, findings 2-5): FIFOs and devices in place of
its files, a config that claims a huge model, JSON nested too deep. Each is one line, at once,
through both readers (the torch-free scoring path and ``probsent.load``)."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from safetensors.numpy import save_file

import probsent
from probsent.cli import main
from probsent.model_directory import DEFAULT_MODEL
from probsent import ProbsentError
from tests.helpers import REPO
from tests.helpers import tiny_model as make_model

ENV = dict(os.environ, PYTHONPATH=str(REPO))
FILES = ["config.json", "model.safetensors", "vocab.txt", "calibration.json", "percentiles.json"]
LOAD = ("import probsent, sys\ntry:\n    probsent.load(sys.argv[1])\n"
        "except probsent.ProbsentError as exc:\n    sys.exit(str(exc))")


@pytest.fixture
def model_dir(tmp_path) -> Path:
    make_model("wlo").save(tmp_path / "m")
    (tmp_path / "m" / "calibration.json").write_text(json.dumps(
        {"slope": 1.0, "intercept": 0.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0}))
    shutil.copy(DEFAULT_MODEL / "percentiles.json", tmp_path / "m" / "percentiles.json")  # any sound table
    return tmp_path / "m"


def one_line(args: list[str]) -> str:
    """Run ``args`` (a hang fails by the timeout); it must fail with one line and no traceback."""
    done = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[-1]


@contextmanager
def no_hang(seconds: int = 60) -> Iterator[None]:
    """Fail, not hang, where a read blocks (a FIFO opened for reading): SIGALRM interrupts it."""
    def stop(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: a read blocked")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def both_readers(model: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The error of ``probsent specificity`` (the NumPy reader; run here, as the command line runs
    it, exit status 2 and one line) and of ``probsent.load`` (torch)."""
    with no_hang():
        assert main(["specificity", "--model", str(model), "a cat"]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len([line for line in err.splitlines() if line.strip()]) == 1, err
        with pytest.raises(ProbsentError) as info:
            probsent.load(model)
    assert "\n" not in str(info.value)
    return [err.strip(), str(info.value)]


@pytest.mark.parametrize("name", FILES)
def test_a_fifo_in_place_of_a_model_file_is_refused_without_opening_it(model_dir, name, capsys) -> None:
    (model_dir / name).unlink()
    os.mkfifo(model_dir / name)  # nothing ever writes to it: opening it for reading would block
    for message in both_readers(model_dir, capsys):
        assert f"{model_dir / name}:" in message and "a FIFO, not a regular file" in message, message


@pytest.mark.parametrize("name", FILES)
def test_a_link_to_dev_zero_is_refused(model_dir, name, capsys) -> None:
    (model_dir / name).unlink()
    (model_dir / name).symlink_to("/dev/zero")
    for message in both_readers(model_dir, capsys):
        assert f"{model_dir / name}:" in message and "a character device, not a regular file" in message


def test_a_link_to_a_regular_file_elsewhere_is_followed(model_dir, tmp_path) -> None:
    """A model cache that links each file to a blob (as the Hugging Face cache does) still loads."""
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    for name in FILES:
        (model_dir / name).rename(blobs / name)
        (model_dir / name).symlink_to(blobs / name)
    assert probsent.load(model_dir).specificity(["a cat"]).shape == (1,)


@pytest.mark.parametrize("name", ["config.json", "calibration.json", "percentiles.json", "vocab.txt"])
def test_a_file_larger_than_it_can_be_is_refused_unread(model_dir, name, capsys) -> None:
    """config.json and calibration.json hold at most 8 MiB; vocab.txt 1 KiB a word on average."""
    with open(model_dir / name, "ab") as handle:
        handle.truncate(64 * 2**20)  # sparse: 64 MiB of zeros that are never read
    for message in both_readers(model_dir, capsys):
        assert f"{model_dir / name}:" in message and "more than the" in message, message


@pytest.mark.slow
def test_weights_larger_than_their_header_says_are_refused(model_dir, capsys) -> None:
    with open(model_dir / "model.safetensors", "ab") as handle:
        handle.write(b"\0" * 1000)
    for message in both_readers(model_dir, capsys):
        assert "model.safetensors" in message and "but its header describes" in message, message


@pytest.mark.slow
def test_a_config_claiming_a_huge_model_is_refused_before_allocating(model_dir) -> None:
    """dim 4096 and a 1M-word vocab.txt: the config is checked against the weights' header (a
    tiny model) before the vocabulary is read or a table made; the process stays small."""
    config = json.loads((model_dir / "config.json").read_text())
    config["model"].update(dim=4096, vocab_size=1_000_000)
    (model_dir / "config.json").write_text(json.dumps(config))
    (model_dir / "vocab.txt").write_text("<unk>\n" + "".join(f"w{i}\n" for i in range(1, 1_000_000)))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    messages = [one_line([sys.executable, "-m", "probsent.cli", "specificity", "--model", str(model_dir), "a"]),
                one_line([sys.executable, "-c", LOAD, str(model_dir)])]
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert peak_kib < 1_500_000 or peak_kib == before, peak_kib  # 2 x 16 GB before the fix
    for message in messages:
        assert "model.safetensors" in message and "has shape" in message and "config.json implies" in message


def test_numpy_weights_with_the_right_shapes_load(model_dir) -> None:
    """The header check accepts what safetensors' own writer makes (float16 and float32)."""
    model = probsent.load(model_dir)
    weights = {k: v.numpy().astype("float16") for k, v in model.encoder.state_dict().items()}
    save_file(weights, str(model_dir / "model.safetensors"))
    assert abs(probsent.load(model_dir).specificity(["a cat"])[0] - model.specificity(["a cat"])[0]) < 1.0


@pytest.mark.parametrize("name", ["config.json", "calibration.json", "percentiles.json"])
def test_json_nested_too_deep_is_one_line(model_dir, name, capsys) -> None:
    (model_dir / name).write_text("[" * 100_000 + "]" * 100_000)
    for message in both_readers(model_dir, capsys):
        assert f"{model_dir / name}: damaged" in message and "nested too deeply" in message, message
