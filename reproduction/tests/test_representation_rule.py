"""The representation rule (experiments/representation_rule.py: similarity and entailment from
the same Gaussians, issue 34) on hand-computed cases: the noise units, the gains C, every floor,
and the choice among finalists."""
from __future__ import annotations

import json
import math

import pytest

from reproduction.experiments import representation_rule as rule
from reproduction.experiments.design_rounds import REPRESENTATION_ROUNDS
from reproduction.experiments.paths import REPO

REFERENCE = {
    "shipped": {"news_length_groups": 66.0, "equal_length": 100.0, "one_word_explain": 80.0, "shorter_specific": 95.0,
                "stsb_dev_concat": 69.0},
    "mean": {"stsb_dev_concat": 68.0},
    "sd": {"news_length_groups": 0.5, "equal_length": 0.0, "one_word_explain": 2.0, "shorter_specific": 1.0,
           "stsb_dev_concat": 2.0},
    "snli_dev": {"entailment": 72.0, "neutral": 50.0, "contradiction": 60.0,
                 "n": {"entailment": 100, "neutral": 200, "contradiction": 150}},
}


def candidate(**changes):
    record = {"vocabulary": 50_001, "sts17": 0.74, "stsb_dev_concat": 70.0, "news_length_groups": 66.0,
              "equal_length": 100.0, "one_word_explain": 79.0, "shorter_specific": 95.0, "news_train": 69.0,
              "information_content_news_train": 68.5,
              "snli_dev": {"entailment": 76.49, "neutral": 50.0, "contradiction": 60.0}}
    snli = changes.pop("snli_dev", {})
    record.update(changes)
    record["snli_dev"] = {**record["snli_dev"], **snli}
    return record


def test_noise_units_and_gains_by_hand() -> None:
    u_e = 100 * math.sqrt(0.72 * 0.28 / 100)  # 4.49
    assert rule.noise_units(REFERENCE) == pytest.approx({"stsb": 2.0, "entailment": u_e})
    gains = rule.gains(candidate(), REFERENCE)
    assert gains["stsb"] == pytest.approx((70.0 - 68.0) / 2.0)
    assert gains["entailment"] == pytest.approx((76.49 - 72.0) / u_e)
    assert gains["C"] == pytest.approx(0.5 * (1.0 + (76.49 - 72.0) / u_e))
    assert rule.direction_noise(REFERENCE) == pytest.approx(100 * math.sqrt(0.72 * 0.28 / 100 + 0.5 * 0.5 / 200))


def test_a_candidate_within_every_floor_passes() -> None:
    assert rule.floors(candidate(), REFERENCE, 50_001) == []


@pytest.mark.parametrize("changes, missed", [
    ({"vocabulary": 40_000}, "vocabulary"),
    ({"sts17": 0.69}, "STS 2017"),
    ({"stsb_dev_concat": 54.0}, "STS-B dev concat"),
    ({"one_word_explain": 77.9}, "one_word_explain"),  # 80 less its sd 2
    ({"equal_length": 99.9}, "equal_length"),  # sd 0: the value itself
    ({"news_train": 68.5}, "information content"),  # strictly above
    ({"stsb_dev_concat": 65.9}, "stsb gain"),  # (65.9 - 68) / 2 < -1
    ({"snli_dev": {"entailment": 67.0}}, "entailment gain"),
    ({"snli_dev": {"neutral": 63.0}}, "entailment - neutral"),  # every hypothesis less specific: a shift
])
def test_each_floor_refuses_by_name(changes, missed) -> None:
    found = rule.floors(candidate(**changes), REFERENCE, 50_001)
    assert len(found) >= 1 and any(missed in line for line in found), found


def test_every_candidate_of_round_a_departs_from_the_shipped_models_recipe_by_named_options() -> None:
    # the recipe the shipped model recorded it was trained with (its config.json), not the rounds' own constant
    recorded = json.loads((REPO / "probsent" / "pretrained" / "wlo" / "config.json").read_text())["training"]["config"]
    assert rule.shipped_unit() == 0.015625  # round 4's pre-registered unit (results/shipped/choice.json's run)
    for run in REPRESENTATION_ROUNDS["A"].candidates:
        changed = {k for k in ("model", "hardness_cap", "rarity_init", "rarity_anchor", "similarity_distance")
                   if run.flags.get(k, recorded.get(k, "own")) != recorded.get(k, "own")}
        assert changed and changed <= {"similarity_distance", "model", "rarity_anchor"}, (run.name, changed)
        assert run.flags["engine"] == "torch" and run.flags["rarity_init"] == recorded["rarity_init"]


def test_the_choice_among_finalists_by_hand() -> None:
    def run(c: float, missed: tuple[str, ...] = ()) -> dict:
        return {"gains": {"C": c}, "missed": list(missed)}

    runs = {"a": run(0.9), "b": run(2.0, ("news-train",)), "c": run(0.5), "d": run(0.1)}
    record = {"runs": dict(runs)}
    rule.select(record, ["a", "b", "c", "d"])  # b fails a floor: a and c are the finalists
    assert record["finalists"] == ["a", "c"][:rule.FINALISTS]
    assert record["three_seed_C"] == {} and record["winner"] is None and not record["ships"]  # no seeds yet
    # a's seeds: 0.9, 0.3, 0.3 (mean 0.5); c's: 0.5, 0.8, 0.8 (mean 0.7): c wins, and ships if 0.7 is enough
    record["runs"].update({"a-seed2": run(0.3), "a-seed3": run(0.3), "c-seed2": run(0.8), "c-seed3": run(0.8)})
    rule.select(record, ["a", "b", "c", "d"])
    assert record["three_seed_C"] == pytest.approx({"a": 0.5, "c": 0.7})
    assert record["winner"] == "c" and record["ships"] == (0.7 >= rule.SHIP_MARGIN)
    record["runs"]["c-seed3"] = run(0.8, ("equal_length",))  # a seed below a floor: c is out
    rule.select(record, ["a", "b", "c", "d"])
    assert record["winner"] == "a" and record["three_seed_C"] == pytest.approx({"a": 0.5})
