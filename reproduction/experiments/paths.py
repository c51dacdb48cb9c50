"""Where the experiments read and write: the repository's directories, named once."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUNS_DIR = REPO / "runs"  # training runs (not committed)
RESULTS_DIR = REPO / "results"  # committed records: evaluations, validation logs, the rounds' records
REPORT_DIR = REPO / "docs" / "results"  # the paper's tables for the selected main models
SHIPPED = REPO / "probsent" / "pretrained" / "wlo"  # the model inside the package
# the shipped model's files and the plan's shipping choice as they were before the recipe's
# round 2 replaced the model (rule 6)
SHIPPED_BEFORE = RESULTS_DIR / "shipped-before-issue-11"
# the word lists issue 41's generality rounds trained with (--rarity-from, which left probsent in
# issue 49) and their fit's record: history, written at commit 9701be6
GENERALITY_TARGETS_DIR = RESULTS_DIR / "generality"
