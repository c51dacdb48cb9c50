"""Issue 34's rule and its design rounds: similarity and entailment from the same Gaussians.

The rule is docs/EXPERIMENTS.md's section "Similarity and entailment rounds" (committed in
``PROTOCOL_COMMITS``, before any run): floors that keep every specificity development measure of the shipped model within
its recipe's seed sd and beat the information-content baseline on the news training rows, and a
choice by C, the mean gain in noise units of STS-B dev concat and SNLI dev entailment.

    python -m reproduction.experiments.representation_rule --stage reference  # the shipped model's dev numbers
    python -m reproduction.experiments.representation_rule --round A --stage diagnostic  # round A's, dev only
    python -m reproduction.experiments.representation_rule --stage direction  # round B's (training pairs only)
    python -m reproduction.experiments.representation_rule --round A --stage dev     # train the candidates (seed 1)
    python -m reproduction.experiments.representation_rule --round A --stage seeds   # seeds 2-3 of the finalists
    python -m reproduction.experiments.representation_rule --round A --stage similarity-parts  # each one's own similarity
    python -m reproduction.experiments.representation_rule --round A --stage select  # the choice (dev numbers only)
    python -m reproduction.experiments.representation_rule --round A --stage test    # test sets, once per finalist

The rounds are data files (``experiments/design_rounds/design_<letter>.py``, ``DesignRound``s in
``REPRESENTATION_ROUNDS``). Every candidate is trained as the shipped recipe was (round 3's
winner, ``SHIPPED_RECIPE`` in ``experiments/design_rounds/base_recipe.py``: every pair, one epoch,
``--hardness-cap 0 --rarity-init 0.3 --rarity-anchor 1.0``, validated every 1,000 steps, its
STS 2017-selected ``best/``) with one change, by the torch engine (the compiled engine trains
neither change), and measured, as the shipped model was, after ``probsent export
--start-variance 1/64`` (round 4's unit). The ablation is the shipped recipe's three seeds in
the design round record ``results/shipped/choice.json`` names (its ``run`` and that run's seeds
2-3, trained by the fast engine, which is tested equal to the torch engine).
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np

from reproduction.experiments.design_rounds import REPRESENTATION_ROUNDS, design_run_named
from reproduction.experiments.paths import REPO, WING, RESULTS_DIR, RUNS_DIR, SHIPPED
from reproduction.experiments.plan import PAIRS, Run
from reproduction.experiments.ship_rule import (RECORDS, choose, dev_measures, finalists, seed_means,
                                   shared_floors, similarity_diagnostic, training_vocabulary_size)
from reproduction.experiments.stage_helpers import SEEDS, record_measured, seed_name, select_stage, train, with_seed, write_and_show
from probsent.files.atomic_writes import write_json

REFERENCE = RECORDS / "representation-reference.json"
SHIPPED_CHOICE = RESULTS_DIR / "shipped" / "choice.json"  # the shipped run and the record that measured its seeds
PROTOCOL_COMMITS = "2ecfa54, fba1be3 and 836d9d0"  # the rule's pre-registration and its two wording fixes
MOST_LOSS = -1.0  # a floor: neither gain (noise units) below this
FINALISTS = 2  # the best this many seed-1 candidates that pass get seeds 2 and 3
GOALS = {"stsb_test_concat": 70.0, "snli_test_entailment": 72.0}  # issue 34's goals for the model that ships
SPECIFICITY = ("news_length_groups", "equal_length", "one_word_explain", "shorter_specific")
SHIP_MARGIN = 0.5


def noise_units(reference: dict[str, Any]) -> dict[str, float]:
    """u_STS (the shipped recipe's three-seed sd of STS-B dev concat) and u_E (the binomial sd of
    the shipped model's SNLI dev entailment share, x100), as the rule defines them."""
    entailment, pairs = reference["snli_dev"]["entailment"] / 100.0, reference["snli_dev"]["n"]["entailment"]
    return {"stsb": reference["sd"]["stsb_dev_concat"],
            "entailment": 100.0 * math.sqrt(entailment * (1.0 - entailment) / pairs)}


def direction_noise(reference: dict[str, Any]) -> float:
    """The noise of SNLI dev's entailment-minus-neutral gap: 100 x sqrt(pE (1 - pE) / nE + pN (1 - pN) / nN)."""
    snli = reference["snli_dev"]
    p_e, p_n = snli["entailment"] / 100.0, snli["neutral"] / 100.0
    return 100.0 * math.sqrt(p_e * (1 - p_e) / snli["n"]["entailment"] + p_n * (1 - p_n) / snli["n"]["neutral"])


def gains(record: dict[str, Any], reference: dict[str, Any]) -> dict[str, float]:
    """The two gains in noise units and their mean, C."""
    units = noise_units(reference)
    stsb = (record["stsb_dev_concat"] - reference["mean"]["stsb_dev_concat"]) / units["stsb"]
    entailment = (record["snli_dev"]["entailment"] - reference["snli_dev"]["entailment"]) / units["entailment"]
    return {"stsb": stsb, "entailment": entailment, "C": 0.5 * (stsb + entailment)}


def floors(record: dict[str, Any], reference: dict[str, Any], trained_vocabulary: int) -> list[str]:
    """The rule's floors a candidate misses (empty: it may ship)."""
    missed = shared_floors(record, trained_vocabulary)  # the ship rule's, as they stand
    missed += specificity_floors(record, reference)
    if not record["news_train"] > record["information_content_news_train"]:
        missed.append(f"news-train {record['news_train']:.1f} <= information content "
                      f"{record['information_content_news_train']:.1f}")
    gained = gains(record, reference)
    for part in ("stsb", "entailment"):
        if gained[part] < MOST_LOSS:
            missed.append(f"{part} gain {gained[part]:.2f} < {MOST_LOSS:g} noise unit")
    return missed + direction_floor(record, reference)


def specificity_floors(record: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """The specificity development measures below the shipped model's value less its recipe's sd."""
    missed = []
    for measure in SPECIFICITY:
        floor = reference["shipped"][measure] - reference["sd"][measure]
        if not record[measure] >= floor:
            missed.append(f"{measure} {record[measure]:.1f} < {floor:.1f}")
    return missed


def direction_floor(record: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """SNLI dev's entailment-minus-neutral gap, if below the shipped model's less its noise."""
    gap = record["snli_dev"]["entailment"] - record["snli_dev"]["neutral"]
    shipped_gap = reference["snli_dev"]["entailment"] - reference["snli_dev"]["neutral"]
    if gap >= shipped_gap - direction_noise(reference):
        return []
    return [f"SNLI dev entailment - neutral {gap:.1f} < {shipped_gap - direction_noise(reference):.1f}"]


def measure(model_dir: Path) -> dict[str, Any]:
    """Every development number the rule reads, for one model directory."""
    import probsent
    from reproduction.evaluation import datasets as ds
    from reproduction.evaluation.command import information_content
    from reproduction.evaluation.model_scorer import ModelScorer
    from reproduction.evaluation.metrics import accuracy_at_tuned_threshold
    from reproduction.evaluation.suite import Options, SharedTrainingPairs, System
    from reproduction.evaluation.tables import snli_entailment

    data = ds.as_data_dir(None)
    record = dev_measures(model_dir)
    model = probsent.load(model_dir)
    record["snli_dev"] = snli_entailment(model, data, split="dev").__dict__
    news = ds.load_news_train(data)
    record["news_train"] = 100.0 * accuracy_at_tuned_threshold(model.specificity(news.sentences), news.specific)
    scorer = ModelScorer(str(model_dir), model)
    system = System(str(model_dir), "model", scorer, encoder=scorer, model=model, path=str(model_dir))
    baseline, note = information_content((system, SharedTrainingPairs(Options(progress=False), data.root)))
    record["information_content_news_train"] = 100.0 * accuracy_at_tuned_threshold(
        np.asarray(baseline.specificity(news.sentences)), news.specific)
    record["information_content_counts"] = note
    return record


def reference_record() -> dict[str, Any]:
    """The shipped model's development numbers (seed 1) and its recipe's three-seed mean and sd."""
    choice = json.loads(SHIPPED_CHOICE.read_text(encoding="utf-8"))
    seeds = json.loads((WING / choice["record"]).read_text(encoding="utf-8"))["runs"]
    recipe_seeds = [choice["run"], *(seed_name(choice["run"], s) for s in SEEDS)]
    shipped = measure(SHIPPED)
    names = [*SPECIFICITY, "stsb_dev_concat"]
    values = {name: [seeds[run][name] for run in recipe_seeds] for name in names}
    return {"model": SHIPPED.relative_to(REPO).as_posix(), "recipe_seeds": recipe_seeds,
            "shipped": {name: shipped[name] for name in [*names, "stsb_dev_means", "sts17", "news_train",
                                                         "information_content_news_train"]},
            "mean": {name: float(np.mean(v)) for name, v in values.items()},
            "sd": {name: float(np.std(v, ddof=1)) for name, v in values.items()},
            "snli_dev": shipped["snli_dev"]}


def own_similarity_parts(model_dir: Path) -> dict[str, float]:
    """STS-B dev Pearson x100 of the model's own similarity, log N(0; mu1 - mu2, S1 + S2), and of its
    distance and log-determinant parts, with the variances its similarity compares
    (:func:`reproduction.experiments.ship_rule.similarity_diagnostic`): what a round-A candidate did to the
    similarity it trained. (The wlo2v candidates' second-scale variances were read at commit
    0a6bcda, where ``--model wlo2v`` still exists; the record keeps them.)"""
    measured = similarity_diagnostic(model_dir)
    return {"own_similarity": measured["expected_inner_product"],
            **{key: measured[key] for key in ("own_distance_part", "own_log_determinant_part")}}


def pooled_distance_diagnostic(model_dir: Path) -> dict[str, float]:
    """Round A's diagnostic (STS-B dev, Pearson x100; :func:`reproduction.experiments.ship_rule.similarity_diagnostic`):
    the model's own distance part against the pooled distance, alone and with the log-determinant part."""
    measured = similarity_diagnostic(model_dir)
    return {key: measured[key] for key in ("own_distance_part", "pooled_distance", "pooled_with_log_determinant")}


SIMPLIFICATION_SOURCES = ("asset_simplification", "turkcorpus_simplification")
DIRECTION_DIAGNOSTIC = RECORDS / "representation-direction-diagnostic.json"


def direction_diagnostic(model_dir: Path) -> dict[str, Any]:
    """Round B's diagnostic (training pairs only): in the simplification pairs, the share in which
    the model gives the original (the side that repeats across an original's simplifications) a
    lower entropy than its simplification; overall, where the original has more tokens, and at
    equal token counts (what length cannot explain)."""
    import gzip
    from collections import Counter

    import probsent
    from probsent.api import tokenize

    pairs: dict[str, list[tuple[str, str]]] = {source: [] for source in SIMPLIFICATION_SOURCES}
    with gzip.open(PAIRS, "rt", encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[2] in pairs:
                pairs[parts[2]].append((parts[0], parts[1]))
    model = probsent.load(model_dir)
    record: dict[str, Any] = {"model": str(model_dir.relative_to(REPO)) if model_dir.is_relative_to(REPO)
                              else str(model_dir)}
    for source, found in pairs.items():
        seen = Counter(side for pair in found for side in pair)
        directed = [(a, b) if seen[a] > 1 >= seen[b] else (b, a) for a, b in found
                    if (seen[a] > 1) != (seen[b] > 1)]  # (original, simplification)
        originals, simple = [a for a, _ in directed], [b for _, b in directed]
        entropy_gap = model.entropy(simple) - model.entropy(originals)  # > 0: the original is more specific
        longer = np.array([len(tokenize(a)) - len(tokenize(b)) for a, b in directed])
        record[source] = {"pairs": len(found), "directed": len(directed),
                          "original_more_specific": 100.0 * float(np.mean(entropy_gap > 0)),
                          "original_longer": 100.0 * float(np.mean(longer > 0)),
                          "equal_length_pairs": int(np.sum(longer == 0)),
                          "original_more_specific_at_equal_length":
                              100.0 * float(np.mean(entropy_gap[longer == 0] > 0)) if np.any(longer == 0) else None}
    return record


def train_and_write(run: Run) -> Path:
    """Train ``run`` into runs/<name> (resumed if cut off) and write its ``best/`` model with the
    shipped unit into runs/<name>/shipped-unit; returns that directory."""
    import probsent
    from probsent.export import export_model

    target = RUNS_DIR / run.name / "shipped-unit"
    if not target.is_dir():  # train (resumed if cut off), then write the shipped unit
        train(run)
        source = RUNS_DIR / run.name / "best"
        export_model(probsent.load(source), target, source=str(source.relative_to(REPO)), start_variance=shipped_unit())
    return target


def train_and_record(path: Path, runs: list[Run], judge: Callable[[Run, Path], dict[str, Any]]) -> None:
    """Train each run (:func:`train_and_write`), measure it with ``judge`` (its development record
    with its gains and missed floors) and add it to the round's record ``path``."""
    for run in runs:
        model_dir = train_and_write(run)
        record_measured(path, run, judge(run, model_dir))


def shipped_unit() -> float:
    """The start variance the shipped model was written with: its run's, as the shipped choice names it."""
    return design_run_named(json.loads(SHIPPED_CHOICE.read_text(encoding="utf-8"))["run"]).flags["start_variance"]


def select(record: dict[str, Any], names: list[str], finalist_count: int = FINALISTS,
           ship_margin: float = SHIP_MARGIN) -> None:
    """The choice, into ``record``: the finalists (the best ``finalist_count`` of the candidates
    ``names`` that pass, by seed-1 C), the three-seed mean C of each finalist whose seeds are all
    recorded and pass, the winner (the highest) and whether it ships (at least ``ship_margin``)."""
    scored = {run: {**r, "score": r["gains"]["C"]} for run, r in record["runs"].items()}
    record["finalists"] = finalists(scored, names, finalist_count)
    seeds = {n: [seed_name(n, s) for s in SEEDS] for n in record["finalists"]}
    complete = {n: runs for n, runs in seeds.items() if all(r in scored for r in runs)}
    record["three_seed_C"] = seed_means(scored, complete)
    record["winner"] = choose(scored, complete)
    record["ships"] = bool(record["winner"]) and record["three_seed_C"][record["winner"]] >= ship_margin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--round", choices=sorted(REPRESENTATION_ROUNDS))
    parser.add_argument("--stage", choices=("reference", "direction", "diagnostic", "dev", "seeds", "select", "test",
                                            "similarity-parts"),
                        required=True)
    parser.add_argument("--only", metavar="NAME", help="with --stage dev or seeds: train and measure one run")
    args = parser.parse_args(argv)
    if args.stage == "reference":
        return write_and_show(REFERENCE, reference_record())
    if args.stage == "direction":  # round B's diagnostic, before its entry
        return write_and_show(DIRECTION_DIAGNOSTIC, direction_diagnostic(SHIPPED))
    if args.round is None:
        parser.error(f"--stage {args.stage} needs --round")
    round_ = REPRESENTATION_ROUNDS[args.round]
    path = RECORDS / f"representation-round{round_.number}.json"
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
    if args.stage == "similarity-parts":  # after the seed-1 records: what each candidate did to its own similarity
        # the seed-1 candidates that trained the model's own similarity (not another training distance)
        own = [run for run, measured in record.get("runs", {}).items() if run in {r.name for r in round_.candidates}
               and measured["flags"].get("similarity_distance", "own") == "own"]
        models = {"shipped": SHIPPED, **{run: RUNS_DIR / run / "shipped-unit" for run in own}}
        record["similarity_parts"] = {name: own_similarity_parts(model_dir) for name, model_dir in models.items()
                                      if model_dir.is_dir()}
        write_json(path, record)
        print(json.dumps(record["similarity_parts"], indent=1))
        return 0
    if args.stage == "diagnostic":
        record["diagnostic"] = {"model": SHIPPED.relative_to(REPO).as_posix(),
                                "measures": pooled_distance_diagnostic(SHIPPED)}
        write_json(path, record)
        print(json.dumps(record["diagnostic"], indent=1))
        return 0
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    if args.stage in ("dev", "seeds"):
        runs = (round_.candidates if args.stage == "dev"
                else [with_seed(r, s) for r in round_.candidates if r.name in record.get("finalists", []) for s in SEEDS])
        def judge(run: Run, model_dir: Path) -> dict[str, Any]:
            measured = measure(model_dir)
            measured["gains"] = gains(measured, reference)
            measured["missed"] = floors(measured, reference, training_vocabulary_size(RUNS_DIR / run.name))
            return measured

        train_and_record(path, [run for run in runs if not args.only or run.name == args.only], judge)
    if args.stage == "select":
        record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
        select_stage(path, record, [r.name for r in round_.candidates], select)
    if args.stage == "test":
        from reproduction.experiments.ship_rule import test_measures

        tested = {}
        for name in record.get("finalists", []):
            for run in [name, *(seed_name(name, s) for s in SEEDS)]:
                if (RUNS_DIR / run / "shipped-unit").is_dir():
                    tested[run] = test_measures(RUNS_DIR / run / "shipped-unit")
        write_json(RECORDS / f"representation-round{round_.number}-test.json", tested)
        print(json.dumps(tested, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
