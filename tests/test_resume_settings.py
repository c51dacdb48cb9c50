"""A resumed run keeps its settings, and the pairs cache follows the file's content (issue 32,
findings 6 and 7)."""
from __future__ import annotations

import json
import os

import pytest

from probsent.cli import main
from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.settings import MAY_CHANGE_ON_RESUME, SETTINGS

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def run(tmp_path, toy_pairs):
    """A finished short WLO run in tmp_path/run; returns its flags."""
    args = ["train", "--model", "wlo", "--data", str(toy_pairs(10)), "--out", str(tmp_path / "run"),
            "--batch-size", "20", "--megabatch", "2", "--vocab-size", "200", "--max-steps", "2",
            "--engine", "torch", "--no-validation"]
    assert main(args) == 0
    return args


def with_flag(args: list[str], flag: str, value: str) -> list[str]:
    args = list(args)
    if flag in args:
        args[args.index(flag) + 1] = value
    else:
        args += [flag, value]
    return args


@pytest.mark.parametrize("flag,value", [("--model", "wordavg"), ("--dim", "7"), ("--lr", "0.5"),
                                        ("--seed", "9"), ("--batch-size", "10")])
def test_resume_refuses_a_setting_that_shapes_the_run(run, tmp_path, capsys, flag, value) -> None:
    before = (tmp_path / "run" / "last" / "model.safetensors").read_bytes()
    capsys.readouterr()
    assert main([*with_flag(run, flag, value), "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{flag} {value} (the run's:" in err and "only --out, --epochs, --max-steps" in err, err
    assert (tmp_path / "run" / "last" / "model.safetensors").read_bytes() == before  # nothing trained
    config = json.loads((tmp_path / "run" / "last" / "config.json").read_text())
    assert config["model"]["type"] == "wlo" and config["training"]["config"]["model"] == "wlo"


def test_resume_accepts_the_settings_that_may_change(run, tmp_path) -> None:
    args = with_flag(with_flag(with_flag(run, "--max-steps", "4"), "--eval-every", "3"), "--epochs", "5")
    assert main([*args, "--resume"]) == 0
    saved = json.loads((tmp_path / "run" / "last" / "config.json").read_text())["training"]
    assert saved["step"] == 4 and saved["config"]["max_steps"] == 4


def test_the_settings_that_may_change_are_settings() -> None:
    assert set(MAY_CHANGE_ON_RESUME) <= set(SETTINGS)
    assert {"model", "dim", "lr", "seed", "batch_size", "data", "vocab_size"}.isdisjoint(MAY_CHANGE_ON_RESUME)


def test_the_cache_follows_the_content_not_the_time(tmp_path) -> None:
    """A pair file edited in place with the same size and modification time is read anew."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("the cat sat\ta cat sat\nthe dog ran\ta dog ran\n")
    stamp = os.stat(pairs)
    first = load_mapped_pairs(pairs)
    pairs.write_text("the owl sat\ta owl sat\nthe dog ran\ta dog ran\n")  # same size
    os.utime(pairs, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert os.stat(pairs).st_size == stamp.st_size and os.stat(pairs).st_mtime_ns == stamp.st_mtime_ns
    second = load_mapped_pairs(pairs)
    assert "owl" in second.words and "owl" not in first.words
    assert "cat" not in second.words


def test_resume_refuses_a_checkpoint_recording_a_key_that_is_no_setting(run, tmp_path, capsys) -> None:
    """A checkpoint of an older probsent recording a removed setting (here --adam, issue 35) is not
    resumed as something else: one line naming it."""
    path = tmp_path / "run" / "last" / "config.json"
    config = json.loads(path.read_text())
    config["training"]["config"]["adam"] = "lazy"
    path.write_text(json.dumps(config))
    capsys.readouterr()
    assert main([*with_flag(run, "--max-steps", "3"), "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--adam recorded, but not a setting" in err, err


def test_a_checkpoint_recording_rarity_from_null_resumes(run, tmp_path) -> None:
    """A checkpoint trained before ``--rarity-from`` left (issue 49) records it as null, the
    training counts, which is how probsent trains now: it resumes."""
    path = tmp_path / "run" / "last" / "config.json"
    config = json.loads(path.read_text())
    config["training"]["config"]["rarity_from"] = None
    path.write_text(json.dumps(config))
    assert main([*with_flag(run, "--max-steps", "4"), "--resume"]) == 0
    assert json.loads(path.read_text())["training"]["step"] == 4
