"""Every bad flag and config value of issue 13 (and their neighbours): a one-line error, exit
status 2, and nothing written anywhere."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import probsent
from probsent.cli import main
from probsent.errors import InvalidValueError, MissingFileError, ProbsentError
from probsent.settings import SETTINGS, TrainConfig
from tests.helpers import write_toy_pairs
from tests.helpers import tiny_model as make_model

BAD_TRAIN_FLAGS = [
    ["--vocab-size", "-10"], ["--vocab-size", str(10**12)], ["--max-steps", "0"],
    ["--epochs", "0"], ["--batch-size", "0"], ["--megabatch", "0"], ["--dim", "0"], ["--dim", "-1"],
    ["--lr", "-1"], ["--lr", "0"], ["--lr", "nan"],
    ["--margin", "-1"], ["--margin", "inf"], ["--dim", "abc"],
    ["--seed", "-1"], ["--eval-every", "0"], ["--prior-weight", "-1"], ["--l2-weight", "nan"],
    ["--min-tokens", "0"], ["--min-tokens", "101"], ["--source-caps", "*=x"], ["--max-overlap", "1.5"],
    ["--min-overlap", "0.9", "--max-overlap", "0.5"],
    ["--model", "nope"], ["--engine", "quick"], ["--scale-init-std", "-1"],
    ["--batch-size", "1.5"], ["--source-caps", "bible"], ["--source-caps", "bible=-1"],
]

# model.<key> values written into a saved model's config.json
BAD_MODEL_CONFIG = [
    ("dim", -1), ("dim", 0), ("dim", "50"), ("dim", 2.5), ("vocab_size", 10**12), ("vocab_size", -3),
    ("type", "nope"), ("scale_init_std", math.nan), ("scale_init_std", -1.0), ("dim", True),
]


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A current directory and cache that must stay empty, and inputs kept elsewhere."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    data = write_toy_pairs(inputs / "pairs.tsv")
    model = inputs / "model"
    make_model("wlo").save(model)
    cwd, cache = tmp_path / "cwd", tmp_path / "cache"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PROBSENT_CACHE", str(cache))
    return {"data": data, "model": model, "cwd": cwd, "cache": cache}


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_rejected(code: int, out: str, err: str, workspace) -> None:
    assert code == 2, (code, err)
    assert out == ""
    assert err.startswith("probsent") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert list(workspace["cwd"].iterdir()) == [], "something was written"
    assert not workspace["cache"].exists(), "something was cached"


@pytest.mark.parametrize("flags", BAD_TRAIN_FLAGS, ids=" ".join)
def test_bad_train_flag(flags, workspace, capsys) -> None:
    argv = ["train", "--data", str(workspace["data"]), "--out", "run", "--no-validation", *flags]
    assert_rejected(*run_cli(argv, capsys), workspace)


@pytest.mark.parametrize("argv", [
    ["specificity", "--batch-size", "-1", "a cat"], ["specificity", "--batch-size", "0", "a cat"],
    ["specificity", "--batch-size", "many", "a cat"], ["export", "--out", "small", "--max-words", "0"],
    ["export", "--out", "small", "--max-words", "-5"], ["eval", "--min-count", "0", "--out", "ev"],
    ["eval", "--threads", "0", "--out", "ev"], ["eval", "--sentence-sample", "-1", "--out", "ev"],
    ["eval", "--sentence-lengths", "5-2", "--out", "ev"],
], ids=" ".join)
def test_bad_flag_of_other_commands(argv, workspace, capsys) -> None:
    argv = [*argv, "--model", str(workspace["model"])]
    assert_rejected(*run_cli(argv, capsys), workspace)


@pytest.mark.parametrize("key, value", BAD_MODEL_CONFIG, ids=lambda v: repr(v))
def test_bad_model_config_value(key, value, workspace, capsys) -> None:
    config_file = workspace["model"] / "config.json"
    config = json.loads(config_file.read_text())
    config["model"][key] = value
    config_file.write_text(json.dumps(config))
    before = {p.name: p.read_bytes() for p in workspace["model"].iterdir()}
    code, out, err = run_cli(["specificity", "--model", str(workspace["model"]), "a cat"], capsys)
    assert_rejected(code, out, err, workspace)
    assert "config.json" in err or "vocab.txt" in err, err
    assert {p.name: p.read_bytes() for p in workspace["model"].iterdir()} == before
    with pytest.raises(ValueError):  # the Python API: a ValueError, and a ProbsentError
        probsent.load(workspace["model"])


def test_python_settings_are_checked_too() -> None:
    with pytest.raises(InvalidValueError, match="--dim: must be from 1 to 4,096, not 0"):
        TrainConfig(dim=0)
    with pytest.raises(ValueError):
        TrainConfig.from_dict({"lr": -2.0})
    with pytest.raises(ProbsentError):
        TrainConfig(margin=-1.0)
    assert TrainConfig(max_steps=None, margin=None).dim == 50  # None where a setting allows it


def test_error_types_follow_python_conventions(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        probsent.load(tmp_path / "nowhere")
    with pytest.raises(MissingFileError):
        probsent.load(tmp_path / "nowhere")
    (tmp_path / "broken").mkdir()
    make_model("wlo").save(tmp_path / "broken")
    (tmp_path / "broken" / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(ValueError) as info:
        probsent.load(tmp_path / "broken")
    assert isinstance(info.value, ProbsentError)


@pytest.mark.parametrize("bad", [b"bytes", bytearray(b"x"), {"a": 1}, None, 3, {"a set"}, [b"x"], ["ok", 3.5],
                                 np.array([["a", "b"]])],
                         ids=lambda v: type(v).__name__)
def test_bad_types_are_type_errors(bad) -> None:
    model = make_model("wlo")
    for call in (model.encode, model.entropy, model.specificity, lambda s: model.similarity(s, s),
                 lambda s: model.similarity_pairwise(s, s), model.explain):  # explain takes many too (issue 50)
        with pytest.raises(TypeError, match="str"):
            call(bad)


@pytest.mark.parametrize("batch_size, error", [(0, ValueError), (-1, ValueError), (2.5, TypeError),
                                               (True, TypeError), ("8", TypeError)])
def test_api_batch_size_is_checked(batch_size, error) -> None:
    with pytest.raises(error, match="batch_size"):
        make_model("wlo").encode(["a cat"], batch_size=batch_size)


def test_every_setting_is_declared_with_help_and_a_flag() -> None:
    from probsent.cli import build_parser
    from probsent.settings import SETTINGS, flag_name, setting_rules

    help_text = " ".join(build_parser()._subparsers._group_actions[0].choices["train"].format_help().split())
    for name in SETTINGS:
        assert setting_rules(name)["help"], f"{name} has no help text: declare it with option()"
        assert flag_name(name) in help_text
    assert "(default: None)" not in help_text


@pytest.mark.parametrize("name,value", [("then_min_overlap", 0.0), ("adam", "lazy"), ("max_per_source", None),
                                        ("device", "cuda"), ("start_variance", 1.0), ("similarity_distance", "own")])
def test_a_recorded_key_that_is_no_setting_is_one_line(name, value) -> None:
    """A recorded config (checkpoint, model directory, record) holding a key that is no setting,
    such as one issue 35 removed, is refused in one line naming it, even at the value that once
    changed nothing: a recorded run never reads as another one (issue 42)."""
    recorded = {"data": "pairs.tsv", "out": "run", name: value}
    with pytest.raises(InvalidValueError) as caught:
        TrainConfig.from_dict(recorded)
    message = str(caught.value)
    assert "\n" not in message and f"--{name.replace('_', '-')} recorded" in message and "docs/TRAINING.md" in message
    assert TrainConfig.from_dict({"data": "pairs.tsv", "out": "run"}) == TrainConfig(data="pairs.tsv", out="run")


def test_rarity_from_left_and_reads_recorded_only_as_null() -> None:
    """``--rarity-from`` left probsent (issue 49: its last round was not run); every run trained
    before that records ``rarity_from: null``, which is what training does now, so such a config
    still reads, as the same settings; a recorded file is a run that trained otherwise: one line."""
    from probsent.cli import build_parser

    assert "rarity_from" not in SETTINGS
    help_text = build_parser()._subparsers._group_actions[0].choices["train"].format_help()
    assert "--rarity-from" not in help_text
    recorded = {"data": "pairs.tsv", "out": "run", "rarity_init": 0.3, "rarity_from": None}
    assert TrainConfig.from_dict(recorded) == TrainConfig(data="pairs.tsv", out="run", rarity_init=0.3)
    with pytest.raises(InvalidValueError) as caught:
        TrainConfig.from_dict({**recorded, "rarity_from": "english.tsv"})
    assert "\n" not in str(caught.value) and "--rarity-from recorded, but not a setting" in str(caught.value)


@pytest.mark.parametrize("argv", [["--adam", "dense"], ["--mine-by", "means"], ["--quiet"], ["--device", "cuda"],
                                  ["--similarity-distance", "pooled"], ["--start-variance", "0.5"],
                                  ["--rarity-from", "english.tsv"]])
def test_a_removed_train_flag_is_an_unknown_flag(argv, capsys) -> None:
    from probsent.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["train", "--model", "wlo", "--data", "x.tsv", "--out", "run", *argv])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"unrecognized arguments: {' '.join(argv)}" in err, err
