"""Every model-selection rule of the experiments, in one place: which run of a model the
paper's rule (best STS 2017 Pearson of ``best/``) and ours (best news-train accuracy of
``best-news/``) choose, and which run and vocabulary size are shipped. Development numbers
only: the test sets never choose. (The recipe study's rules are in ``experiments/protocol.py``,
its rounds' candidates in ``experiments/rounds/``.)"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reproduction.experiments.paths import RESULTS_DIR
from reproduction.experiments.plan import RUNS, runs_by_name
from reproduction.evaluation.results import EvaluationRun, SystemResult, load_evaluation


SELECTABLE = ("main", "prior", "negatives", "mixture", "model-mixture", "init", "long", "vocab", "l2")


def load_json(path: Path) -> dict[str, Any] | None:
    """A JSON file, or None where it does not exist."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def load_run(path: Path) -> EvaluationRun | None:
    """An evaluation.json, typed and checked, or None where it does not exist."""
    return load_evaluation(path) if path.is_file() else None


def _entry(evaluation: EvaluationRun, suffix: str) -> SystemResult | None:
    """The system of ``evaluation`` whose model path ends with ``suffix``."""
    for entry in evaluation.results.systems.values():
        if entry.kind == "model" and (entry.path or "").rstrip("/").endswith(suffix):
            return entry
    return None


def run_results(results_dir: Path = RESULTS_DIR) -> dict[str, dict[str, Any]]:
    """Per run of the plan that has been evaluated: its best/ and best-news/ entries."""
    found = {}
    for run in RUNS:
        evaluation = load_run(results_dir / run.name / "evaluation.json")
        if evaluation is None:
            continue
        found[run.name] = {"best": _entry(evaluation, f"{run.name}/best"),
                           "news": _entry(evaluation, f"{run.name}/best-news"),
                           "evaluation": evaluation}
    return found


def dev_sts(entry: SystemResult | None) -> float:
    """The STS 2017 Pearson a model was selected with (its training record), or NaN."""
    return float(entry.training.get("sts17_pearson", float("nan"))) if entry else float("nan")


def dev_news(entry: SystemResult | None) -> float:
    """The news-train accuracy a model was selected with (its training record), or NaN."""
    return float(entry.training.get("news_train_accuracy", float("nan"))) if entry else float("nan")


def select_run(model: str = "wlo", results_dir: Path = RESULTS_DIR, by: str = "sts") -> str:
    """The run of ``model`` (among the competing groups) with the best STS 2017 Pearson of its
    best/ model (``by="sts"``, the paper's selection) or the best news-train accuracy of its
    best-news/ model (``by="news"``)."""
    return best_run(run_results(results_dir), model, by, where=str(results_dir))


def best_run(found: dict[str, dict[str, Any]], model: str, by: str = "sts", where: str = "") -> str:
    """:func:`select_run` on results already read by :func:`run_results`."""
    plan = runs_by_name()
    candidates = {name: r for name, r in found.items()
                  if plan[name].flags.get("model") == model and plan[name].group in SELECTABLE}
    if not candidates:
        raise SystemExit(f"no evaluated {model} run in {where or RESULTS_DIR}")
    score = (lambda r: dev_sts(r["best"])) if by == "sts" else (lambda r: dev_news(r["news"]))
    return max(candidates, key=lambda name: score(candidates[name]))
