"""Retrain and re-evaluate everything behind docs/RESULTS.md, then regenerate it.

    python -m experiments.reproduce [--jobs 2] [--only NAME ...] [--skip-train] [--ship]

1. every run of experiments/plan.py: ``probsent train`` into runs/<name> (resumable: a run
   that is complete is not retrained), each job on one torch thread;
2. every run evaluated: ``probsent eval`` of its best/ and best-news/ models into
   results/<name>/ (the evaluation JSONs are committed, with the run's validation log);
3. with --ship: the WLO run (of those trained for the plan's common step budget) and
   vocabulary size whose trimmed best-news/ model is most accurate on the news training rows
   (the second selection: the shipped model is a specificity scorer) exported into the
   package (float16), calibrated, and evaluated with the baselines into results/shipped/ (the
   choice and every accuracy tried: choice.json);
4. the paper's tables for the STS-selected run of each model: ``probsent eval`` into docs/results/;
5. docs/RESULTS.md written by experiments/summarize.py.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from experiments.paths import REPO, REPORT_DIR, RESULTS_DIR, RUNS_DIR, SHIPPED
from experiments.plan import MODELS, RUNS, runs_by_name
from experiments.runner import evaluate, run_probsent, run_summarize
from experiments.selection import choose_shipped, select_run, ship_candidates
from probsent.io import write_json, write_text
from probsent.training.checkpoint import LOG


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


def ship(candidates: list[str] | None = None) -> None:
    """Export the best WLO on the news training rows (run and vocabulary size, see
    :func:`choose_shipped`; of ``candidates``, by default :func:`ship_candidates`) as the
    package's default model, calibrate and evaluate it."""
    staging = REPO / "probsent" / "pretrained" / ".wlo.new"
    shutil.rmtree(staging, ignore_errors=True)
    name, words, accuracy = choose_shipped(candidates or ship_candidates())
    source = RUNS_DIR / name / "best-news"
    print(f"shipping {source.relative_to(REPO)} with {words:,} words (news-train accuracy "
          f"{accuracy[name][words]:.2f})", flush=True)
    run_probsent("export", "--model", str(source.relative_to(REPO)), "--out", str(staging),
             "--max-words", str(words), "--float16")
    run_probsent("calibrate", "--model", str(staging))
    if SHIPPED.exists():
        shutil.rmtree(SHIPPED)
    staging.rename(SHIPPED)
    evaluate([str(SHIPPED.relative_to(REPO))], RESULTS_DIR / "shipped", baselines=True,
             transformer=False)
    write_json(RESULTS_DIR / "shipped" / "choice.json", {"run": name, "max_words": words,
                                                          "news_train_accuracy": accuracy})


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
                        help="export the selected WLO into probsent/pretrained/wlo")
    parser.add_argument("--ship-only", action="store_true",
                        help="only the shipping step, from the evaluated runs")
    parser.add_argument("--report-only", action="store_true",
                        help="only the paper's tables of the selected main models and docs/RESULTS.md")
    args = parser.parse_args()
    started = time.time()
    if args.ship_only:
        ship()
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
            ship()
        report()
        write_json(RESULTS_DIR / "reproduce.json", {"seconds": round(time.time() - started),
                                                     "jobs": args.jobs, "runs": len(names)})
        run_summarize()
    print(f"reproduce: {time.time() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
