"""Where the experiments read and write: the repository's directories, named once."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the repository: the product, README, examples, runs
# The wing (reproduction/) keeps its records as the repository kept them before they moved in:
# a path written inside a record ("results/design/round1.json", "docs/results/evaluation.json")
# is relative to WING.
WING = REPO / "reproduction"
RUNS_DIR = REPO / "runs"  # training runs (not committed)
# a run directory's files as `probsent train` writes them (docs/TRAINING.md, "Output directory")
LOG, LAST, STATE = "log.jsonl", "last", "trainer_state.json"
RESULTS_DIR = WING / "results"  # committed records: evaluations, validation logs, the rounds' records
REPORT_DIR = WING / "docs" / "results"  # the paper's tables for the selected main models
SHIPPED = REPO / "probsent" / "pretrained" / "wlo"  # the model inside the package
# the shipped model's files and the plan's shipping choice as they were before the recipe's
# round 2 replaced the model (rule 6)
SHIPPED_BEFORE = RESULTS_DIR / "shipped-before-issue-11"
# the word lists issue 41's generality rounds trained with (--rarity-from, which left probsent in
# issue 49) and their fit's record: history, written at commit 9701be6
GENERALITY_TARGETS_DIR = RESULTS_DIR / "generality"
