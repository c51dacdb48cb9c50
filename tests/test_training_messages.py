"""What ``probsent train`` tells its user: a note before the fast engine's first, long compilation
(issue 50, item 20), and the unit of its model's scores in its last line (item 21)."""
from __future__ import annotations

import time

from probsent.training.fast import engine


def test_a_slow_compilation_is_announced_while_it_runs(monkeypatch) -> None:
    """A first run on a machine compiled for 43 s without a word: now a note goes out once it has
    lasted a moment, before the compilation ends, and its time at the end."""
    said: list[tuple[float, str]] = []
    ended: list[float] = []

    def slow_compilation() -> float:
        time.sleep(0.5)
        ended.append(time.perf_counter())
        return 43.0

    monkeypatch.setattr(engine, "compile_kernels", slow_compilation)
    engine.compile_kernels_saying_so(lambda line: said.append((time.perf_counter(), line)), after=0.05)
    assert [line.split(",")[0].split(" in ")[0] for _, line in said] == ["fast engine: compiling its kernels",
                                                                         "fast engine: compiled its kernels"]
    assert said[0][0] < ended[0] and "43 s" in said[1][1]


def test_a_cached_compilation_stays_silent(monkeypatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(engine, "compile_kernels", lambda: 0.01)
    engine.compile_kernels_saying_so(said.append, after=0.2)
    time.sleep(0.3)  # the note's timer, had it not been cancelled, would have fired by now
    assert said == []


def test_the_last_line_says_the_unit_and_the_shift_is_the_exported_models(tmp_path, toy_pairs, capsys) -> None:
    """A WLO trained from scratch scores about -69 and the shipped one about +39 (issue 50, item 21):
    ``train``'s last line says why, and the shift it names is what exporting the trained model with
    the shipped start variance does to a sentence's score (read off the two models, not the formula)."""
    import json
    import math

    import probsent
    from probsent.cli import main
    from probsent.export import with_start_variance
    from probsent.model_directory import DEFAULT_MODEL

    out = tmp_path / "run"
    assert main(["train", "--model", "wlo", "--data", str(toy_pairs(2)), "--out", str(out), "--dim", "6",
                 "--batch-size", "4", "--megabatch", "2", "--max-steps", "2", "--engine", "torch",
                 "--no-validation"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    start = json.loads((DEFAULT_MODEL / "config.json").read_text())["model"]["start_variance"]
    assert start == 1 / 64
    shift = 3 * math.log(64)  # dim / 2 x log(1 / S) = 3 x 4.1589 = 12.48
    assert f"--start-variance {start:g}, which adds {shift:.1f} to every score" in last, last
    trained = probsent.load(out / "best")
    exported = with_start_variance(trained, start)
    sentences = ["the cat sat on the mat", "a man plays guitar"]
    moved = exported.specificity(sentences) - trained.specificity(sentences)
    # each score is a float32 sum of 6 log-variances of a few nats, so its rounding is below
    # 6 x 8 x 2**-24 ~ 3e-6 per model; 1e-4 leaves room for both and the float32 start variance
    assert max(abs(m - shift) for m in moved) < 1e-4, moved
