"""probsent export: trimmed vocabulary and float16 weights, checked against the full model."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import probsent
from probsent import ProbsentError
from probsent.api import SentenceModel
from probsent.cli import main
from probsent.data.vocab import Vocabulary
from probsent.export import trimmed
from probsent.models import build_model

WORDS = ["<unk>", "the", "a", "cat", "dog", "sat", "ran", "quickly", "zebra"]


@pytest.fixture
def model(tmp_path) -> SentenceModel:
    torch.manual_seed(0)
    encoder = build_model({"type": "wlo", "vocab_size": len(WORDS), "dim": 6, "scale_init_std": 0.3})
    full = SentenceModel(encoder, Vocabulary(WORDS))
    full.save(tmp_path / "full")
    return probsent.load(tmp_path / "full")


@pytest.mark.slow
def test_trimmed_words_become_unknown(tmp_path, model) -> None:
    assert main(["export", "--model", str(tmp_path / "full"), "--out", str(tmp_path / "small"),
                 "--max-words", "5"]) == 0
    small = probsent.load(tmp_path / "small")
    assert small.vocab.words == WORDS[:6]
    # "ran", "quickly" and "zebra" are no longer known: the full model agrees once they are
    # replaced by a word it has never seen
    kept = small.entropy(["the cat ran quickly", "a zebra sat"])
    reference = model.entropy(["the cat xx yy", "a xx sat"])
    assert np.allclose(kept, reference, atol=1e-6)
    assert np.allclose(small.entropy("the cat sat"), model.entropy("the cat sat"), atol=1e-6)
    assert small.config["training"]["export"]["max_words"] == 5


@pytest.mark.slow
def test_float16_weights(tmp_path, model) -> None:
    assert main(["export", "--model", str(tmp_path / "full"), "--out", str(tmp_path / "half"),
                 "--float16"]) == 0
    stored = load_file(str(tmp_path / "half" / "model.safetensors"))
    assert all(t.dtype == torch.float16 for t in stored.values())
    half = probsent.load(tmp_path / "half")
    for name, tensor in model.encoder.state_dict().items():
        assert torch.equal(half.encoder.state_dict()[name], tensor.half().float())
    sentences = ["the cat sat", "a dog ran quickly", "zebra"]
    assert np.allclose(half.entropy(sentences), model.entropy(sentences), atol=1e-2)


def test_export_never_overwrites(tmp_path, model, capsys) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep me")
    assert main(["export", "--model", str(tmp_path / "full"), "--out", str(tmp_path / "taken")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "taken" / "mine.txt").read_text() == "keep me"
    with pytest.raises(ProbsentError, match="at least 1"):
        trimmed(model, 0)


def test_export_calibrates_the_copy_where_the_data_are(tmp_path, model, data_dir, capsys) -> None:
    assert main(["export", "--model", str(tmp_path / "full"), "--out", str(tmp_path / "small"), "--max-words", "5",
                 "--data-dir", str(data_dir)]) == 0
    assert "calibrated" in capsys.readouterr().out
    small = probsent.load(tmp_path / "small")
    assert small.calibration is not None and small.percentiles is not None  # the copy's own, from its scores
    assert 0 <= small.percentile("the cat sat") <= 100
    assert main(["export", "--model", str(tmp_path / "full"), "--out", str(tmp_path / "bare"),
                 "--data-dir", str(tmp_path / "nowhere")]) == 0
    said = capsys.readouterr().out
    assert "not calibrated" in said and "probsent calibrate --model" in said
    bare = probsent.load(tmp_path / "bare")
    assert bare.calibration is None and bare.percentiles is None
