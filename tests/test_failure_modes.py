"""Failures that must stay one line, and promises kept at the extremes (issue 32, findings 9, 13,
16, 17, 18 and 19): export's start variance and output path, a full disk under export and
train, a fork after loading, calibrations with extreme values, and what batching changes."""
from __future__ import annotations

import json
import math
import os
import resource
import signal
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
import torch

import probsent
from probsent.api import SentenceModel
from probsent.readouts.calibration import Calibration
from probsent.cli import main
from probsent.data.vocab import Vocabulary
from probsent.models import build_model
from tests.helpers import REPO

ENV = dict(os.environ, PYTHONPATH=str(REPO))
SENTENCES = ["the cat sat on the mat", "a", "w3 w7 w11 w200 w999 the", "the the the the the the the"]


@pytest.fixture
def big_model(tmp_path) -> str:
    """A WLO of 2,000 words and dim 50: weights of 800 KB, far beyond its config and vocabulary."""
    torch.manual_seed(0)
    words = ["<unk>", "the", "a", "cat", "sat", "on", "mat"] + [f"w{i}" for i in range(1993)]
    SentenceModel(build_model({"type": "wlo", "vocab_size": len(words), "dim": 50}), Vocabulary(words)).save(
        tmp_path / "big")
    return str(tmp_path / "big")


def one_line(err: str, *parts: str) -> None:
    assert err.startswith("probsent: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err


def with_file_size_limit(limit: int):
    """A child that may write files of at most ``limit`` bytes: a full disk, as a write sees it."""
    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limit_files


# -- finding 9 and 18: export's start variance and a dangling --out --------------------------

@pytest.mark.parametrize("value", ["1e300", "1e7", "inf", "1e-300", "0"])
def test_export_refuses_a_start_variance_no_model_may_hold(big_model, tmp_path, capsys, value) -> None:
    assert main(["export", "--model", big_model, "--out", str(tmp_path / "x"), "--start-variance", value]) == 2
    one_line(capsys.readouterr().err, "--start-variance must be a positive number (from 1e-30 to 1e+06)")
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_export_writes_only_what_loads(tmp_path, capsys) -> None:
    """A start variance in range whose rescaled translations leave float16's range: refused, not written."""
    words = ["<unk>", "the", "cat"]
    encoder = build_model({"type": "wlo", "vocab_size": 3, "dim": 4})
    with torch.no_grad():
        encoder.shift.weight.fill_(100.0)  # times sqrt(1e6) = 1e5, beyond float16's 65,504
    SentenceModel(encoder, Vocabulary(words)).save(tmp_path / "m")
    assert main(["export", "--model", str(tmp_path / "m"), "--out", str(tmp_path / "x"), "--float16",
                 "--start-variance", "1e6"]) == 2
    one_line(capsys.readouterr().err, f"{tmp_path / 'x'}: the exported model would not load", "NaN or infinite")
    assert not (tmp_path / "x").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["m"]
    assert main(["export", "--model", str(tmp_path / "m"), "--out", str(tmp_path / "y"),
                 "--start-variance", "1e6"]) == 0  # float32 holds it
    assert probsent.load(tmp_path / "y").encoder.start_variance == 1e6


def test_export_refuses_a_dangling_link_before_exporting(big_model, tmp_path, capsys) -> None:
    (tmp_path / "out").symlink_to(tmp_path / "nowhere")
    assert main(["export", "--model", big_model, "--out", str(tmp_path / "out")]) == 2
    one_line(capsys.readouterr().err, f"{tmp_path / 'out'}: already exists (a symbolic link); choose a new --out")
    assert not (tmp_path / "nowhere").exists() and os.path.islink(tmp_path / "out")


# -- finding 13: a full disk under export and train ------------------------------------------

@pytest.mark.slow
def test_a_full_disk_while_exporting_is_one_line(big_model, tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "probsent.cli", "export", "--model", big_model, "--out",
                           str(tmp_path / "x")], env=ENV, capture_output=True, text=True, timeout=300,
                          preexec_fn=with_file_size_limit(200_000))
    assert done.returncode == 2, done.stderr
    one_line(done.stderr, f"{tmp_path / 'x' / 'model.safetensors'}: File too large")
    assert not (tmp_path / "x").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".x")]


