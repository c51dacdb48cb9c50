"""Issue 41's rule and its design rounds: an entropy that reads how specific English is.

The rule is docs/EXPERIMENTS.md's section "Generality rounds" (committed before any run): the
shipped model's development numbers kept within its recipe's seed sd, and a choice by C, the mean
gain in noise units of SNLI dev equal-length entailment and of the WordNet development pairs of
*unseen* words (both words outside the half the generality targets were fitted on), over all such
pairs and over those whose general word is the rarer in English.

    python -m experiments.generality_rule --stage diagnostic          # the shipped model, dev only
    python -m experiments.generality_rule --stage targets             # each word list alone, before training
    python -m experiments.generality_rule --round G1 --stage dev      # train the candidates (seed 1)
    python -m experiments.generality_rule --round G1 --stage seeds    # seeds 2-3 of the finalist
        [--every-candidate]   # or of every candidate, beside seed 1 (only the finalist's count)
    python -m experiments.generality_rule --round G1 --stage select   # the choice (dev numbers only)
    python -m experiments.generality_rule --round G1 --stage test     # test sets, once per finalist

The rounds are data files (``experiments/design_rounds/design_G<N>.py``, in ``GENERALITY_ROUNDS``).
The reference is the shipped model and its recipe's three seeds as issue 34's rule recorded them
(``results/design/representation-reference.json``, development numbers only).
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from experiments.design_rounds import GENERALITY_ROUNDS
from experiments.generality_targets import held_out
from experiments.paths import REPO, RUNS_DIR, SHIPPED
from experiments.representation_rule import (REFERENCE, direction_floor, measure, select as choose_finalists,
                                             specificity_floors, train_and_record)
from experiments.ship_rule import RECORDS, shared_floors, training_vocabulary_size
from experiments.plan import Run
from experiments.stage_helpers import SEEDS, seed_name, select_stage, with_seed, write_and_show
from probsent.files.atomic_writes import write_json

DIAGNOSTIC = RECORDS / "generality-diagnostic.json"
MOST_LOSS = -1.0  # a floor: no gain (noise units) below this
FINALISTS = 1  # the best this many seed-1 candidates that pass get seeds 2 and 3
SHIP_MARGIN = 0.5  # the winner's three-seed mean C must reach this to ship
CHOICE = ("snli_dev_entailment", "wordnet_dev_unseen", "wordnet_dev_unseen_general_rarer")
GOALS = {"wordnet_test": 75.0, "wordnet_test_general_rarer": 60.0, "snli_test_entailment": 72.0,
         "snli_test_other": (45.0, 60.0), "news": 77.4}


def generality_measures(model: Any) -> dict[str, Any]:
    """The WordNet development numbers (%, and pair counts): every dev pair with both words in the
    model's vocabulary, and those whose two words are both unseen by the generality fit."""
    from probsent.evaluation.datasets import as_data_dir
    from probsent.evaluation.generality import model_generality
    from probsent.evaluation.wordnet import hypernym_pairs

    dev = [pair for pair in hypernym_pairs(as_data_dir(None)) if pair.half == "dev"]
    unseen = [pair for pair in dev if held_out(pair.specific) and held_out(pair.general)]
    every, unseen_only = model_generality(model, dev), model_generality(model, unseen)
    return {"wordnet_dev": every.dev.model, "wordnet_dev_general_rarer": every.dev_general_rarer.model,
            "wordnet_dev_unseen": unseen_only.dev.model,
            "wordnet_dev_unseen_general_rarer": unseen_only.dev_general_rarer.model,
            "wordnet_n": {"dev": every.dev.n, "dev_general_rarer": every.dev_general_rarer.n,
                          "dev_unseen": unseen_only.dev.n, "dev_unseen_general_rarer": unseen_only.dev_general_rarer.n},
            "wordnet_dev_unseen_baselines": {
                "all": {k: v for k, v in unseen_only.dev.__dict__.items() if k not in ("n", "model")},
                "general_rarer": {k: v for k, v in unseen_only.dev_general_rarer.__dict__.items()
                                  if k not in ("n", "model")}}}


def rule_measures(model_dir: Path) -> dict[str, Any]:
    """Every development number the rule reads, for one model directory."""
    import probsent

    record = measure(model_dir)  # issue 34's: the specificity measures, STS, SNLI dev, news-train, IC
    record["snli_dev_entailment"] = record["snli_dev"]["entailment"]
    record.update(generality_measures(probsent.load(model_dir)))
    return record


