"""The design rounds are data (experiments/design_rounds/design_<N>.py): their candidates are the
runs their committed records measured, their diagnostic records read the runs they name, and no
code module of experiments/ names a design round's run."""
from __future__ import annotations

import json
import re
from pathlib import Path

from experiments.design_rounds import DESIGN_ROUNDS
from experiments.ship_rule import DIAGNOSTIC_RECORDS, RECORDS
from experiments.stage_helpers import SEEDS, seed_name, with_seed

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
DATA_FILES = sorted((EXPERIMENTS / "design_rounds").glob("design_*.py"))


def _flags(run) -> dict:
    """A run's flags as a round's record holds them (the defaults left out, through JSON)."""
    return json.loads(json.dumps({k: v for k, v in run.flags.items() if v is not None}))


def test_every_design_round_is_a_data_file_with_its_protocol_commit():
    assert [f"design_{number}.py" for number in sorted(DESIGN_ROUNDS)] == [path.name for path in DATA_FILES]
    for number, round_ in DESIGN_ROUNDS.items():
        assert round_.number == number
        assert re.fullmatch(r"[0-9a-f]{7,40}", round_.protocol_commit), number
        names = [run.name for run in round_.candidates]
        assert len(names) == len(set(names))
        assert {name for pair in round_.compared() for name in pair} <= set(_every_run_name())
        assert round_.diagnostic is None or round_.diagnostic in round_.diagnostic_runs
        assert set(round_.diagnostic_runs) <= set(DIAGNOSTIC_RECORDS)


def test_the_data_files_give_the_runs_the_committed_records_measured():
    """Each candidate, its finalists' seeds and its ablation's seeds carry the flags recorded in
    results/design/round<N>.json when the round was run."""
    for number, round_ in DESIGN_ROUNDS.items():
        record_path = RECORDS / f"round{number}.json"
        if not record_path.is_file():
            continue  # registered, not run yet
        runs = json.loads(record_path.read_text(encoding="utf-8"))
        for run in round_.candidates:
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


def _every_run_name() -> list[str]:
    return [run.name for round_ in DESIGN_ROUNDS.values() for run in round_.candidates]


def test_no_code_module_names_a_design_rounds_run():
    """Run names live in the rounds' data files only: the rule, the stages and the report take
    them from there (a name inside a longer name, such as a seed run's, counts too)."""
    names = sorted(set(_every_run_name()), key=len, reverse=True)
    assert len(names) >= 10
    found = []
    for path in sorted(EXPERIMENTS.rglob("*.py")):
        if path in DATA_FILES:
            continue
        source = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(EXPERIMENTS)}: {name}" for name in names
                  if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.])", source)]
    assert found == []
