"""The ship rule, under which the design rounds compete (each committed before any of its runs).

The design rounds are data, one file each: ``experiments/design_rounds/design_<N>.py`` (a
``DesignRound``: hypothesis, candidates, notes, contrasts, diagnostic runs, ablation, the number
that chooses). This module is the rule (floors, score, finalists, choice, ship) and the stages
that run a round through it; it names no run.

The design rounds' runs that resample the mixture (--resample-like, --resample-pairs) use
settings that left ``probsent train`` after the study (issue 35): they are reproduced at
commit 2d16e26: ``git checkout 2d16e26 && make reproduce``.

The model a user gets by default must be one a user would trust. It is chosen in two steps,
development sets only (the test sets are evaluated once, after the choice):

1. **Floors** (a candidate that misses one cannot ship):
   - its own full vocabulary: the shipped model is the run's ``best/`` model as trained (float16
     allowed, no word dropped): every word training kept under its ``--min-count`` and
     ``--vocab-size`` has its own entry;
   - STS 2017 Pearson (the trainer's development figure of that model) >= 0.70;
   - STS Benchmark *dev* Pearson of the cosine of concat(mean, var) >= 55 (the paper's
     similarity read-out, on the development split);
   - on the equal-length pairs at least the model shipped before this rule.
2. **Choice** among those that pass: the highest mean of three measures that counting words
   cannot raise (``reproduction.evaluation.length_controlled``): accuracy within length groups on
   the cleaned news training rows, the equal-length pairs and the one-word explain set.
   Finalists (the best two single-seed candidates that pass the floors) are trained with seeds
   2 and 3; the winner is the finalist with the highest 3-seed mean of that score among those
   whose three seeds all pass the floors; its seed-1 model ships. A round whose change cannot
   move that score (round 4: the unit of a trained model, which no measure of the rule reads)
   says in its pre-registration which development number chooses instead.

    python -m reproduction.experiments.ship_rule --round 1 --stage reference  # the floor: the model shipped before
    python -m reproduction.experiments.ship_rule --round 3 --stage rarity   # round 3's diagnostic (dev sets only;
                                                               # the runs its data file names)
    python -m reproduction.experiments.ship_rule --round 4 --stage similarity  # concat(mean, var)'s parts (STS-B dev)
    python -m reproduction.experiments.ship_rule --round 1 --stage dev      # train the candidates, dev record
    python -m reproduction.experiments.ship_rule --round 1 --stage seeds    # seeds 2-3 of the finalists
    python -m reproduction.experiments.ship_rule --round 1 --stage select   # the choice (dev numbers only)
    python -m reproduction.experiments.ship_rule --round 1 --stage test     # the test sets, once, for the winner
    python -m reproduction.experiments.ship_rule --round 1 --stage ship     # the winner into probsent/pretrained/wlo,
                                                               # evaluated into results/shipped/
    python -m reproduction.experiments.ship_rule --round 1 --stage shipped-rows  # the shipped model's two test rows
    python -m reproduction.experiments.ship_rule --round 3 --stage ablation  # seeds 2-3 of the run without the change
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from reproduction.experiments.paths import REPO, WING, RESULTS_DIR, RUNS_DIR, SHIPPED
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds import DESIGN_ROUNDS, design_run_named
from reproduction.experiments.plan import Run
from reproduction.experiments.runner import evaluate
from reproduction.experiments.stage_helpers import SEEDS, last_diagnostics, seed_name, train as train_run, with_seed
from probsent.files.atomic_writes import write_json

RECORDS = RESULTS_DIR / "design"
PREVIOUSLY_SHIPPED = RESULTS_DIR / "shipped-before-rule" / "dev.json"
SHIPPED_ROWS = RECORDS / "shipped-rows.json"  # the shipped model's entropy and P(specific) on the test sets
RARITY_DIAGNOSTIC = RECORDS / "rarity-diagnostic.json"  # a run's terms against the words' rarity (dev only)
SIMILARITY_DIAGNOSTIC = RECORDS / "similarity-diagnostic.json"  # what concat(mean, var) is made of (dev only)
# the diagnostic stages (development sets only) and their records; each reads the runs the
# round's data file names for it (``DesignRound.diagnostic_runs``)
DIAGNOSTIC_RECORDS = {"rarity": RARITY_DIAGNOSTIC, "similarity": SIMILARITY_DIAGNOSTIC}

STS17_FLOOR = 0.70
STSB_DEV_FLOOR = 55.0
MEASURES = ("news_length_groups", "equal_length", "one_word_explain")


def train(run: Run) -> None:
    """Train ``run`` into runs/<name> (resumed if cut off; a finished run is left as it is), or
    for a rescaled copy of a trained run, write it there."""
    if "rescale_of" in run.flags:
        rescale(run)
    else:
        train_run(run)


def rescale(run: Run) -> None:
    """runs/<name>/best: the ``best/`` model of the run it copies (seed-matched) with its start
    variance; ``last/vocab.txt`` and ``log.jsonl`` are that run's (the vocabulary training kept,
    its last validation's diagnostics). A copy already written is left as it is."""
    import shutil

    import probsent
    from probsent.export import export_model

    seed = run.flags.get("seed")
    source = RUNS_DIR / (seed_name(str(run.flags["rescale_of"]), seed) if seed else str(run.flags["rescale_of"]))
    target = RUNS_DIR / run.name
    if (target / "best").is_dir():
        return
    (target / "last").mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / "last" / "vocab.txt", target / "last" / "vocab.txt")
    shutil.copy2(source / "log.jsonl", target / "log.jsonl")
    export_model(probsent.load(source / "best"), target / "best", source=str(source.relative_to(REPO) / "best"),
                 start_variance=float(run.flags["start_variance"]))


