"""Retrain and re-evaluate everything behind docs/RESULTS.md, then regenerate it.

    python -m reproduction.experiments.reproduce [--jobs 2] [--only NAME ...] [--skip-train] [--ship]

1. every run of experiments/plan.py: ``probsent train`` into runs/<name> (resumable: a run
   that is complete is not retrained), each job on one torch thread;
2. every run evaluated: ``probsent eval`` of its best/ and best-news/ models into
   results/<name>/ (the evaluation JSONs are committed, with the run's validation log);
3. with --ship: the ship rule's design rounds (``reproduction.experiments.ship_rule``: candidates, seeds,
   the choice on development sets, the test sets once), and their winner exported into the
   package (float16, every word), calibrated and evaluated with the baselines into
   results/shipped/;
4. the paper's tables for the STS-selected run of each model: ``probsent eval`` into docs/results/;
5. docs/RESULTS.md written by experiments/summarize.py.
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from reproduction.experiments.paths import LOG, REPO, REPORT_DIR, RESULTS_DIR, RUNS_DIR
from reproduction.experiments.plan import MODELS, RUNS, runs_by_name
from reproduction.experiments.runner import evaluate, run_probsent, run_summarize
from reproduction.experiments.selection import select_run
from reproduction.experiments.ship_rule import reproduce_shipped
from probsent.files.atomic_writes import write_json, write_text


def train_and_evaluate(name: str, skip_train: bool) -> str:
    """Train one run of the plan (unless ``skip_train``) and evaluate its models into results/<name>/."""
    run = runs_by_name()[name]
    out, log = RUNS_DIR / name, RUNS_DIR / f"{name}.log"
    RUNS_DIR.mkdir(exist_ok=True)
    started = time.time()
    if not skip_train:
        run_probsent(*run.train_args(str(out.relative_to(REPO))), log=log)
    (RESULTS_DIR / name).mkdir(parents=True, exist_ok=True)
    # the validation curve (and the training seconds) of the run, committed with its results
    write_text(RESULTS_DIR / name / LOG, (out / LOG).read_text(encoding="utf-8"))
    models = [str((out / "best").relative_to(REPO))]
    if (out / "best-news").is_dir():
        models.append(str((out / "best-news").relative_to(REPO)))
    evaluate(models, RESULTS_DIR / name, log=log)
    return f"{name}: done in {time.time() - started:.0f} s"


def report() -> None:
    """The paper's tables for the STS-selected run of each of the five models, and every baseline."""
    main_models = [str((RUNS_DIR / select_run(model, RESULTS_DIR) / "best").relative_to(REPO))
                   for model in MODELS]
    evaluate(main_models, REPORT_DIR, baselines=True,
             ablation=str((RUNS_DIR / "wlo-lambda0" / "best").relative_to(REPO)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="runs trained at once, one thread each")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these runs of the plan")
    parser.add_argument("--skip-train", action="store_true", help="evaluate the existing runs only")
    parser.add_argument("--ship", action="store_true",
                        help="also the ship rule's design rounds, and their winner into probsent/pretrained/wlo")
    parser.add_argument("--ship-only", action="store_true",
                        help="only the ship rule's design rounds and the shipping of their winner")
    parser.add_argument("--report-only", action="store_true",
                        help="only the paper's tables of the selected main models and docs/RESULTS.md")
    args = parser.parse_args()
    started = time.time()
    if args.ship_only:
        reproduce_shipped()
        return 0
    if args.report_only:
        report()
        run_summarize()
        return 0
    names = args.only or [run.name for run in RUNS]
    unknown = set(names) - set(runs_by_name())
    if unknown:
        raise SystemExit(f"not in experiments/plan.py: {', '.join(sorted(unknown))}")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for message in pool.map(lambda n: train_and_evaluate(n, args.skip_train), names):
            print(message, flush=True)
    if args.only is None:
        if args.ship:
            reproduce_shipped()
        report()
        write_json(RESULTS_DIR / "reproduce.json", {"seconds": round(time.time() - started),
                                                     "jobs": args.jobs, "runs": len(names)})
        run_summarize()
    print(f"reproduce: {time.time() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
