"""`probsent specificity`: one line per input sentence, in input order."""
from __future__ import annotations

import io
import json
import sys
import tracemalloc

import pytest

from probsent.cli import main
from probsent.api import scoring_engine
from probsent.corpus_scoring.score import score_stream


@pytest.fixture
def model_dir(tmp_path, make_model):
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
    assert len(lines) == 4  # one output line per input line
    assert lines[1].endswith("caf\ufffd au lait")
    assert lines[2] == "nan\t"  # a blank line has no score


def test_missing_model_is_one_line(tmp_path, capsys) -> None:
    assert main(["specificity", "--model", str(tmp_path / "nope"), "hello"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such model directory" in err


def test_json_format(model_dir, capsys) -> None:
    path, model = model_dir
    assert main(["specificity", "--model", str(path), "--format", "json", "the cat", " "]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["sentence"] == "the cat"
    assert rows[0]["specificity"] == pytest.approx(model.specificity("the cat"), abs=1e-5)
    assert rows[1] == {"sentence": " ", "specificity": None}


@pytest.mark.slow
def test_large_stream_memory_stays_flat(model_dir) -> None:
    _, model = model_dir

    def peak(count: int) -> int:
        lines = (f"the cat number {i} sat on the mat" for i in range(count))
        tracemalloc.start()
        written = score_stream(scoring_engine(model), lines, NullWriter())
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert written == count
        return top

    small, large = peak(10_000), peak(60_000)
    assert large < 1.5 * small, (small, large)


class NullWriter:
    """Discards output, so only the scorer's own memory is measured."""

    def write(self, text: str) -> int:
        return len(text)


@pytest.mark.slow
def test_closed_pipe_is_not_a_traceback(tmp_path) -> None:
    """`probsent ... | head -1`: the reader closes the pipe early; no traceback on stderr."""
    import subprocess
    import sys

    lines = "\n".join(f"sentence number {i} is here ." for i in range(20000)) + "\n"
    command = (f"{sys.executable} -m probsent.cli specificity --model {{model}} --input - | head -1")
    model = tmp_path / "m"
    from probsent.api import SentenceModel
    from probsent.data.vocab import Vocabulary
    from probsent.models import build_model
    SentenceModel(build_model({"type": "wlo", "vocab_size": 3, "dim": 4}), Vocabulary(["<unk>", "a", "b"])).save(model)
    result = subprocess.run(["bash", "-c", command.format(model=model)], input=lines,
                            capture_output=True, text=True)
    assert len(result.stdout.splitlines()) == 1
    assert "Traceback" not in result.stderr, result.stderr


def test_line_breaks_and_tabs_inside_an_argument_stay_in_one_row(model_dir, capsys) -> None:
    path, _ = model_dir
    assert main(["specificity", "--model", str(path), "the cat\nsat", "a\tdog\r\n"]) == 0
    rows = capsys.readouterr().out.split("\n")
    assert rows[-1] == "" and [row.split("\t")[1:] for row in rows[:-1]] == [["the cat sat"], ["a dog  "]]