def noise_unit(share: float, pairs: int) -> float:
    """The binomial sd of a share (%) of ``pairs`` pairs, in points."""
    p = share / 100.0
    return 100.0 * math.sqrt(p * (1.0 - p) / pairs)


def units(diagnostic: dict[str, Any]) -> dict[str, float]:
    """Each chosen measure's noise unit: the binomial sd of the shipped model's share."""
    shipped = diagnostic["shipped"]
    pairs = {"snli_dev_entailment": shipped["snli_dev"]["n"]["entailment"],
             "wordnet_dev_unseen": shipped["wordnet_n"]["dev_unseen"],
             "wordnet_dev_unseen_general_rarer": shipped["wordnet_n"]["dev_unseen_general_rarer"]}
    return {name: noise_unit(shipped[name], pairs[name]) for name in CHOICE}


def gains(record: dict[str, Any], diagnostic: dict[str, Any]) -> dict[str, float]:
    """Each chosen measure's gain over the shipped model in noise units, and their mean, C."""
    unit = units(diagnostic)
    gained = {name: (record[name] - diagnostic["shipped"][name]) / unit[name] for name in CHOICE}
    return {**gained, "C": sum(gained.values()) / len(CHOICE)}


def floors(record: dict[str, Any], diagnostic: dict[str, Any], reference: dict[str, Any],
           trained_vocabulary: int) -> list[str]:
    """The rule's floors a candidate misses (empty: it may ship)."""
    missed = shared_floors(record, trained_vocabulary) + specificity_floors(record, reference)
    stsb_floor = reference["shipped"]["stsb_dev_concat"] - reference["sd"]["stsb_dev_concat"]
    if not record["stsb_dev_concat"] >= stsb_floor:
        missed.append(f"STS-B dev concat {record['stsb_dev_concat']:.1f} < {stsb_floor:.1f}")
    for name, gain in gains(record, diagnostic).items():
        if name != "C" and gain < MOST_LOSS:
            missed.append(f"{name} gain {gain:.2f} < {MOST_LOSS:g} noise unit")
    return missed + direction_floor(record, reference)


def select(record: dict[str, Any], names: list[str]) -> None:
    """The choice, into ``record``: issue 34's rule's choice with this rule's finalist count and margin."""
    choose_finalists(record, names, FINALISTS, SHIP_MARGIN)


def test_record(model_dir: Path) -> dict[str, Any]:
    """The test sets, once, for one finalist's model: the four specificity sets, STS-B test, SNLI
    test per label and the WordNet test half (all pairs and pairs of unseen words)."""
    import probsent
    from probsent.evaluation.datasets import as_data_dir
    from probsent.evaluation.generality import model_generality
    from probsent.evaluation.tables import snli_entailment
    from probsent.evaluation.wordnet import hypernym_pairs
    from experiments.ship_rule import test_measures

    model = probsent.load(model_dir)
    test = [pair for pair in hypernym_pairs(as_data_dir(None)) if pair.half == "test"]
    every = model_generality(model, test)
    unseen = model_generality(model, [p for p in test if held_out(p.specific) and held_out(p.general)])
    return {**test_measures(model_dir), "snli_test": snli_entailment(model, as_data_dir(None)).__dict__,
            "wordnet_test": every.test.__dict__, "wordnet_test_general_rarer": every.test_general_rarer.__dict__,
            "wordnet_test_unseen": unseen.test.__dict__,
            "wordnet_test_unseen_general_rarer": unseen.test_general_rarer.__dict__}


TARGETS_DIAGNOSTIC = RECORDS / "generality-targets-diagnostic.json"


