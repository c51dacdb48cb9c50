"""The recipe study: can WLO's variances learn specificity? Pre-registered rounds of candidate
runs, each run through its stages. The rounds are experiments/rounds/round_<N>.py, their rules
experiments/protocol.py, their story (what each round had seen, amendments, errata) is
docs/EXPERIMENTS.md, and their numbers are in docs/RESULTS.md.

    python -m reproduction.experiments.recipe [--round N] [--stage STAGE]

Stages, in order (test sets are evaluated once, after the selection):
  train         the reference and the round's single changes (those no earlier round trained)
  combined      the round's combination of each family's best (rule 2)
  select        the two selections, into results/recipe<N>/dev.json (rule 3)
  seed-checks   seeds 2-3 of the round's seed checks (development numbers; they choose nothing)
  seeds         seeds 2-3 of the selected runs and our rule's run without the prior (rule 4)
  evaluate      the test sets of those runs, once (rule 5)
  after         the runs trained after the round, outside its selection

(Rule 6's stage, which shipped our rule's run, is retired: experiments/ship_rule.py chooses the
shipped model; a round's decision, where it made one, stays in results/recipe<N>/ship.json.)
"""
from __future__ import annotations

import argparse
import json
import sys

from reproduction.experiments.paths import RUNS_DIR
from reproduction.experiments.protocol import (RecipeRound, combined_run, evaluation_dir, extra_runs, seed_check_runs,
                                  seed_runs)
from reproduction.experiments.recipe_records import (finished, write_after_record, write_baselines, write_dev_record,
                                        write_seed_check_record)
from reproduction.experiments.rounds import RECIPE_ROUNDS
from reproduction.experiments.runner import evaluate
from reproduction.experiments.stage_helpers import train
from probsent.files.atomic_writes import write_text

STAGES = ("train", "combined", "select", "seed-checks", "seeds", "evaluate", "after")


def evaluate_selected(round_: RecipeRound, selection: dict[str, str]) -> None:
    """The test sets, once: ``probsent eval`` of each selected run's seeds (the paper's rule:
    best/; ours: best-news/) and of the ablation (best-news/), into <round's results>/<name>/
    (skipped where this or an earlier round evaluated the run)."""
    for base, names in seed_runs(round_, selection).items():
        for name in names:
            models = []
            if base == selection["paper"]:
                models.append(f"runs/{name}/best")
            if base in (selection["ours"], "ablation"):
                models.append(f"runs/{name}/best-news")
            out = evaluation_dir(round_, name)
            if (out / "evaluation.json").is_file():
                continue
            print("evaluating", name, flush=True)
            evaluate(models, out, log=RUNS_DIR / f"{name}.eval.log", transformer=False)
            write_text(out / "log.jsonl", (RUNS_DIR / name / "log.jsonl").read_text(encoding="utf-8"))


def run_stage(round_: RecipeRound, stage: str) -> str | None:
    """Run one stage of a round; what it prints, if anything. A run that fails to train (one that
    diverges keeps its last validations) does not stop the others."""
    if stage == "train":
        done = {run.name for r in round_.history[:-1] for run in r.single_changes}
        for run in [round_.reference, *round_.single_changes]:
            if run.name not in done:
                train(run, keep_going=True)
    elif stage == "combined":
        train(combined_run(round_), keep_going=True)
    elif stage == "select":
        return json.dumps(write_dev_record(round_)["selection"])
    elif stage == "after":
        for run in round_.after:
            train(run, keep_going=True)
        write_after_record(round_)
    elif stage == "seed-checks":
        for runs in seed_check_runs(round_).values():
            for run in runs[1:]:
                if not finished(run.name):  # resumes one cut off; a finished one is left as it is
                    train(run, keep_going=True)
        write_seed_check_record(round_)
    else:
        selection = json.loads((round_.results_dir / "dev.json").read_text(encoding="utf-8"))["selection"]
        if stage == "seeds":
            for run in extra_runs(round_, selection):
                train(run, keep_going=True)
        else:
            write_baselines()
            evaluate_selected(round_, selection)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--round", type=int, choices=sorted(RECIPE_ROUNDS), default=1, metavar="N",
                        help=f"the round, 1 to {max(RECIPE_ROUNDS)} (default 1)")
    parser.add_argument("--stage", choices=STAGES, default="select", metavar="STAGE",
                        help="one of the stages above (default select)")
    args = parser.parse_args(argv)
    round_ = RECIPE_ROUNDS[args.round]
    if args.stage == "combined" and not round_.combined_name:
        parser.error(f"round {round_.number} has no combination")
    RUNS_DIR.mkdir(exist_ok=True)
    said = run_stage(round_, args.stage)
    if said:
        print(said)
    return 0


if __name__ == "__main__":
    sys.exit(main())
