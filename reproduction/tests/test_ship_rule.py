"""The ship rule's floors and choice, on hand-made development records, and its stages."""
import json

import pytest

from reproduction.experiments import ship_rule as sr
from reproduction.experiments.design_rounds import DESIGN_ROUNDS
from reproduction.experiments.stage_helpers import with_seed


def record(score, sts17=0.75, stsb=60.0, equal=85.0, vocabulary=1000, missed=None):
    made = {"score": score, "sts17": sts17, "stsb_dev_concat": stsb, "equal_length": equal, "vocabulary": vocabulary}
    made["missed"] = sr.floors(made, 81.0, 1000) if missed is None else missed
    return made


def test_each_floor_is_named_when_missed():
    assert record(50.0)["missed"] == []
    assert record(50.0, vocabulary=999)["missed"] == ["vocabulary 999 < 1000 trained"]
    assert record(50.0, sts17=0.69)["missed"] == ["STS 2017 0.690 < 0.7"]
    assert record(50.0, stsb=54.9)["missed"] == ["STS-B dev concat 54.9 < 55.0"]
    assert record(50.0, equal=80.0)["missed"] == ["equal-length 80.0 < shipped 81.0"]
    assert len(record(50.0, sts17=float("nan"), stsb=float("nan"))["missed"]) == 2  # NaN never passes


def test_finalists_are_the_best_two_that_pass():
    records = {"a": record(60.0), "b": record(70.0, sts17=0.6), "c": record(55.0), "d": record(50.0)}
    assert sr.finalists(records, ["a", "b", "c", "d"]) == ["a", "c"]


def test_the_winner_has_the_best_seed_mean_among_finalists_whose_seeds_all_pass():
    records = {"a": record(60.0), "a-seed2": record(50.0), "a-seed3": record(52.0),
               "c": record(55.0), "c-seed2": record(56.0), "c-seed3": record(57.0)}
    seeds = {"a": ["a-seed2", "a-seed3"], "c": ["c-seed2", "c-seed3"]}
    assert sr.choose(records, seeds) == "c"  # 56.0 against 54.0
    records["c-seed3"] = record(57.0, equal=70.0)
    assert sr.choose(records, seeds) == "a"
    records["a-seed2"] = record(50.0, stsb=10.0)
    assert sr.choose(records, seeds) is None


def test_a_round_may_choose_by_another_development_number():
    records = {"a": record(60.0, stsb=60.0), "a-seed2": record(60.0, stsb=61.0), "a-seed3": record(60.0, stsb=62.0),
               "c": record(70.0, stsb=58.0), "c-seed2": record(70.0, stsb=57.0), "c-seed3": record(70.0, stsb=56.0)}
    seeds = {"a": ["a-seed2", "a-seed3"], "c": ["c-seed2", "c-seed3"]}
    assert sr.choose(records, seeds) == "c"  # by the rule's score
    assert sr.choose(records, seeds, "stsb_dev_concat") == "a"  # 61.0 against 57.0
    records["a-seed2"] = record(60.0, stsb=50.0)  # a floor missed: never chosen, whatever the key
    assert sr.choose(records, seeds, "stsb_dev_concat") == "c"


def test_seed_runs_change_only_the_seed_and_name():
    base = DESIGN_ROUNDS[1].candidates[0]
    seeded = with_seed(base, 2)
    assert seeded.name == f"{base.name}-seed2" and seeded.flags == {**base.flags, "seed": 2}