def targets_diagnostic() -> dict[str, Any]:
    """Each word list alone, before any training (development sets only): every vocabulary word of the
    shipped model scored by its list's log frequency (lower = more specific; a word the list does not
    name keeps its log training count, ``<unk>`` the rarest kept word's), read on the WordNet dev pairs of
    unseen words and on the one-word explain set (the word of lowest value named most specific)."""
    import numpy as np
    import probsent
    import wordfreq
    from probsent.data.corpus import load_corpus
    from probsent.evaluation.datasets import as_data_dir
    from probsent.evaluation.generality import share_right
    from probsent.evaluation.length_controlled import ONE_WORD, load_one_word
    from probsent.evaluation.wordnet import hypernym_pairs
    from probsent.text.tokenize import tokenize
    from experiments.generality_targets import EMPTY_TARGETS, TARGETS_DIR
    from experiments.plan import PAIRS

    words = probsent.load(SHIPPED).vocab.words[1:]
    corpus = load_corpus(REPO / PAIRS, progress=False)
    counts = dict(zip(corpus.words, corpus.counts.tolist()))
    trained = {w: float(np.log(max(counts.get(w, 1), 1))) for w in words}
    rarest = trained[words[-1]]
    pairs = [p for p in hypernym_pairs(as_data_dir(None)) if p.half == "dev" and p.specific in trained
             and p.general in trained and held_out(p.specific) and held_out(p.general)]
    rarer = np.array([wordfreq.word_frequency(p.general, "en") < wordfreq.word_frequency(p.specific, "en")
                      for p in pairs])
    sentences, marked = load_one_word(ONE_WORD)
    lists = {"training counts": None, **{path.name: path for path in sorted(TARGETS_DIR.glob("*.tsv"))
                                         if path != EMPTY_TARGETS}}
    record: dict[str, Any] = {}
    for name, path in lists.items():
        values = dict(trained)
        if path is not None:
            for line in path.read_text(encoding="utf-8").splitlines():
                if line and not line.startswith("#"):
                    word, value = line.split("\t")
                    values[word] = float(value)
        value = lambda w: values.get(w, rarest)  # noqa: E731
        specific = -np.array([value(p.specific) for p in pairs])
        general = -np.array([value(p.general) for p in pairs])
        hits = [min(tokenize(sentence), key=value) == word for sentence, word in zip(sentences, marked)]
        record[name] = {"wordnet_dev_unseen": share_right(specific, general),
                        "wordnet_dev_unseen_general_rarer": share_right(specific[rarer], general[rarer]),
                        "one_word_explain": 100.0 * float(np.mean(hits))}
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--round", choices=sorted(GENERALITY_ROUNDS))
    parser.add_argument("--stage", choices=("diagnostic", "targets", "dev", "seeds", "select", "test"), required=True)
    parser.add_argument("--only", metavar="NAME", help="with --stage dev or seeds: train and measure one run")
    parser.add_argument("--every-candidate", action="store_true",
                        help="with --stage seeds: seeds 2-3 of every candidate, trained beside seed 1 before the "
                             "choice (only the finalist's count; round G2's entry says why)")
    args = parser.parse_args(argv)
    if args.stage == "diagnostic":
        return write_and_show(DIAGNOSTIC, {"model": SHIPPED.relative_to(REPO).as_posix(), "shipped": rule_measures(SHIPPED)})
    if args.stage == "targets":
        return write_and_show(TARGETS_DIAGNOSTIC, targets_diagnostic())
    if args.round is None:
        parser.error(f"--stage {args.stage} needs --round")
    round_ = GENERALITY_ROUNDS[args.round]
    path = RECORDS / f"generality-round{round_.number}.json"
    diagnostic = json.loads(DIAGNOSTIC.read_text(encoding="utf-8"))
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))

    def current() -> dict[str, Any]:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}

    if args.stage in ("dev", "seeds"):
        runs = (round_.candidates if args.stage == "dev"
                else [with_seed(r, s) for r in round_.candidates
                      if args.every_candidate or r.name in current().get("finalists", []) for s in SEEDS])
        def judge(run: Run, model_dir: Path) -> dict[str, Any]:
            measured = rule_measures(model_dir)
            measured["gains"] = gains(measured, diagnostic)
            measured["missed"] = floors(measured, diagnostic, reference, training_vocabulary_size(RUNS_DIR / run.name))
            return measured

        train_and_record(path, [run for run in runs if not args.only or run.name == args.only], judge)
    record = current()
    if args.stage == "select":
        select_stage(path, record, [r.name for r in round_.candidates], select)
    if args.stage == "test":
        tested = {run: test_record(RUNS_DIR / run / "shipped-unit")
                  for name in record.get("finalists", []) for run in [name, *(seed_name(name, s) for s in SEEDS)]
                  if (RUNS_DIR / run / "shipped-unit").is_dir()}
        write_json(RECORDS / f"generality-round{round_.number}-test.json", tested)
        print(json.dumps(tested, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
