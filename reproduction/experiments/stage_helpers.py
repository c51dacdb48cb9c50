"""What the recipe rounds and the design rounds do to a run in the same way: train it again
with another seed, train it, and read its validation log's diagnostics.

The recipe study's rules are ``experiments/protocol.py``; the ship rule and its design rounds
are ``experiments/ship_rule.py``. Both train a chosen run again with :data:`SEEDS`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from reproduction.experiments.paths import RUNS_DIR
from reproduction.experiments.plan import Run
from reproduction.experiments.runner import run_probsent
from probsent.files.atomic_writes import write_json

SEEDS = (2, 3)  # the seeds a chosen run is trained again with (seed 1 is the run itself)
DIAGNOSTICS = ("term_count_spearman", "frequent_term", "negatives_sharing_more", "active_hinge",
               "prior_gradient_share")  # what moved inside the model, read from a run's last validation


def seed_name(name: str, seed: int, suffix: str = "") -> str:
    """The name of run ``name`` trained with another seed: ``<name><suffix>-seed<N>``."""
    return f"{name}{suffix}-seed{seed}"


def with_seed(run: Run, seed: int, suffix: str = "", **overrides: object) -> Run:
    """``run`` again with another seed (and ``overrides``), named by :func:`seed_name`."""
    return Run(seed_name(run.name, seed, suffix), run.group, {**run.flags, "seed": seed, **overrides},
               f"{run.note}; seed {seed}")


def train(run: Run, keep_going: bool = False) -> None:
    """``probsent train`` of one run into runs/<name>, its output in runs/<name>.log (a run cut
    off resumes; a finished one is left as it is). With ``keep_going``, a run that fails (one
    that diverges keeps its last validations) is reported and does not stop the caller."""
    print(run.name, flush=True)
    RUNS_DIR.mkdir(exist_ok=True)
    try:
        run_probsent(*run.train_args(f"runs/{run.name}"), log=RUNS_DIR / f"{run.name}.log")
    except SystemExit as failure:
        if not keep_going:
            raise
        print(failure, flush=True)


def record_measured(path: Path, run: Run, measured: dict[str, Any]) -> None:
    """Add ``run``'s development record (its ``gains`` and ``missed`` floors already in it) to the
    round's record ``path``, with its flags and its last validation's diagnostics; print the gist."""
    measured["flags"] = {k: v for k, v in run.flags.items() if v is not None}
    measured["diagnostics"] = last_diagnostics(RUNS_DIR / run.name)
    record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"runs": {}}
    record["runs"][run.name] = measured
    write_json(path, record)
    print(run.name, json.dumps({k: measured[k] for k in ("gains", "missed")}), flush=True)


def write_and_show(path: Path, record: Any) -> int:
    """Write a stage's record as JSON and print it; the stage's exit status (0)."""
    write_json(path, record)
    print(path.read_text(encoding="utf-8"))
    return 0


def select_stage(path: Path, record: dict[str, Any], names: list[str],
                 select: Callable[[dict[str, Any], list[str]], None]) -> None:
    """A round's ``--stage select``: every seed-1 candidate ``names`` must have a record; ``select``
    writes the choice into ``record``, which is saved to ``path`` and printed."""
    missing = [n for n in names if n not in record["runs"]]
    if missing:
        raise SystemExit(f"{path}: no record of {', '.join(missing)} (run --stage dev first)")
    select(record, names)
    write_json(path, record)
    print(json.dumps({k: record[k] for k in ("finalists", "three_seed_C", "winner", "ships")}, indent=1))


def validations(log: Path) -> list[dict[str, Any]]:
    """A run's validation records (its ``log.jsonl``), oldest first."""
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def diagnostics(validation: dict[str, Any]) -> dict[str, float]:
    """The :data:`DIAGNOSTICS` one validation recorded (older logs lack some)."""
    return {key: validation[key] for key in DIAGNOSTICS if key in validation}


def last_diagnostics(run_dir: Path) -> dict[str, float]:
    """The word-term and loss diagnostics of a run's last validation (``log.jsonl``), and its step."""
    last = validations(run_dir / "log.jsonl")[-1]
    return diagnostics(last) | {"step": last["step"]}