def test_reproducing_runs_every_round_then_tests_and_ships_the_last_winner(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(sr, "RECORDS", tmp_path)
    monkeypatch.setattr(sr, "main", lambda argv: calls.append(tuple(argv[1::2])))
    for number in DESIGN_ROUNDS:  # only the last round has a winner
        winner = "d-last" if number == max(DESIGN_ROUNDS) else None
        (tmp_path / f"round{number}.json").write_text(json.dumps({"runs": {}, "winner": winner}))
    sr.reproduce_shipped()
    rounds = [str(n) for n in sorted(DESIGN_ROUNDS)]
    expected = [(n, stage) for n in rounds for stage in ("dev", "seeds", "select")]
    ablations = [(str(n), "ablation") for n in sorted(DESIGN_ROUNDS) if DESIGN_ROUNDS[n].ablation is not None]
    assert ablations  # round 3's
    assert calls == expected + [(rounds[-1], "test"), (rounds[-1], "ship")] + ablations


def test_a_diagnostic_stage_reads_the_runs_the_rounds_data_file_names(tmp_path, monkeypatch, capsys):
    read = []
    monkeypatch.setattr(sr, "DIAGNOSTIC_RECORDS", {"rarity": tmp_path / "rarity.json",
                                                   "similarity": tmp_path / "similarity.json"})
    monkeypatch.setattr(sr, "similarity_diagnostic", lambda model_dir: read.append(model_dir) or {"concat": 1.0})
    monkeypatch.setattr(sr, "rarity_diagnostic", lambda model_dir, weight: read.append((model_dir, weight)) or {})
    named = {number: round_.diagnostic_runs for number, round_ in DESIGN_ROUNDS.items() if round_.diagnostic_runs}
    assert named  # rounds 3 and 4 name theirs
    for number, runs in named.items():
        for stage, names in runs.items():
            read.clear()
            assert sr.main(["--round", str(number), "--stage", stage]) == 0
            record = json.loads((tmp_path / f"{stage}.json").read_text())
            if stage == "similarity":
                assert sorted(record) == sorted(names) and [p.parent.name for p in read] == list(names)
            else:  # one run, at the rarity weight it was started from
                (model_dir, weight), = read
                assert record["model"] == f"runs/{names[0]}/best" == f"runs/{model_dir.parent.name}/best"
                assert weight == record["rarity_weight"] == 0.3  # the pre-registered --rarity-init
    capsys.readouterr()
    without = min(n for n, round_ in DESIGN_ROUNDS.items() if "similarity" not in round_.diagnostic_runs)
    with pytest.raises(SystemExit, match=f"design round {without} names no runs for --stage similarity"):
        sr.main(["--round", str(without), "--stage", "similarity"])


def test_the_ablation_stage_trains_the_seeds_of_the_run_the_round_names(tmp_path, monkeypatch, capsys):
    trained = []
    monkeypatch.setattr(sr, "RECORDS", tmp_path)
    monkeypatch.setattr(sr, "PREVIOUSLY_SHIPPED", tmp_path / "shipped.json")
    (tmp_path / "shipped.json").write_text(json.dumps({"equal_length": 81.0}))
    monkeypatch.setattr(sr, "train", trained.append)
    monkeypatch.setattr(sr, "dev_measures", lambda best: record(50.0, vocabulary=1000))
    monkeypatch.setattr(sr, "training_vocabulary_size", lambda run_dir: 1000)
    monkeypatch.setattr(sr, "last_diagnostics", lambda run_dir: {"step": 1})
    number, round_ = next((n, r) for n, r in DESIGN_ROUNDS.items() if r.ablation is not None)
    assert sr.main(["--round", str(number), "--stage", "ablation"]) == 0
    base = sr.design_run_named(round_.ablation)
    assert [(run.name, run.flags) for run in trained] == [(f"{base.name}-seed{s}", {**base.flags, "seed": s})
                                                          for s in (2, 3)]
    written = json.loads((tmp_path / f"round{number}.json").read_text())
    assert sorted(written["ablation"]) == [run.name for run in trained] and written["runs"] == {}
    capsys.readouterr()
    without = min(n for n, r in DESIGN_ROUNDS.items() if r.ablation is None)
    with pytest.raises(SystemExit, match=f"round {without} names no ablation run"):
        sr.main(["--round", str(without), "--stage", "ablation"])
