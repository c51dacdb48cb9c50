"""The generality rule (experiments/generality_rule.py, issue 41) on hand-computed cases: the
noise units, the gains C, every floor, the choice among finalists, and the word halves the
generality fit keeps apart."""
from __future__ import annotations

import json
import math

import pytest

from reproduction.experiments import generality_rule as rule
from reproduction.experiments.design_rounds import GENERALITY_ROUNDS
from reproduction.experiments.generality_halves import ANCHOR_HALF, held_out, word_half
from tests.helpers import REPO

REFERENCE = {  # the representation rule's reference record: the shipped model and its recipe's seed sds
    "shipped": {"news_length_groups": 66.0, "equal_length": 100.0, "one_word_explain": 80.0, "shorter_specific": 95.0,
                "stsb_dev_concat": 69.0},
    "sd": {"news_length_groups": 0.5, "equal_length": 0.0, "one_word_explain": 2.0, "shorter_specific": 1.0,
           "stsb_dev_concat": 2.0},
    "snli_dev": {"entailment": 72.0, "neutral": 50.0, "contradiction": 60.0,
                 "n": {"entailment": 100, "neutral": 200, "contradiction": 150}},
}
DIAGNOSTIC = {"shipped": {"snli_dev_entailment": 72.0, "wordnet_dev_unseen": 60.0,
                          "wordnet_dev_unseen_general_rarer": 25.0, "snli_dev": REFERENCE["snli_dev"],
                          "wordnet_n": {"dev_unseen": 2400, "dev_unseen_general_rarer": 300}}}


def candidate(**changes):
    record = {"vocabulary": 50_001, "sts17": 0.74, "stsb_dev_concat": 68.0, "news_length_groups": 66.0,
              "equal_length": 100.0, "one_word_explain": 79.0, "shorter_specific": 95.0,
              "snli_dev_entailment": 72.0, "wordnet_dev_unseen": 61.0, "wordnet_dev_unseen_general_rarer": 27.5,
              "snli_dev": {"entailment": 72.0, "neutral": 50.0, "contradiction": 60.0}}
    snli = changes.pop("snli_dev", {})
    record.update(changes)
    record["snli_dev"] = {**record["snli_dev"], **snli}
    record["snli_dev_entailment"] = record["snli_dev"]["entailment"]
    return record


def test_noise_units_and_gains_by_hand() -> None:
    units = {"snli_dev_entailment": 100 * math.sqrt(0.72 * 0.28 / 100),  # 4.49
             "wordnet_dev_unseen": 100 * math.sqrt(0.6 * 0.4 / 2400),  # 1.0
             "wordnet_dev_unseen_general_rarer": 100 * math.sqrt(0.25 * 0.75 / 300)}  # 2.5
    assert rule.units(DIAGNOSTIC) == pytest.approx(units)
    gains = rule.gains(candidate(), DIAGNOSTIC)
    assert gains["snli_dev_entailment"] == pytest.approx(0.0)
    assert gains["wordnet_dev_unseen"] == pytest.approx(1.0)
    assert gains["wordnet_dev_unseen_general_rarer"] == pytest.approx(1.0)
    assert gains["C"] == pytest.approx(2.0 / 3.0)


def test_a_candidate_within_every_floor_passes() -> None:
    assert rule.floors(candidate(), DIAGNOSTIC, REFERENCE, 50_001) == []


@pytest.mark.parametrize("changes, missed", [
    ({"vocabulary": 40_000}, "vocabulary"),
    ({"sts17": 0.69}, "STS 2017"),
    ({"one_word_explain": 77.9}, "one_word_explain"),  # 80 less its sd 2
    ({"equal_length": 99.9}, "equal_length"),  # sd 0: the value itself
    ({"shorter_specific": 93.9}, "shorter_specific"),
    ({"stsb_dev_concat": 66.9}, "STS-B dev concat 66.9 < 67.0"),  # 69 less its sd 2
    ({"wordnet_dev_unseen": 58.9}, "wordnet_dev_unseen gain"),  # more than one unit lost
    ({"snli_dev": {"entailment": 67.0}}, "snli_dev_entailment gain"),
    ({"snli_dev": {"neutral": 63.0}}, "entailment - neutral"),  # every hypothesis less specific: a shift
])
def test_each_floor_refuses_by_name(changes, missed) -> None:
    found = rule.floors(candidate(**changes), DIAGNOSTIC, REFERENCE, 50_001)
    assert len(found) >= 1 and any(missed in line for line in found), found


def test_the_choice_by_hand() -> None:
    def measured(c: float, missed: list[str] | None = None) -> dict:
        return {"gains": {"C": c}, "missed": missed or []}

    record = {"runs": {"a": measured(3.0), "b": measured(5.0, ["equal_length"]), "c": measured(2.0),
                       "a-seed2": measured(1.0), "a-seed3": measured(-1.0),
                       "c-seed2": measured(9.0), "c-seed3": measured(9.0)}}
    rule.select(record, ["a", "b", "c"])
    # b misses a floor; a has the best seed-1 C: the one finalist; c's seeds choose nothing
    assert record["finalists"] == ["a"]
    assert record["three_seed_C"] == {"a": pytest.approx(1.0)}
    assert record["winner"] == "a" and record["ships"] is True  # 1.0 >= 0.5
    record["runs"]["a-seed3"] = measured(-4.0)
    rule.select(record, ["a", "b", "c"])
    assert record["winner"] == "a" and record["ships"] is False  # mean 0.0 < 0.5
    record["runs"]["a-seed2"] = measured(1.0, ["one_word_explain"])
    rule.select(record, ["a", "b", "c"])
    assert record["winner"] is None and record["ships"] is False  # a seed misses a floor


def test_the_word_halves_are_fixed_and_apart() -> None:
    assert (word_half("animal"), word_half("w0")) == (1, 0)  # the pre-registered halves, pinned
    words = [f"w{i}" for i in range(1000)]
    assert 400 < sum(held_out(w) for w in words) < 600
    assert all(held_out(w) == (word_half(w) != ANCHOR_HALF) for w in words)


def test_every_candidate_departs_from_the_shipped_recipe_by_one_named_option() -> None:
    """Each candidate of rounds G1-G2 (history: they trained at commit 9701be6) is the shipped recipe
    with ``--rarity-from`` only, the option that left probsent when neither round had a winner."""
    from probsent.training import SETTINGS, TrainConfig

    shipped = json.loads((REPO / "probsent" / "pretrained" / "wlo" / "config.json").read_text())["training"]["config"]
    default = TrainConfig(data="x", out="y").to_dict()
    for round_ in GENERALITY_ROUNDS.values():
        for run in round_.candidates:
            changed = {k for k, v in run.flags.items() if shipped.get(k, default.get(k)) != v}
            assert changed == {"rarity_from"} and set(run.flags) - {"rarity_from"} <= set(SETTINGS), run.name
            assert "rarity_from" not in SETTINGS
