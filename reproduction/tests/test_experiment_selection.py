"""Model selection of experiments/summarize.py on hand-made evaluation files: per model, the
best STS 2017 Pearson (best/) or news-train accuracy (best-news/), seed runs never chosen."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

from reproduction.experiments.selection import run_results, select_run
from reproduction.experiments.summarize import running_time
from reproduction.evaluation.results import (EvaluationRun, NewsAccuracy, RatedCorrelation, Results, Specificity,
                                         SystemResult, load_evaluation, save_evaluation)


def _model(news: float = 0.0, path: str | None = None, **training: object) -> SystemResult:
    """A model's result with News accuracy ``news`` and the training record ``training``."""
    specificity = Specificity(NewsAccuracy(news, 0.0), *(RatedCorrelation(0.0, 0) for _ in range(3)))
    return SystemResult(kind="model", path=path, specificity=specificity, config={"training": training})


def _write(results: Path, run: str, sts: float, news: float) -> None:
    systems = {f"{run} best": _model(path=f"runs/{run}/best", sts17_pearson=sts),
               f"{run} news": _model(path=f"runs/{run}/best-news", news_train_accuracy=news)}
    (results / run).mkdir(parents=True)
    save_evaluation(results / run / "evaluation.json", EvaluationRun(Results(systems)))


def test_selects_per_model_and_never_a_seed_run(tmp_path: Path) -> None:
    _write(tmp_path, "wlo", sts=0.70, news=66.0)
    _write(tmp_path, "wlo-epoch", sts=0.72, news=65.0)
    _write(tmp_path, "wlo-closepairs", sts=0.64, news=67.0)
    _write(tmp_path, "wlo-seed2", sts=0.99, news=99.0)  # a seed run: reported, never selected
    _write(tmp_path, "wordsum", sts=0.47, news=68.0)
    _write(tmp_path, "wordsum-minibatch", sts=0.77, news=68.5)
    assert select_run("wlo", tmp_path) == "wlo-epoch"
    assert select_run("wlo", tmp_path, by="news") == "wlo-closepairs"
    assert select_run("wordsum", tmp_path) == "wordsum-minibatch"
    assert select_run("wordsum", tmp_path, by="news") == "wordsum-minibatch"
    with pytest.raises(SystemExit, match="no evaluated lstmavg run"):
        select_run("lstmavg", tmp_path)


def test_running_time_adds_the_measured_parts(tmp_path: Path) -> None:
    results, report = tmp_path / "results", tmp_path / "report"
    _write(results, "wlo", sts=0.70, news=66.0)
    _write(results, "wordsum", sts=0.47, news=68.0)
    _write(results, "wlo-seed2", sts=0.69, news=65.0)  # evaluated, but no training log
    for run, seconds in (("wlo", 100.0), ("wordsum", 60.0)):
        log = [{"step": 200, "seconds": seconds / 2}, {"step": 400, "seconds": seconds}]
        (results / run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    for run, seconds in (("wlo", 30.0), ("wordsum", 10.0), ("wlo-seed2", 5.0)):
        path = results / run / "evaluation.json"
        evaluation = load_evaluation(path)
        evaluation.seconds_command = seconds
        save_evaluation(path, evaluation)
    report.mkdir()
    save_evaluation(report / "evaluation.json", EvaluationRun(Results(), seconds_command=40.0))
    cost = running_time(run_results(results), results, report, jobs=2)
    assert cost["training"] == 160.0
    assert cost["evaluation"] == 45.0
    assert cost["once"] == 40.0  # no shipped model evaluated here
    assert cost["total"] == (160.0 + 45.0) / 2 + 40.0
    assert "wlo-seed2" in cost["missing"] and "wlo" not in cost["missing"]


def test_comparative_claims_follow_the_numbers() -> None:
    from reproduction.experiments.summarize import seed_spread, verdict

    assert verdict(70.0, 60.0, 4.0, "better", "worse", "same") == "better"
    assert verdict(60.0, 70.0, 4.0, "better", "worse", "same") == "worse"
    assert verdict(62.0, 60.0, 4.0, "better", "worse", "same") == "same"
    assert verdict(None, 60.0, 4.0, "better", "worse", "same") == "not measured"

    def run(news: float) -> dict:
        return {"best": _model(news, sts17_pearson=0.7), "news": None}

    # the bar a single-seed difference must clear: the sd of wlo's test News accuracy over its seeds
    found = {"wlo": run(60.0), "wlo-seed2": run(62.0), "wlo-seed3": run(64.0), "wlo-minibatch": run(70.0)}
    assert seed_spread(found) == pytest.approx(2.0)
    assert seed_spread({"wlo": run(60.0)}) is None  # one seed: no spread, so no claim
    assert verdict(70.0, 60.0, seed_spread(found), "better", "worse", "same") == "better"
    assert verdict(61.0, 60.0, seed_spread(found), "better", "worse", "same") == "same"
