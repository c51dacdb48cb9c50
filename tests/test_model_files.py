"""Damaged, partial or wrong model directories give one-line errors."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

import probsent
from probsent import ProbsentError


@pytest.fixture
def saved(tmp_path, make_model):
    path = tmp_path / "model"
    make_model("wlo").save(path)
    return path


def expect_error(path, fragment: str) -> None:
    with pytest.raises(ProbsentError) as info:
        probsent.load(path)
    message = str(info.value)
    assert "\n" not in message and fragment in message, message


def test_files_written(saved) -> None:
    assert sorted(p.name for p in saved.iterdir()) == ["config.json", "model.safetensors", "vocab.txt"]
    config = json.loads((saved / "config.json").read_text())
    assert config["format"] == "probsent-model" and config["model"]["type"] == "wlo"
    assert config["probsent_version"] == probsent.__version__ and config["tokenizer"]["lowercase"]
    assert (saved / "model.safetensors").read_bytes()[8:9] == b"{"  # safetensors header, no pickle


def test_missing_directory(tmp_path) -> None:
    expect_error(tmp_path / "nowhere", "no such model directory")


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "vocab.txt"])
def test_partial_directory(saved, name) -> None:
    (saved / name).unlink()
    expect_error(saved, f"{name} is missing")


def test_damaged_config(saved) -> None:
    (saved / "config.json").write_text('{"format": "probsent-model", ')
    expect_error(saved, "damaged config")
    (saved / "config.json").write_text('{"format": "something-else"}')
    expect_error(saved, "not a probsent model")


def test_truncated_weights(saved) -> None:
    data = (saved / "model.safetensors").read_bytes()
    (saved / "model.safetensors").write_bytes(data[: len(data) // 2])
    expect_error(saved, "damaged weights")


def test_wrong_shapes_and_nan(saved) -> None:
    weights = load_file(str(saved / "model.safetensors"))
    bad = dict(weights, **{"scale.weight": weights["scale.weight"][:, :3].contiguous()})
    save_file(bad, str(saved / "model.safetensors"))
    expect_error(saved, "has shape")
    nan = dict(weights)
    nan["shift.weight"] = weights["shift.weight"].clone()
    nan["shift.weight"][0, 0] = float("nan")
    save_file(nan, str(saved / "model.safetensors"))
    expect_error(saved, "NaN")


def test_vocabulary_mismatch(saved) -> None:
    (saved / "vocab.txt").write_text("<unk>\nonly\n")
    expect_error(saved, "2 words")


def test_save_never_leaves_partial_directory(saved, monkeypatch, make_model) -> None:
    model = make_model("wlo", seed=9)
    before = (saved / "model.safetensors").read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("probsent.model_directory.save_file", broken)
    with pytest.raises(OSError):
        model.save(saved)
    assert (saved / "model.safetensors").read_bytes() == before
    assert [p.name for p in saved.parent.iterdir()] == ["model"]  # no temporary left behind


def test_no_pickle_anywhere_in_the_package() -> None:
    """Weights are safetensors, the rest JSON or text: no loader in the package can run pickled code."""
    import pathlib
    import re

    package = pathlib.Path(probsent.__file__).parent
    pattern = re.compile(r"\bimport pickle|\bpickle\.|torch\.load\(|allow_pickle=True|joblib|dill")
    offenders = [f"{path}:{number}" for path in package.rglob("*.py")
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.search(line)]
    assert offenders == []