@pytest.mark.slow
def test_a_full_disk_while_checkpointing_is_one_line_and_the_run_resumes(tmp_path, toy_pairs) -> None:
    out = tmp_path / "run"
    args = [sys.executable, "-m", "probsent.cli", "train", "--data", str(toy_pairs(10)), "--out", str(out),
            "--dim", "300", "--batch-size", "20", "--megabatch", "2", "--max-steps", "2", "--engine", "torch",
            "--no-validation"]
    env = dict(ENV, PROBSENT_CACHE=str(tmp_path / "cache"))
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=with_file_size_limit(100_000))  # the weights: about 130 KB
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("data: ")]  # its progress note
    one_line("\n".join(errors) + "\n", f"{out / 'best' / 'model.safetensors'}: File too large")
    assert not (out / "last").exists()
    done = subprocess.run([*args, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "last" / "config.json").read_text())["training"]["step"] == 2


# -- finding 16: a fork after loading ---------------------------------------------------------

FORKED = """
import multiprocessing, probsent
model = probsent.load()
model.encode(["the cat sat on the mat"] * 300)  # torch's thread pool has run in the parent

def work(sentence):
    return float(model.encode([sentence] * 300)[0].sum())

if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print(pool.map(work, ["a dog", "the cat"]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is a Unix start method")
def test_a_fork_after_loading_does_not_deadlock(tmp_path) -> None:
    """Before the fix the children waited forever on the parent's torch threads."""
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    done = subprocess.run([sys.executable, str(script)], env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    model = probsent.load()
    expected = [float(model.encode([s] * 300)[0].sum()) for s in ["a dog", "the cat"]]
    assert json.loads(done.stdout) == pytest.approx(expected, rel=1e-6)


# -- finding 17: extreme calibrations ---------------------------------------------------------

@pytest.mark.parametrize("slope,intercept", [(1e308, 0.0), (1e308, -1e308), (-1e308, 1e308), (1e-308, 1e308),
                                             (1e308, 1e308), (-1e308, -1e308)])
def test_extreme_calibrations_are_never_nan(slope, intercept) -> None:
    calibration = Calibration(("score",), (slope,), intercept, "x", 2)
    scores = np.array([-60.0, -1.0, 0.0, 1e-300, 1.0, 1.0000000000000002, 60.0, 1e300, -1e300])
    counts = np.ones(len(scores))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warnings either
        got = calibration.probability(scores, counts)
    assert np.all((got >= 0) & (got <= 1)), got
    for p, s in zip(got, scores):  # against the exact logit, in fractions
        logit = Fraction(slope) * Fraction(s) + Fraction(intercept)
        expected = 1.0 if logit > 800 else 0.0 if logit < -800 else 1.0 / (1.0 + math.exp(-float(logit)))
        assert p == pytest.approx(expected, abs=1e-12), (s, float(logit))
    assert np.all(np.diff(calibration.probability(np.sort(scores), counts)) * np.sign(slope) >= 0)  # the scores' order


def test_a_null_score_stays_null_under_an_extreme_calibration() -> None:
    calibration = Calibration(("score",), (1e308,), -1e308, "x", 2)
    assert np.isnan(calibration.probability(np.array([np.nan]), np.array([3]))[0])


# -- finding 19: what batching changes --------------------------------------------------------

def test_wlo_scores_are_the_same_bits_for_any_batch_and_encode_within_float32_rounding() -> None:
    """As the SentenceModel docstring says: the term-table scores are bit-identical, encode's float32
    values agree to a few 1e-7 relative."""
    model = probsent.load()
    sentences = SENTENCES * 20
    reference_entropy = model.entropy(sentences, batch_size=len(sentences))
    reference_mean, reference_var = model.encode(sentences, batch_size=len(sentences))
    for batch_size in (1, 3, 7):
        assert np.array_equal(model.entropy(sentences, batch_size=batch_size), reference_entropy)
        mean, var = model.encode(sentences, batch_size=batch_size)
        np.testing.assert_allclose(mean, reference_mean, rtol=1e-6, atol=1e-30)
        np.testing.assert_allclose(var, reference_var, rtol=1e-6, atol=1e-30)
    assert "can differ in their last bits" in SentenceModel.__doc__
