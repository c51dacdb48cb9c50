"""The records of the recipe study's rounds, written from the trained runs into results/recipe<N>/:
dev.json (every candidate's flags, development numbers and diagnostics, the combination and the
two selections), seed_checks.json, after.json, each candidate's validation log, and the
baselines the rounds' test tables compare with (results/recipe/baselines.json)."""
from __future__ import annotations

import dataclasses
import functools
import json
import tempfile
from typing import Any

import probsent
from reproduction.experiments.model_readings import sentence_scale, term_by_rank_band
from reproduction.experiments.paths import LAST, REPO, RUNS_DIR, SHIPPED_BEFORE, STATE
from reproduction.experiments.plan import Run
from reproduction.experiments.protocol import (COMBINE_MARGIN, RecipeRound, candidates, combined_run, dev_scores, final_diagnostics,
                                  log_path, seed_check_runs, select, shown_runs, validation_log)
from reproduction.experiments.table_columns import BASELINES, numbers
from reproduction.experiments.word_score_ceiling import news_dev_ceiling
from reproduction.evaluation.baselines import LengthScorer, WordFrequencyScorer
from reproduction.evaluation.datasets import DataDir, load_news_train, load_sts17
from reproduction.evaluation.metrics import accuracy_at_tuned_threshold
from reproduction.evaluation.plots import training_curves
from reproduction.evaluation.results import load_evaluation
from reproduction.evaluation.tables import shorter_specific_experiment
from probsent.integrations.research_facade import NewsValidator
from probsent.files.atomic_writes import write_json, write_text
from probsent.training import TrainConfig

def untrained_news_dev(name: str) -> float:
    """News-train accuracy (a development set) of run ``name``'s model before its first step:
    recorded by the trainer since round 8, else rebuilt from the run's recorded settings (the
    same data, vocabulary, seed and initialization) and scored."""
    from probsent.training import Trainer  # the trainer loads numba: only for runs that need it

    last = RUNS_DIR / name / "last"
    recorded = json.loads((last / "trainer_state.json").read_text(encoding="utf-8"))
    if recorded.get("untrained_news_train_accuracy") is not None:
        return float(recorded["untrained_news_train_accuracy"])
    settings = json.loads((last / "config.json").read_text(encoding="utf-8"))["training"]["config"]
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(TrainConfig.from_dict({**settings, "out": f"{tmp}/run"}), progress=False,
                          log=lambda message: None)
        return NewsValidator.from_data_dir(trainer.vocab, settings.get("data_dir"))(trainer.encoder.eval())


def length_news_dev() -> float:
    """News-train accuracy of the Length baseline (more tokens = more specific), the threshold
    tuned on those rows as for every run."""
    news = load_news_train(DataDir())
    return 100.0 * accuracy_at_tuned_threshold(LengthScorer().specificity(news.sentences), news.specific)


def finished(name: str) -> bool:
    """Whether run ``name`` trained to its end (its last checkpoint says so)."""
    path = RUNS_DIR / name / LAST / STATE
    return path.is_file() and bool(json.loads(path.read_text(encoding="utf-8")).get("finished"))


def write_dev_record(round_: RecipeRound) -> dict[str, Any]:
    """<round's results>/dev.json: every candidate's flags, dev numbers and final diagnostics,
    the combination and the two selections, and each candidate's validation log."""
    out = round_.results_dir
    out.mkdir(parents=True, exist_ok=True)
    runs = candidates(round_)
    record = {"candidates": [], "selection": select(round_),
              "combined": combined_run(round_).note if round_.combined_name else None,
              "combine_margin": COMBINE_MARGIN}
    for run in runs:
        record["candidates"].append(_run_record(round_, run))
    shown = shown_runs(round_)
    if round_.untrained:  # what training added to the development accuracy (the runs the round shows)
        for entry in record["candidates"]:
            if entry["name"] in shown:
                entry["untrained_news_dev"] = untrained_news_dev(entry["name"])
        record["length_news_dev"] = length_news_dev()
        record["word_score_ceiling"] = news_dev_ceiling()
    write_json(out / "dev.json", record)
    training_curves(out / "curves.png", {run.name: validation_log(round_, run.name) for run in runs
                                         if run.name in shown})
    return record


def write_after_record(round_: RecipeRound) -> None:
    """<round's results>/after.json: the dev numbers and final diagnostics of the runs trained
    after the round (outside its selection), and their validation logs."""
    write_json(round_.results_dir / "after.json", [_run_record(round_, run) for run in round_.after])


def write_seed_check_record(round_: RecipeRound) -> None:
    """<round's results>/seed_checks.json: the dev numbers and diagnostics of every seed of the
    round's seed checks (development numbers only; they choose nothing)."""
    write_json(round_.results_dir / "seed_checks.json",
               {name: [_run_record(round_, run) for run in runs] for name, runs in seed_check_runs(round_).items()})


def _run_record(round_: RecipeRound, run: Run) -> dict[str, Any]:
    """A run's flags, dev numbers, final diagnostics, steps, the mean word term of each
    frequency-rank band of its ``best/`` model and that model's sentence scale on the STS 2017
    sentences (a development set); its validation log is copied to the round's records."""
    write_text(round_.results_dir / f"{run.name}.jsonl", log_path(round_, run.name).read_text(encoding="utf-8"))
    model = probsent.load(RUNS_DIR / run.name / "best")
    return {"name": run.name, "note": run.note, "flags": run.flags, **dev_scores(round_, run.name),
            "diagnostics": final_diagnostics(round_, run.name), "steps": validation_log(round_, run.name)[-1]["step"],
            "term_bands": term_by_rank_band(model.encoder),
            "scale": sentence_scale(*model.encode(_sts17_sentences(), log_variance=True))}


@functools.cache
def _sts17_sentences() -> list[str]:
    """Both sides of the STS 2017 pairs (a development set), read once."""
    sts17 = load_sts17(DataDir())
    return sts17.first + sts17.second


def write_baselines() -> None:
    """results/recipe/baselines.json: Length, word rarity and the model shipped before the recipe,
    in the columns of the rounds' test tables (their test numbers from the plan's evaluations; the
    shorter-specific pairs scored now). Written once, before a new model may be shipped."""
    if BASELINES.is_file():
        return
    plan = load_evaluation(REPORT_DIR / "evaluation.json").results.systems
    shipped_model = load_evaluation(SHIPPED_BEFORE / "evaluation.json").results.first_model()
    rows = {}
    for name, entry, scorer in (("Length", plan["Length"], LengthScorer()),
                                ("Word Freq (sum)", plan["Word Freq (sum)"], WordFrequencyScorer("sum")),
                                ("shipped before issue 11", shipped_model, probsent.load())):
        rows[name] = numbers(dataclasses.replace(entry, shorter_specific=shorter_specific_experiment(scorer)))
    write_json(BASELINES, rows)
