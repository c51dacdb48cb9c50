"""One check of a model's files that every path uses (issue 43, finding 6; one reader since
issue 42): ``probsent.load`` on the CPU (NumPy), with torch, and the scoring path's term table
refuse the same files with the same line, weights are checked as the model computes them (float32), a number too
large for float64 in a JSON file is a line, not an OverflowError, and the core install never blames
a damaged model on a missing PyTorch."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import probsent
from probsent.cli import main
from probsent.errors import InvalidValueError
from probsent.inference.array_encoder import ArrayEncoder
from probsent.model_directory import DEFAULT_MODEL, read_model
from probsent.api import scoring_engine

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def model_dir(tmp_path: Path, make_model) -> Path:
    path = tmp_path / "model"
    make_model("wlo").save(path)
    return path


def _rewrite_weights(path: Path, change) -> None:  # noqa: ANN001 - a function of the weights
    weights = load_file(str(path / "model.safetensors"))
    save_file(change(weights), str(path / "model.safetensors"), metadata={"format": "probsent-model"})


def _every_reader_refuses(path: Path, fragment: str) -> None:
    """The reader, ``load`` (NumPy and torch) and the scoring path give the same one line naming the file."""
    messages = []
    for reader in (read_model, probsent.load, lambda p: probsent.load(p, device=torch_device()),
                   lambda p: scoring_engine(probsent.load(p))):
        with pytest.raises(InvalidValueError) as info:
            reader(path)
        messages.append(str(info.value))
    assert len(set(messages)) == 1, messages
    assert "\n" not in messages[0] and fragment in messages[0] and str(path) in messages[0], messages[0]


def torch_device():
    """A torch device: ``load`` then reads the model into a torch module."""
    import torch

    return torch.device("cpu")


def test_float64_weights_beyond_float32_are_refused_in_every_path(model_dir: Path, capsys) -> None:
    def widened(weights):
        scale = weights["scale.weight"].astype(np.float64)
        scale[1, 0] = 1e39  # finite in float64, infinite in float32 (the model computes in float32)
        return {"scale.weight": scale, "shift.weight": weights["shift.weight"].astype(np.float64)}

    _rewrite_weights(model_dir, widened)
    _every_reader_refuses(model_dir, "scale.weight contains NaN or infinite values (in float32")
    for command in (["specificity", "--probability"], ["explain", "--format", "json"]):
        assert main([*command, "--model", str(model_dir), "a cat"]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1 and "infinite" in captured.err


def test_a_huge_float32_shift_gives_a_finite_norm(model_dir: Path) -> None:
    vocab = probsent.load(model_dir).vocab

    def huge(weights):
        shift = weights["shift.weight"].copy()
        shift[vocab.index["a"]] = 3e38  # every coordinate: the norm 3e38 sqrt(k) is beyond float32
        return {**weights, "shift.weight": shift}

    _rewrite_weights(model_dir, huge)
    dim = probsent.load(model_dir).get_sentence_embedding_dimension()
    expected = float(np.float32(3e38)) * np.sqrt(dim)  # by hand, in float64
    for explanation in (probsent.load(model_dir).explain("a"), scoring_engine(probsent.load(model_dir)).explain("a")):
        assert explanation.words[0].shift_norm == pytest.approx(expected, rel=1e-12)
    assert probsent.load(model_dir, device=torch_device()).encoder  # the torch module reads it too


@pytest.mark.parametrize("name,edit", [
    ("calibration.json", lambda v: {**v, "slope": "HUGE"}),
    ("percentiles.json", lambda v: {**v, "scores": [["HUGE"] + s[1:] for s in v["scores"]]}),
    ("config.json", lambda v: {**v, "model": {**v["model"], "scale_init_std": "HUGE"}}),
    ("config.json", lambda v: {**v, "model": {**v["model"], "vocab_size": "HUGE"}}),
])
def test_a_number_beyond_float64_in_a_json_file_is_one_line(tmp_path: Path, name: str, edit) -> None:  # noqa: ANN001
    import shutil

    path = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL, path)
    text = json.dumps(edit(json.loads((path / name).read_text())))
    for number in ("1" + "0" * 400, "1e400", "-1e400"):
        (path / name).write_text(text.replace('"HUGE"', number))
        with pytest.raises(InvalidValueError) as info:
            probsent.load(path)
        assert str(info.value).startswith(str(path / name)) and "beyond float64" in str(info.value), info.value
        assert main(["specificity", "--model", str(path), "a cat"]) == 2


def _damaged(path: Path, how: str) -> str:
    """Damage the saved model ``path`` as ``how`` says; the fragment of the error it must give."""
    if how == "nan float16":
        _rewrite_weights(path, lambda w: {k: np.full_like(v, np.nan).astype(np.float16) for k, v in w.items()})
        return "NaN or infinite"
    if how == "int64":
        _rewrite_weights(path, lambda w: {**w, "scale.weight": w["scale.weight"].astype(np.int64)})
        return "scale.weight is stored as int64"
    if how == "shape":
        _rewrite_weights(path, lambda w: {**w, "shift.weight": w["shift.weight"][:, :2].copy()})
        return "has shape"
    (path / "vocab.txt").write_text("<unk>\nonly\n")
    return "2 words"


@pytest.mark.parametrize("how", ["nan float16", "int64", "shape", "vocabulary size"])
def test_damaged_numpy_models_are_named_not_left_to_torch(model_dir: Path, how: str) -> None:
    _every_reader_refuses(model_dir, _damaged(model_dir, how))


@pytest.mark.slow
@pytest.mark.parametrize("how", ["nan float16", "int64", "shape", "vocabulary size"])
def test_the_core_install_names_the_damage_not_pytorch(model_dir: Path, how: str) -> None:
    fragment = _damaged(model_dir, how)
    code = ("import sys; sys.modules['torch'] = None\nfrom probsent.cli import main\n"
            "sys.exit(main(['specificity', '--model', sys.argv[1], 'a cat']))")
    out = subprocess.run([sys.executable, "-c", code, str(model_dir)], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert fragment in out.stderr and "PyTorch" not in out.stderr and "torch" not in out.stderr


@pytest.mark.slow
def test_export_and_the_readers_share_one_range_for_the_start_variance(tmp_path: Path, capsys) -> None:
    assert main(["export", "--model", str(DEFAULT_MODEL), "--out", str(tmp_path / "tiny"),
                 "--start-variance", "1e-300"]) == 2
    assert "--start-variance" in capsys.readouterr().err and not (tmp_path / "tiny").exists()
    assert main(["export", "--model", str(DEFAULT_MODEL), "--out", str(tmp_path / "small"),
                 "--start-variance", "1e-30"]) == 0
    assert isinstance(probsent.load(tmp_path / "small")._arrays, ArrayEncoder)  # what export accepts, NumPy reads

