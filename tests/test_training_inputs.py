"""Training input (issue 43, item 7): each case gives correct behaviour or one line and status 2."""
from __future__ import annotations

import json

import numpy as np
import pytest

from probsent.cli import main
from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.training.checkpoint import loop_state_problem
from tests.helpers import write_toy_pairs


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))


def _one_line_error(capsys, code: int) -> str:
    """The error line (after the run's own log lines, if any)."""
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line.startswith("probsent: error:")]
    assert code == 2 and len(errors) == 1 and err.endswith(errors[0]) and "Traceback" not in err, err
    return errors[0]


def test_more_sources_than_int16_holds(tmp_path) -> None:
    """ParaNMT's third column is a score: 40,000 distinct values are 40,000 sources, not an OverflowError."""
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"a cat {i}\ta dog {i}\t0.{i:05d}\n" for i in range(40_000)))
    mapped = load_mapped_pairs(path)
    assert len(mapped.sources) == 40_000 and mapped.sources[39_999] == "0.39999"
    assert np.array_equal(mapped.pair_sources, np.arange(40_000))


def test_a_cache_directory_that_cannot_be_written_is_only_a_lost_cache(tmp_path, monkeypatch) -> None:
    path = write_toy_pairs(tmp_path / "pairs.tsv", repeat=3)
    expected = load_mapped_pairs(path, cache_dir=tmp_path / "good")
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "file" / "cache"))  # mkdir fails (also as root)
    mapped = load_mapped_pairs(path)
    assert mapped.words == expected.words and np.array_equal(mapped.tokens, expected.tokens)
    assert not isinstance(mapped.tokens, np.memmap)  # built in a temporary directory, read into memory


@pytest.mark.parametrize("data,fragment", [("empty", "a directory without pair files"),
                                           ("/dev/null", "not a regular file")])
def test_data_that_is_not_a_file(tmp_path, capsys, data, fragment) -> None:
    """A directory is read as a directory of parts (tests/test_pair_formats.py): one without any is one line."""
    (tmp_path / "empty").mkdir()
    target = str(tmp_path / "empty") if data == "empty" else data
    code = main(["train", "--data", target, "--out", str(tmp_path / "out"), "--no-validation"])
    err = _one_line_error(capsys, code)
    assert fragment in err and "no such file" not in err and target in err


@pytest.mark.parametrize("state,fragment", [([], "not a JSON object"), ({"step": "x"}, "step must be a whole"),
                                            ({"step": -5}, "step must be a whole"),
                                            ({"best": {"score": "high"}}, "best must be null"),
                                            ({"seconds": -1}, "seconds must be")])
def test_loop_state_problems(state, fragment) -> None:
    if isinstance(state, dict):
        state = {"param_groups": [], **state}
    assert fragment in loop_state_problem(state)
    assert loop_state_problem({"epoch": 0, "pairs_done": 10, "step": 3, "best": None, "best_news":
                               {"score": 0.5, "step": 2}, "seconds": 1.5, "finished": False,
                               "param_groups": []}) is None


@pytest.fixture
def run(tmp_path):
    args = ["train", "--model", "wlo", "--data", str(write_toy_pairs(tmp_path / "pairs.tsv", 10)),
            "--out", str(tmp_path / "run"), "--batch-size", "20", "--megabatch", "2", "--vocab-size", "200",
            "--max-steps", "2", "--engine", "torch", "--no-validation"]
    assert main(args) == 0
    return args


@pytest.mark.slow
@pytest.mark.parametrize("state", ["[]", '{"step": "x"}', '{"step": -5}'])
def test_resume_from_a_damaged_loop_state(run, tmp_path, capsys, state) -> None:
    path = tmp_path / "run" / "last" / "trainer_state.json"
    saved = json.loads(path.read_text())
    path.write_text(state if state == "[]" else json.dumps({**saved, **json.loads(state)}))
    capsys.readouterr()
    err = _one_line_error(capsys, main([*run, "--max-steps", "4", "--resume"]))
    assert "trainer_state.json: damaged checkpoint" in err


@pytest.mark.slow
def test_resume_refuses_a_pair_file_that_changed(run, tmp_path, capsys) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(pairs.read_text().replace("cat", "owl"))
    capsys.readouterr()
    err = _one_line_error(capsys, main([*run, "--max-steps", "4", "--resume"]))
    assert "content changed" in err and str(pairs) in err


@pytest.mark.slow
def test_a_nan_loss_before_any_checkpoint_says_so(tmp_path, capsys, monkeypatch) -> None:
    from probsent.training.fast.engine import FastWLOEngine

    monkeypatch.setattr(FastWLOEngine, "run_steps", lambda self, *a, **k: [(float("nan"), {})])
    code = main(["train", "--data", str(write_toy_pairs(tmp_path / "pairs.tsv", 10)), "--out", str(tmp_path / "run"),
                 "--batch-size", "20", "--megabatch", "2", "--vocab-size", "200", "--engine", "fast",
                 "--no-validation"])
    err = _one_line_error(capsys, code)
    assert "loss became nan at step 1" in err and "no checkpoint was written yet" in err
    assert not (tmp_path / "run" / "last").exists()