def training_vocabulary_size(run_dir: Path) -> int:
    """How many entries training kept for a run (its checkpoint's vocabulary, ``<unk>`` included)."""
    return len((run_dir / "last" / "vocab.txt").read_text(encoding="utf-8").splitlines())


def dev_measures(model_dir: Path) -> dict[str, Any]:
    """Every development number of the rule for one model directory."""
    import probsent
    from reproduction.evaluation import datasets as ds
    from reproduction.evaluation import length_controlled as lc
    from reproduction.evaluation.tables import load_shorter_specific, sts_similarities
    from reproduction.evaluation.metrics import pearson

    model = probsent.load(model_dir)
    stsb_dev = ds.load_sts_benchmark(ds.as_data_dir(None), "dev")
    similarities = sts_similarities(model, stsb_dev, probabilistic=True)
    record = {
        "news_length_groups": lc.news_length_groups_accuracy(model),
        "equal_length": lc.equal_length_accuracy(model),
        "one_word_explain": lc.one_word_explain_accuracy(model),
        "shorter_specific": lc.pair_accuracy(model, *load_shorter_specific()),
        "stsb_dev_concat": 100.0 * pearson(similarities["cosine"], stsb_dev.scores),
        "stsb_dev_means": 100.0 * pearson(similarities["cosine_mean"], stsb_dev.scores),
        "vocabulary": len(model.vocab),
    }
    record.update(term_summary(model))
    training = json.loads((model_dir / "config.json").read_text(encoding="utf-8")).get("training", {})
    record["sts17"] = float(training.get("sts17_pearson", math.nan))
    record["score"] = float(np.mean([record[m] for m in MEASURES]))
    return record


