"""`probsent specificity`: one line per input sentence, in input order."""
from __future__ import annotations

import io
import sys

import pytest

from probsent.cli import main
from tests.test_api import make_model


@pytest.fixture
def model_dir(tmp_path):
    model = make_model("wlo")
    model.save(tmp_path / "m")
    return tmp_path / "m", model


def test_arguments_and_order(model_dir, capsys) -> None:
    path, model = model_dir
    sentences = ["The cat sat on the mat.", "a man plays guitar", "3 apples"]
    assert main(["specificity", "--model", str(path), *sentences]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t", 1)[1] for line in lines] == sentences
    expected = model.specificity(sentences)
    assert [float(line.split("\t")[0]) for line in lines] == pytest.approx(list(expected), abs=1e-4)


def test_stdin_with_bad_bytes(model_dir, capsys, monkeypatch) -> None:
    path, _ = model_dir
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"the cat\ncaf\xe9 au lait\r\n\nthe dog\n")))
    assert main(["specificity", "--model", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4  # every input line gets a score, blank ones included
    assert lines[1].endswith("caf\ufffd au lait") and lines[2].split("\t")[1] == ""


def test_missing_model_is_one_line(tmp_path, capsys) -> None:
    assert main(["specificity", "--model", str(tmp_path / "nope"), "hello"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such model directory" in err
