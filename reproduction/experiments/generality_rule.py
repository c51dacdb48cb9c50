"""Issue 41's rule and its design rounds: an entropy that reads how specific English is.

The rule is docs/EXPERIMENTS.md's section "Generality rounds" (committed before any run): the
shipped model's development numbers kept within its recipe's seed sd, and a choice by C, the mean
gain in noise units of SNLI dev equal-length entailment and of the WordNet development pairs of
*unseen* words (both words outside the half the generality targets were fitted on), over all such
pairs and over those whose general word is the rarer in English.

    python -m reproduction.experiments.generality_rule --stage diagnostic          # the shipped model, dev only
    python -m reproduction.experiments.generality_rule --round G1 --stage select   # the choice (dev numbers only)

The rounds G1 and G2 trained their candidates with ``--rarity-from``; neither had a winner and the
option left probsent (issue 49), with the stages that trained and tested them (``targets``, ``dev``,
``seeds``, ``test``): they run at commit ``9701be6`` (``git checkout 9701be6``). Their records stay.
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

from reproduction.experiments.design_rounds import GENERALITY_ROUNDS
from reproduction.experiments.generality_halves import held_out
from reproduction.experiments.paths import REPO, SHIPPED
from reproduction.experiments.representation_rule import (REFERENCE, direction_floor, measure, select as choose_finalists,
                                             specificity_floors)
from reproduction.experiments.ship_rule import RECORDS, shared_floors
from reproduction.experiments.stage_helpers import select_stage, write_and_show

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
    from reproduction.evaluation.datasets import as_data_dir
    from reproduction.evaluation.generality import model_generality
    from reproduction.evaluation.wordnet import hypernym_pairs

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--round", choices=sorted(GENERALITY_ROUNDS))
    parser.add_argument("--stage", choices=("diagnostic", "select"), required=True)
    args = parser.parse_args(argv)
    if args.stage == "diagnostic":
        return write_and_show(DIAGNOSTIC, {"model": SHIPPED.relative_to(REPO).as_posix(), "shipped": rule_measures(SHIPPED)})
    if args.round is None:
        parser.error(f"--stage {args.stage} needs --round")
    round_ = GENERALITY_ROUNDS[args.round]
    path = RECORDS / f"generality-round{round_.number}.json"
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
    select_stage(path, record, [r.name for r in round_.candidates], select)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
