"""Model selection of experiments/summarize.py on hand-made evaluation files: per model, the
best STS 2017 Pearson (best/) or news-train accuracy (best-news/), seed runs never chosen."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from experiments.summarize import select_run  # noqa: E402


def _write(results: Path, run: str, sts: float, news: float) -> None:
    def entry(kind: str, training: dict) -> dict:
        return {"kind": "model", "path": f"runs/{run}/{kind}", "config": {"training": training}}

    systems = {f"{run} best": entry("best", {"sts17_pearson": sts}),
               f"{run} news": entry("best-news", {"news_train_accuracy": news})}
    (results / run).mkdir(parents=True)
    (results / run / "evaluation.json").write_text(json.dumps({"results": {"systems": systems}}))


def test_selects_per_model_and_never_a_seed_run(tmp_path: Path) -> None:
    _write(tmp_path, "wlo", sts=0.70, news=66.0)
    _write(tmp_path, "wlo-epoch", sts=0.72, news=65.0)
    _write(tmp_path, "wlo-closepairs", sts=0.64, news=67.0)
    _write(tmp_path, "wlo-seed2", sts=0.99, news=99.0)  # a seed run: reported, never selected
    _write(tmp_path, "wordsum", sts=0.47, news=68.0)
    _write(tmp_path, "wordsum-minibatch", sts=0.77, news=68.5)
    assert select_run("wlo", tmp_path) == "wlo-epoch"
    assert select_run("wlo", tmp_path, by="news") == "wlo-closepairs"
    assert select_run("wordsum", tmp_path) == "wordsum-minibatch"
    assert select_run("wordsum", tmp_path, by="news") == "wordsum-minibatch"
    with pytest.raises(SystemExit, match="no evaluated lstmavg run"):
        select_run("lstmavg", tmp_path)