def term_summary(model: Any) -> dict[str, float]:
    """Where the entropy terms sit: ``<unk>``'s (every word the model does not know), the median
    known word's, and the mean of the 20 most frequent and of the rarest tenth of the vocabulary."""
    import torch

    with torch.no_grad():
        terms = model.encoder.word_entropy_terms(dtype=torch.float64).numpy()
    known = terms[1:]
    return {"unk_term": float(terms[0]), "median_term": float(np.median(known)),
            "frequent20_term": float(known[:20].mean()), "rarest_tenth_term": float(known[-max(1, len(known) // 10):].mean())}


def rarity_diagnostic(model_dir: Path, weight: float) -> dict[str, dict[str, float]]:
    """Development only: the rule's three measures with a WLO's own entropy terms, with the
    words' rarity alone (``weight`` x (log training count - the average token's), the terms
    ``--rarity-init`` starts from) and with their sum; each set of terms replaces the model's
    by scaling every A_w (the means change too, so no similarity number is taken)."""
    import torch

    import probsent
    from reproduction.evaluation import length_controlled as lc
    from reproduction.evaluation.training_pairs import load_training_pairs
    from probsent.integrations.research_facade import rarity_terms
    from probsent.integrations.research_facade import vocabulary_counts

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    pairs = load_training_pairs(config).pairs
    words = probsent.load(model_dir).vocab.words[1:]
    if pairs is None or list(pairs.words[:len(words)]) != list(words):
        raise SystemExit(f"{model_dir}: its vocabulary is not the most frequent words of its training file")
    rarity = torch.from_numpy(rarity_terms(vocabulary_counts(pairs.counts, len(words)), weight)).double()
    record = {}
    for label in ("own terms", "rarity alone", "own terms + rarity"):
        model = probsent.load(model_dir)
        with torch.no_grad():
            own = model.encoder.word_entropy_terms(dtype=torch.float64)
            wanted = {"own terms": own, "rarity alone": rarity, "own terms + rarity": own + rarity}[label]
            model.encoder.shift_entropy_terms(wanted - own)
        record[label] = {"news_length_groups": lc.news_length_groups_accuracy(model),
                         "equal_length": lc.equal_length_accuracy(model),
                         "one_word_explain": lc.one_word_explain_accuracy(model)}
    return record


def similarity_diagnostic(model_dir: Path) -> dict[str, float]:
    """Development only (STS Benchmark dev): Pearson x100 of the cosine of concat(mean, var),
    of the means alone and of the variances alone, and the median share of the variance half
    in the norm of concat(mean, var): what the paper's similarity read-out is made of; and of
    the model's own similarity, log N(0; mu1 - mu2, S1 + S2), its distance and log-determinant
    parts, and the pooled distance (the squared gap over the mean summed variance), alone and with
    the log-determinant part."""
    import probsent
    from reproduction.evaluation import datasets as ds
    from reproduction.evaluation.metrics import pearson
    from reproduction.evaluation.tables import gaussians, rows_cosine
    from probsent.gaussian import expected_inner_product

    model = probsent.load(model_dir)
    dev = ds.load_sts_benchmark(ds.as_data_dir(None), "dev")
    (mean1, logvar1), (mean2, logvar2) = gaussians(model, dev.first), gaussians(model, dev.second)
    var1, var2 = np.exp(logvar1), np.exp(logvar2)
    concat1, concat2 = np.hstack([mean1, var1]), np.hstack([mean2, var2])
    share = np.linalg.norm(var1, axis=1) / np.linalg.norm(concat1, axis=1)
    own = expected_inner_product(mean1, logvar1, mean2, logvar2)
    # its two parts (less a constant): -1/2 sum_d (mu1 - mu2)^2 / (S1 + S2) and -1/2 log|S1 + S2|
    both = var1 + var2
    distance, spread = -0.5 * ((mean1 - mean2) ** 2 / both).sum(1), -0.5 * np.log(both).sum(1)
    pooled = -0.5 * ((mean1 - mean2) ** 2).sum(1) / both.mean(1)
    return {"concat": 100.0 * pearson(rows_cosine(concat1, concat2), dev.scores),
            "expected_inner_product": 100.0 * pearson(own, dev.scores),
            "own_distance_part": 100.0 * pearson(distance, dev.scores),
            "own_log_determinant_part": 100.0 * pearson(spread, dev.scores),
            "pooled_distance": 100.0 * pearson(pooled, dev.scores),
            "pooled_with_log_determinant": 100.0 * pearson(pooled + spread, dev.scores),
            "means": 100.0 * pearson(rows_cosine(mean1, mean2), dev.scores),
            "variances": 100.0 * pearson(rows_cosine(var1, var2), dev.scores),
            "variance_share": float(np.median(share))}


def diagnostic_record(round_: DesignRound, stage: str) -> dict[str, Any]:
    """The record of a diagnostic stage (development sets only) for the runs ``round_`` names for
    it: ``rarity``, one run's entropy terms against the words' rarity (its ``--rarity-init``
    weight); ``similarity``, what concat(mean, var) is made of, per run."""
    names = round_.diagnostic_runs.get(stage)
    if not names:
        raise SystemExit(f"design round {round_.number} names no runs for --stage {stage} "
                         f"(diagnostic_runs in experiments/design_rounds/design_{round_.number}.py)")
    if stage == "similarity":
        return {name: similarity_diagnostic(RUNS_DIR / name / "best") for name in names}
    if len(names) != 1:
        raise SystemExit(f"design round {round_.number}: --stage rarity reads one run, not {len(names)}")
    run = design_run_named(names[0])
    weight = float(run.flags["rarity_init"])
    return {"model": f"runs/{run.name}/best", "rarity_weight": weight,
            "measures": rarity_diagnostic(RUNS_DIR / run.name / "best", weight)}


def floors(record: dict[str, Any], shipped_equal_length: float, trained_vocabulary: int) -> list[str]:
    """The floors a candidate misses (empty: it may ship)."""
    missed = shared_floors(record, trained_vocabulary)
    if not record["equal_length"] >= shipped_equal_length:
        missed.append(f"equal-length {record['equal_length']:.1f} < shipped {shipped_equal_length:.1f}")
    return missed


def shared_floors(record: dict[str, Any], trained_vocabulary: int) -> list[str]:
    """The floors every rule keeps (issue 34's too) that a candidate misses: its own full trained
    vocabulary, STS 2017 and STS-B dev concat."""
    missed = []
    if record["vocabulary"] < trained_vocabulary:
        missed.append(f"vocabulary {record['vocabulary']} < {trained_vocabulary} trained")
    if not record["sts17"] >= STS17_FLOOR:
        missed.append(f"STS 2017 {record['sts17']:.3f} < {STS17_FLOOR}")
    if not record["stsb_dev_concat"] >= STSB_DEV_FLOOR:
        missed.append(f"STS-B dev concat {record['stsb_dev_concat']:.1f} < {STSB_DEV_FLOOR}")
    return missed


def choose(records: dict[str, dict[str, Any]], seeds: dict[str, list[str]], key: str = "score") -> str | None:
    """The winner: among finalists (keys of ``seeds``: name -> its seed runs' names) whose every
    seed passes the floors, the highest mean of ``key`` (the rule's score) over the seeds; None
    if none passes."""
    means = seed_means(records, seeds, key)
    return max(means, key=means.get) if means else None


def seed_means(records: dict[str, dict[str, Any]], seeds: dict[str, list[str]], key: str = "score") -> dict[str, float]:
    """The mean of ``key`` over the seeds of each finalist (keys of ``seeds``) whose every seed
    passes the floors."""
    return {name: float(np.mean([records[r][key] for r in [name, *runs]])) for name, runs in seeds.items()
            if all(not records[r]["missed"] for r in [name, *runs])}


def finalists(records: dict[str, dict[str, Any]], names: list[str], count: int = 2) -> list[str]:
    """The best ``count`` seed-1 candidates that pass the floors, by score."""
    passing = [name for name in names if not records[name]["missed"]]
    return sorted(passing, key=lambda name: -records[name]["score"])[:count]


def specificity_row(scorer: Any) -> dict[str, float]:
    """News accuracy and the Twitter, Yelp and Movie Spearman correlations (x100) of a scorer."""
    from reproduction.evaluation.tables import specificity_experiment

    result = specificity_experiment(scorer)
    return {"news": result.news.accuracy, **{d: result.domain(d).spearman for d in ("twitter", "yelp", "movie")}}


def test_measures(model_dir: Path) -> dict[str, Any]:
    """The test sets, for one model: the entropy's row, the calibrated probability's row (the
    model is calibrated on the news training rows first if it is not) and the STS Benchmark
    test Pearson of the cosine of concat(mean, var) and of the means."""
    import probsent
    from probsent.cli import main as cli
    from reproduction.evaluation import datasets as ds
    from reproduction.evaluation.model_scorer import ProbabilityScorer
    from reproduction.evaluation.tables import sts_similarities
    from reproduction.evaluation.metrics import pearson

    model = probsent.load(model_dir)
    if model.calibration is None:
        cli(["calibrate", "--model", str(model_dir)])
        model = probsent.load(model_dir)
    stsb = ds.load_sts_benchmark(ds.as_data_dir(None), "test")
    similarities = sts_similarities(model, stsb, probabilistic=True)
    return {"entropy": specificity_row(model), "probability": specificity_row(ProbabilityScorer(model)),
            "withheld": withheld_shares(model),
            "stsb_test_concat": 100.0 * pearson(similarities["cosine"], stsb.scores),
            "stsb_test_means": 100.0 * pearson(similarities["cosine_mean"], stsb.scores)}


def withheld_shares(model) -> dict[str, float]:
    """The share (%) of each test set's sentences whose percentile and P(specific) the API
    withholds (probsent.readouts.withheld: low coverage, repetition, under three words)."""
    from reproduction.evaluation import datasets as ds

    data = ds.as_data_dir(None)
    sets = {"news": ds.load_news_test(data).sentences,
            **{d: ds.load_ko2019(data, d).sentences for d in ("twitter", "yelp", "movie")}}
    return {name: 100.0 * sum(note != "" for note in model.note(list(sentences))) / len(sentences)
            for name, sentences in sets.items()}


def write_test_record(round_: DesignRound, record: dict[str, Any]) -> dict[str, Any]:
    """The test sets, once, after the choice: the winner's three seeds, and Length."""
    from reproduction.evaluation.baselines import LengthScorer

    winner = record["winner"]
    names = [winner, *(seed_name(winner, s) for s in SEEDS)]
    tested = {"winner": winner, "runs": {name: test_measures(RUNS_DIR / name / "best") for name in names},
              "length": specificity_row(LengthScorer())}
    write_json(RECORDS / f"round{round_.number}-test.json", tested)
    return tested


def ship(record: dict[str, Any], record_path: Path) -> None:
    """Ship the winner's seed-1 ``best/`` model into the package: float16, every word kept (the
    vocabulary floor is checked on the files written), calibrated (score-only P(specific) and the
    percentile table, ``probsent calibrate``). The files it
    replaces go to results/shipped-before-rule/ first (the shipped model's records too)."""
    import shutil

    import probsent
    from probsent.cli import main as cli
    from probsent.export import export_model

    source = RUNS_DIR / record["winner"] / "best"
    package = SHIPPED
    staged = RUNS_DIR / f"{record['winner']}-ship"
    shutil.rmtree(staged, ignore_errors=True)
    export_model(probsent.load(source), staged, float16=True, source=str(source.relative_to(REPO)))
    trained = training_vocabulary_size(source.parent)
    shipped_words = len(probsent.load(staged).vocab)
    if shipped_words != trained:
        raise SystemExit(f"{staged}: {shipped_words} words, training kept {trained}")
    keep = PREVIOUSLY_SHIPPED.parent
    for name in ("config.json", "model.safetensors", "vocab.txt", "calibration.json", "percentiles.json",
                 "MODEL_CARD.md"):
        if (package / name).is_file() and not (keep / name).is_file():
            shutil.copy2(package / name, keep / name)
    for name in ("choice.json", "evaluation.json", "report.md"):
        shipped_record = RESULTS_DIR / "shipped" / name
        if shipped_record.is_file() and not (keep / f"shipped-{name}").is_file():
            shutil.copy2(shipped_record, keep / f"shipped-{name}")
    (package / "calibration.json").unlink(missing_ok=True)
    (package / "percentiles.json").unlink(missing_ok=True)
    for name in ("config.json", "model.safetensors", "vocab.txt"):
        shutil.copy2(staged / name, package / name)
    cli(["calibrate", "--model", str(package)])
    choice = {"rule": "experiments/ship_rule.py", "record": record_path.relative_to(WING).as_posix(),
              "run": record["winner"], "words": trained, "dtype": "float16"}
    write_json(RESULTS_DIR / "shipped" / "choice.json", choice)
    # the shipped model's records: its evaluation with the baselines, and its two test rows
    evaluate([SHIPPED.relative_to(REPO).as_posix()], RESULTS_DIR / "shipped", baselines=True, transformer=False)
    write_shipped_rows()


def write_shipped_rows() -> dict[str, Any]:
    """The shipped model's rows on the test sets (its entropy, P(specific), the share withheld),
    and Length's."""
    from reproduction.evaluation.baselines import LengthScorer

    rows = {"model": SHIPPED.relative_to(REPO).as_posix(), "calibration": "score_and_length",
            "measures": test_measures(SHIPPED), "length": specificity_row(LengthScorer())}
    write_json(SHIPPED_ROWS, rows)
    return rows


def reproduce_shipped() -> None:
    """Every design round again, in order (dev, seeds, select; runs already trained are kept),
    then the test sets and the shipping of the last round's winner, if a round has one."""
    for number in sorted(DESIGN_ROUNDS):
        for stage in ("dev", "seeds", "select"):
            main(["--round", str(number), "--stage", stage])
    chosen = [n for n in sorted(DESIGN_ROUNDS) if json.loads((RECORDS / f"round{n}.json").read_text(encoding="utf-8"))
              .get("winner")]
    if chosen:
        for stage in ("test", "ship"):
            main(["--round", str(chosen[-1]), "--stage", stage])
    for number in sorted(DESIGN_ROUNDS):  # the ablations' seeds, which choose nothing
        if DESIGN_ROUNDS[number].ablation is not None:
            main(["--round", str(number), "--stage", "ablation"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--round", type=int, choices=sorted(DESIGN_ROUNDS), required=True)
    parser.add_argument("--stage", choices=("reference", *DIAGNOSTIC_RECORDS, "dev", "seeds", "select", "test",
                                            "ship", "shipped-rows", "ablation"), required=True)
    args = parser.parse_args(argv)
    round_ = DESIGN_ROUNDS[args.round]
    if args.stage in DIAGNOSTIC_RECORDS:  # development only: the runs the round's data file names
        record = diagnostic_record(round_, args.stage)
        write_json(DIAGNOSTIC_RECORDS[args.stage], record)
        print(json.dumps(record, indent=1))
        return 0
    if args.stage == "shipped-rows":  # the shipped model, calibrated (score-only): both test rows
        print(json.dumps(write_shipped_rows(), indent=1))
        return 0
    if args.stage == "reference":  # the model shipped before this rule: the equal-length floor
        write_json(PREVIOUSLY_SHIPPED, dev_measures(SHIPPED))
        print(PREVIOUSLY_SHIPPED.read_text(encoding="utf-8"))
        return 0
    record_path = RECORDS / f"round{round_.number}.json"
    shipped = json.loads(PREVIOUSLY_SHIPPED.read_text(encoding="utf-8"))
    record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {"runs": {}}
    runs = list(round_.candidates)
    if args.stage == "ship":
        ship(record, record_path)
        return 0
    if args.stage == "test":  # once, after the choice
        if not record.get("winner"):
            raise SystemExit(f"{record_path}: no winner chosen (run --stage select first)")
        print(json.dumps(write_test_record(round_, record), indent=1))
        return 0
    if args.stage in ("seeds", "select"):
        names = [r.name for r in round_.candidates]
        chosen = finalists(record["runs"], names, len(names) if round_.every_candidate_final else 2)
        record["finalists"] = chosen
        runs = [] if args.stage == "select" else [with_seed(r, s) for r in round_.candidates
                                                   if r.name in chosen for s in SEEDS]
    measured_runs = record["runs"]
    if args.stage == "ablation":  # seeds 2-3 of the run without the round's change, apart from the candidates
        if round_.ablation is None:
            raise SystemExit(f"round {round_.number} names no ablation run")
        runs = [with_seed(design_run_named(round_.ablation), s) for s in SEEDS]
        measured_runs = record.setdefault("ablation", {})
    for run in runs:
        train(run)
        best = RUNS_DIR / run.name / "best"
        measured = dev_measures(best)
        measured["missed"] = floors(measured, shipped["equal_length"], training_vocabulary_size(best.parent))
        measured["flags"] = {k: v for k, v in run.flags.items() if v is not None}
        measured["diagnostics"] = last_diagnostics(RUNS_DIR / run.name)
        measured_runs[run.name] = measured
        write_json(record_path, record)
        print(run.name, json.dumps(measured), flush=True)
    if args.stage == "select":
        seeds = {name: [seed_name(name, s) for s in SEEDS] for name in record["finalists"]}
        missing = [run for runs_of in seeds.values() for run in runs_of if run not in record["runs"]]
        if missing:
            raise SystemExit(f"{record_path}: no record of {', '.join(missing)} (run --stage seeds first)")
        record["winner"] = choose(record["runs"], seeds, round_.choose_by)
        write_json(record_path, record)
        print("winner:", record["winner"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
