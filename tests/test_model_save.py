"""``SentenceModel.save`` writes only the model's own files and never removes anything it did not
write (issue 43, finding 1): a model directory keeps the user's README, notes and folders; a
directory that only looks like a model keeps its other files; a copy of the shipped model keeps
its MODEL_CARD.md."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import probsent
from probsent.errors import InvalidValueError
from probsent.model_directory import DEFAULT_MODEL, MODEL_FILES


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_saving_over_a_model_directory_keeps_the_users_files(tmp_path: Path, make_model) -> None:
    target = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL, target)
    (target / "README.md").write_text("my notes\n")
    (target / "eval").mkdir()
    (target / "eval" / "scores.tsv").write_text("a\t1\n")
    make_model("wlo").save(target)
    files = _tree(target)
    assert files["README.md"] == b"my notes\n" and files["eval/scores.tsv"] == b"a\t1\n"
    assert files["MODEL_CARD.md"] == (DEFAULT_MODEL / "MODEL_CARD.md").read_bytes()
    # the tiny model has no calibration or percentile table: the shipped model's are not left to
    # pair with the new weights (they are model files, save's own names)
    assert "calibration.json" not in files and "percentiles.json" not in files
    assert sorted(files) == ["MODEL_CARD.md", "README.md", "config.json", "eval/scores.tsv", "model.safetensors",
                             "vocab.txt"]
    assert probsent.load(target).specificity("A cat.") == make_model("wlo").specificity("A cat.")


def test_a_directory_that_only_looks_like_a_model_keeps_its_files(tmp_path: Path, make_model) -> None:
    target = tmp_path / "thesis"
    target.mkdir()
    (target / "config.json").write_text(json.dumps({"format": "probsent-model"}))
    (target / "thesis.tex").write_text("\\documentclass{article}\n")
    make_model("wlo").save(target)
    assert (target / "thesis.tex").read_text() == "\\documentclass{article}\n"
    assert probsent.load(target).specificity("A cat.") == make_model("wlo").specificity("A cat.")


def test_a_copy_of_the_shipped_model_keeps_its_model_card(tmp_path: Path) -> None:
    target = tmp_path / "copy"
    shutil.copytree(DEFAULT_MODEL, target)
    model = probsent.load(target)
    model.save(target)
    assert sorted(_tree(target)) == sorted(_tree(DEFAULT_MODEL))  # the five model files again, and the card
    assert (target / "MODEL_CARD.md").read_bytes() == (DEFAULT_MODEL / "MODEL_CARD.md").read_bytes()
    assert probsent.load(target).probability("A cat sat on the mat.") == probsent.load().probability("A cat sat on the mat.")
    assert not any(p.name.startswith(".") for p in target.iterdir())  # no temporary left behind


def test_save_owns_exactly_the_model_files() -> None:
    assert set(MODEL_FILES) == {"config.json", "model.safetensors", "vocab.txt", "calibration.json",
                                "percentiles.json", "estimated_words.safetensors"}


def test_a_failed_save_into_a_model_directory_changes_nothing(tmp_path: Path, make_model, monkeypatch) -> None:
    target = tmp_path / "model"
    make_model("wlo", seed=1).save(target)
    (target / "notes.txt").write_text("keep\n")
    before = _tree(target)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device", "x")

    monkeypatch.setattr("probsent.model_directory.save_file", broken)
    with pytest.raises(OSError):
        make_model("wlo", seed=2).save(target)
    assert _tree(target) == before
    assert sorted(p.name for p in target.iterdir()) == sorted(before)  # no staging directory left


def test_other_directories_and_files_are_still_refused(tmp_path: Path, make_model) -> None:
    other = tmp_path / "photos"
    other.mkdir()
    (other / "a.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(InvalidValueError, match="not a probsent model directory"):
        make_model("wlo").save(other)
    assert _tree(other) == {"a.jpg": b"\xff\xd8"}


def test_a_directory_where_a_model_file_should_be_is_refused_before_anything_moves(tmp_path: Path,
                                                                                    make_model) -> None:
    target = tmp_path / "model"
    make_model("wlo", seed=1).save(target)
    before = _tree(target)
    (target / "vocab.txt").unlink()
    (target / "vocab.txt").mkdir()
    (target / "vocab.txt" / "mine").write_text("x")
    with pytest.raises(InvalidValueError, match="vocab.txt"):
        make_model("wlo", seed=2).save(target)
    assert (target / "config.json").read_bytes() == before["config.json"]
    assert (target / "vocab.txt" / "mine").read_text() == "x"
