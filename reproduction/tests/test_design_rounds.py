"""The design rounds are data (experiments/design_rounds/design_<N>.py), the ship rule's, the
representation rule's and the generality rule's: their candidates are the runs their committed
records measured, their diagnostic records read the runs they name, and no code module of
experiments/ names a design round's run."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reproduction.experiments.design_rounds import DESIGN_ROUNDS, GENERALITY_ROUNDS, REPRESENTATION_ROUNDS
from reproduction.experiments.representation_rule import REFERENCE, SHIPPED_CHOICE
from reproduction.experiments.ship_rule import DIAGNOSTIC_RECORDS, RECORDS
from reproduction.experiments.stage_helpers import SEEDS, seed_name, with_seed

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"  # reproduction/experiments
DATA = EXPERIMENTS / "design_rounds"  # the design rounds' data files and the recipes they start from
# each round and its record: the ship rule's results/design/round<N>.json, the representation
# rule's results/design/representation-round<letter>.json, the generality rule's generality-round<name>.json
EVERY_ROUND = [*((r, RECORDS / f"round{n}.json") for n, r in DESIGN_ROUNDS.items()),
               *((r, RECORDS / f"representation-round{n}.json") for n, r in REPRESENTATION_ROUNDS.items()),
               *((r, RECORDS / f"generality-round{n}.json") for n, r in GENERALITY_ROUNDS.items())]


def _flags(run) -> dict:
    """A run's flags as a round's record holds them (the defaults left out, through JSON)."""
    return json.loads(json.dumps({k: v for k, v in run.flags.items() if v is not None}))


def test_every_design_round_is_a_data_file_with_its_protocol_commit():
    keys = sorted([*map(str, DESIGN_ROUNDS), *REPRESENTATION_ROUNDS, *GENERALITY_ROUNDS])
    assert sorted(f"design_{key}.py" for key in keys) == sorted(path.name for path in DATA.glob("design_*.py"))
    for number, round_ in [*DESIGN_ROUNDS.items(), *REPRESENTATION_ROUNDS.items(), *GENERALITY_ROUNDS.items()]:
        assert round_.number == number
        assert re.fullmatch(r"[0-9a-f]{7,40}", round_.protocol_commit), number
        names = [run.name for run in round_.candidates]
        assert len(names) == len(set(names))
        assert {name for pair in round_.compared() for name in pair} <= set(_every_run_name())
        assert round_.diagnostic is None or round_.diagnostic in round_.diagnostic_runs
        assert set(round_.diagnostic_runs) <= set(DIAGNOSTIC_RECORDS)


def test_the_data_files_give_the_runs_the_committed_records_measured():
    """Each candidate, its finalists' seeds and its ablation's seeds carry the flags recorded in
    the round's record when the round was run (a round registered and not run yet has none)."""
    for round_, record_path in EVERY_ROUND:
        if not record_path.is_file():
            continue
        runs = json.loads(record_path.read_text(encoding="utf-8"))
        for run in round_.candidates:
            # a ship-rule round's record holds every candidate; a representation round's fills in run by run
            if run.name in runs["runs"] or round_.number in DESIGN_ROUNDS:
                assert _flags(run) == runs["runs"][run.name]["flags"], run.name
        for name in runs.get("finalists", []):
            base = next(run for run in round_.candidates if run.name == name)
            for seed in SEEDS:
                assert _flags(with_seed(base, seed)) == runs["runs"][seed_name(name, seed)]["flags"]
        if runs.get("ablation"):
            assert sorted(runs["ablation"]) == sorted(seed_name(round_.ablation, seed) for seed in SEEDS)


def test_the_diagnostic_records_are_of_the_runs_the_data_files_name():
    for round_ in DESIGN_ROUNDS.values():
        for stage, names in round_.diagnostic_runs.items():
            record = json.loads(DIAGNOSTIC_RECORDS[stage].read_text(encoding="utf-8"))
            if stage == "similarity":
                assert sorted(record) == sorted(names)
            else:
                assert [record["model"]] == [f"runs/{name}/best" for name in names]


def test_the_representation_reference_is_the_shipped_runs_three_seeds():
    choice = json.loads(SHIPPED_CHOICE.read_text(encoding="utf-8"))
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert reference["recipe_seeds"] == [choice["run"], *(seed_name(choice["run"], seed) for seed in SEEDS)]


def _every_run_name() -> list[str]:
    return [run.name for round_, _ in EVERY_ROUND for run in round_.candidates]


def test_no_code_module_names_a_design_rounds_run():
    """Run names live in the rounds' data files only: the rule, the stages and the report take
    them from there (a name inside a longer name, such as a seed run's, counts too)."""
    names = sorted(set(_every_run_name()), key=len, reverse=True)
    assert len(names) >= 10
    found = []
    for path in sorted(EXPERIMENTS.rglob("*.py")):
        if path.parent == DATA:
            continue
        source = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(EXPERIMENTS)}: {name}" for name in names
                  if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.])", source)]
    assert found == []


def test_the_representation_stages_take_a_rounds_candidates_from_its_data_file(tmp_path, monkeypatch):
    from reproduction.experiments import representation_rule as rr

    monkeypatch.setattr(rr, "RECORDS", tmp_path)  # no run recorded yet
    for letter, round_ in REPRESENTATION_ROUNDS.items():
        names = ", ".join(run.name for run in round_.candidates)
        with pytest.raises(SystemExit, match=f"representation-round{letter}.json: no record of {re.escape(names)}"):
            rr.main(["--round", letter, "--stage", "select"])
