"""The name ``default`` is the shipped model whatever the working directory holds, and a saved
spaCy pipeline names its model by an absolute path (issue 43, findings 2 and 3)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import probsent
from probsent.cli import main
from probsent.model_directory import DEFAULT_MODEL

SENTENCE = "Einstein published relativity in 1905."


@pytest.fixture
def planted(tmp_path: Path, make_model, monkeypatch) -> Path:
    """A working directory holding a different model in ``./default``."""
    make_model("wlo", seed=3).save(tmp_path / "default")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "default"


def test_default_is_the_shipped_model_in_the_api(planted: Path) -> None:
    shipped = probsent.load(DEFAULT_MODEL).specificity(SENTENCE)
    assert probsent.load("default").specificity(SENTENCE) == shipped
    assert probsent.load().specificity(SENTENCE) == shipped
    planted_score = probsent.load("./default").specificity(SENTENCE)  # a path says so
    assert planted_score != shipped and probsent.load(Path("default")).specificity(SENTENCE) == planted_score


def test_default_is_the_shipped_model_on_the_command_line(planted: Path, capsys) -> None:
    scores = []
    for model in ("default", "./default", str(DEFAULT_MODEL)):
        assert main(["specificity", "--model", model, SENTENCE]) == 0
        scores.append(capsys.readouterr().out.split("\t")[0])
    assert scores[0] == scores[2] != scores[1]


@pytest.mark.slow
def test_the_spacy_default_is_the_shipped_model(planted: Path) -> None:
    spacy = pytest.importorskip("spacy")
    import probsent.integrations.spacy  # noqa: F401

    nlp = spacy.blank("en")
    nlp.add_pipe("probsent")
    assert nlp(SENTENCE)._.specificity == pytest.approx(probsent.load(DEFAULT_MODEL).specificity(SENTENCE), abs=1e-9)


@pytest.mark.slow
def test_a_saved_spacy_pipeline_keeps_its_models_absolute_path(tmp_path: Path, make_model, monkeypatch) -> None:
    spacy = pytest.importorskip("spacy")
    import probsent.integrations.spacy  # noqa: F401

    first, elsewhere = tmp_path / "first", tmp_path / "elsewhere"
    first.mkdir()
    elsewhere.mkdir()
    make_model("wlo", seed=1).save(first / "mymodel")
    make_model("wlo", seed=2).save(elsewhere / "mymodel")  # the same relative name, another model
    monkeypatch.chdir(first)
    nlp = spacy.blank("en")
    nlp.add_pipe("probsent", config={"model": "mymodel"})
    expected = nlp(SENTENCE)._.specificity
    nlp.to_disk(tmp_path / "pipeline")
    # spacy.load in a fresh process, from the other directory
    code = ("import spacy, probsent.integrations.spacy, sys; "
            f"print(repr(spacy.load(sys.argv[1])({SENTENCE!r})._.specificity))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "pipeline")], cwd=elsewhere, text=True,
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == expected
    assert expected == pytest.approx(probsent.load(first / "mymodel").specificity(SENTENCE), abs=1e-9)
