"""The recipe study's measures against hand-made cases and its records: --min-count and the
rarity initialization in a training run (the word-term statistics and rarity terms themselves:
tests/test_training_diagnostics.py), the shorter-specific pair set, the recipe goals, the
rounds' candidates and selections, rank bands, sentence scale, seed checks, the news dev set
and the training gains."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from reproduction.evaluation.baselines import LengthScorer
from reproduction.evaluation.tables import load_shorter_specific, shorter_specific_experiment
from probsent.models import WLO
from probsent.api import tokenize
from probsent.training import TrainConfig, Trainer


def test_min_count_and_rarity_init_in_a_training_run(tmp_path, toy_pairs) -> None:
    data = toy_pairs(3)
    lines = (data.read_text() + "zebra quartz\tzebra onyx\ttoy\n")
    data.write_text(lines)
    config = TrainConfig(data=str(data), out=str(tmp_path / "run"), min_count=2, max_steps=2,
                         batch_size=4, megabatch=2, rarity_init=0.3, eval_every=1)
    trainer = Trainer(config, progress=False)
    assert "zebra" in trainer.vocab.words  # seen twice
    assert "quartz" not in trainer.vocab.words and "onyx" not in trainer.vocab.words  # seen once
    assert "guitar" in trainer.vocab.words  # 3 x 2 times
    trainer.train()
    record = json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[0])
    for key in ("term_count_spearman", "frequent_term", "negatives_sharing_more", "active_hinge",
                "prior_gradient_share"):
        assert math.isfinite(record[key])


def test_shorter_specific_set() -> None:
    specific, vague = load_shorter_specific()
    assert len(specific) >= 50
    assert all(len(tokenize(s)) < len(tokenize(v)) for s, v in zip(specific, vague))
    assert shorter_specific_experiment(LengthScorer()).accuracy == 0.0

    class Digits:
        def specificity(self, sentences):
            return np.array([sum(c.isdigit() for c in s) for s in sentences], dtype=float)

    expected = 100.0 * np.mean([sum(c.isdigit() for c in s) > sum(c.isdigit() for c in v)
                                for s, v in zip(specific, vague)])
    assert shorter_specific_experiment(Digits()).accuracy == pytest.approx(expected)


def test_recipe_goals_are_computed_from_the_numbers() -> None:
    from reproduction.experiments.recipe_summary import Check, goals

    seven = lambda *values: [list(v) for v in values]  # noqa: E731 - one list of seed values per column
    paper = seven([74, 76], [50], [71], [60], [65], [62], [95])
    wordsum = seven([73], [40], [66], [56], [70], [], [])
    length = seven([73], [45], [70], [59], [], [], [0])
    ours = seven([80, 81], [50, 52], [75, 76], [65, 66], [65], [62], [95, 91])
    checked = goals(paper, wordsum, length, ours)
    assert checked["wordsum"][0] == Check(True, (75.0, 73.0))
    assert [c.met for c in checked["length"]] == [True, True, True, True]
    assert checked["stsb"] == Check(True, (65.0, 62.0))  # concat 65 >= max(60, means 62)
    margins_and_sds = checked["beats_length"].values  # margins 7.5 / 6 / 5.5 / 6.5 over sds 0.71 / 1.41 / ...
    assert checked["beats_length"].met and margins_and_sds[:4] == (7.5, 6.0, 5.5, 6.5)
    assert margins_and_sds[4:] == pytest.approx([0.7071, 1.4142, 0.7071, 0.7071], abs=1e-4)
    assert checked["shorter_specific"] == Check(True, (93.0,))
    worse = goals(seven([70], [50], [71], [60], [55], [62], [10]), wordsum, length, ours)
    assert worse["wordsum"][0] == Check(False, (70.0, 73.0)) and worse["stsb"].met is False
    unmeasured = goals(paper, wordsum, length, seven([80], [50], [75], [65], [], [], []))
    assert unmeasured["beats_length"].met is False and unmeasured["shorter_specific"].met is None


def test_round_3_candidates_and_what_earlier_rounds_keep() -> None:
    """Recipe round 3 adds no combination; both earlier combinations compete; a selected run of an
    earlier round is neither trained nor evaluated again (its round's records are used)."""
    from reproduction.experiments.protocol import candidate_names, candidates, earlier_round_of, evaluation_dir, extra_runs
    from reproduction.experiments.rounds import RECIPE_ROUNDS, round_3

    round_1, round_2, round_3_ = RECIPE_ROUNDS[1], RECIPE_ROUNDS[2], RECIPE_ROUNDS[3]
    names = [run.name for run in candidates(round_3_)]
    assert len(names) == len(set(names))
    for round_ in RECIPE_ROUNDS.values():  # the names read from no log are the candidates' own
        assert candidate_names(round_) == [run.name for run in candidates(round_)]
    assert {"r11-combined", "r12-combined"} <= set(names) and not any(n.startswith("r13-combined") for n in names)
    assert {run.name for members in round_3.ROUND.new_families.values() for run in members} <= set(names)
    assert earlier_round_of(round_3_, "r12-combined") is round_2
    assert earlier_round_of(round_3_, "r11-reference") is round_1
    assert earlier_round_of(round_3_, "r13-cap0-rarity0.3") is None
    selection = {"paper": "r13-cap0-rarity0.3", "ours": "r12-combined"}
    assert [run.name for run in extra_runs(round_3_, selection)] == ["r13-cap0-rarity0.3-seed2",
                                                                     "r13-cap0-rarity0.3-seed3"]
    assert evaluation_dir(round_3_, "r12-combined-seed2") == round_2.results_dir / "r12-combined-seed2"


def test_the_round_files_give_the_recorded_candidates_and_selections() -> None:
    """Every round's candidates (names, flags, notes), its combination and its two selections,
    computed from the round files and the committed validation logs, are those its dev.json
    recorded when the round was run."""
    import json

    from reproduction.experiments.protocol import candidates, combined_run, select
    from reproduction.experiments.rounds import RECIPE_ROUNDS

    for round_ in RECIPE_ROUNDS.values():
        recorded = json.loads((round_.results_dir / "dev.json").read_text(encoding="utf-8"))
        runs = candidates(round_)
        assert [(r.name, r.note) for r in runs] == [(c["name"], c["note"]) for c in recorded["candidates"]]
        assert [json.loads(json.dumps(r.flags)) for r in runs] == [c["flags"] for c in recorded["candidates"]]
        assert select(round_) == recorded["selection"]
        assert (combined_run(round_).note if round_.combined_name else None) == recorded["combined"]


def test_term_by_rank_band_on_a_hand_made_model() -> None:
    from reproduction.experiments.model_readings import term_by_rank_band

    model = WLO(151, dim=2)
    with torch.no_grad():  # word w (rank w) gets |A| = e^(w/2) in both dimensions: term w
        model.scale.weight.copy_(torch.exp(torch.arange(151, dtype=torch.float64) / 2)[:, None].repeat(1, 2))
    bands = term_by_rank_band(model)
    assert list(bands) == ["1-20", "21-100", "101-1000"]  # ranks stop at 150
    assert bands["1-20"] == pytest.approx(10.5, rel=1e-5)  # mean of 1..20
    assert bands["21-100"] == pytest.approx(60.5, rel=1e-5)
    assert bands["101-1000"] == pytest.approx(125.5, rel=1e-5)  # mean of 101..150


def test_across_rounds_correlations_on_hand_made_candidates() -> None:
    from reproduction.experiments.recipe_summary import across_rounds

    def candidate(hinge: float, frequent: float, news: float, sts: float) -> dict:
        return {"sts17": sts, "news_dev": news, "diagnostics": {"active_hinge": hinge, "frequent_term": frequent}}

    # the frequent-word term grows with the hinge share and shrinks as news-dev grows: ranks +1 and -1
    runs = [candidate(0.5, -1.0, 70.0, 0.70), candidate(0.7, -0.2, 66.0, 0.74), candidate(0.9, 0.4, 61.0, 0.72)]
    found = across_rounds({"candidates": [*runs, dict(runs[1])]})
    assert found["distinct"] == 3 and found["repeats"] == 1
    assert found["hinge"] == pytest.approx(1.0) and found["news"] == pytest.approx(-1.0)
    assert found["sts"] == pytest.approx(0.5)


def test_sentence_scale_of_a_hand_made_model() -> None:
    # one word, A = (2, 0.5) and B = (1, 2): "x" has mean (2, 1), "x x" has mean A (mean + B) =
    # (6, 1.5); log-variances 2 log|A| per word: (log 4, log 1/4) and (log 16, log 1/16)
    from probsent.api import SentenceModel
    from probsent.api import Vocabulary
    from reproduction.experiments.model_readings import sentence_scale

    encoder = WLO(2, dim=2)
    with torch.no_grad():
        encoder.scale.weight[1] = torch.tensor([2.0, 0.5])
        encoder.shift.weight[1] = torch.tensor([1.0, 2.0])
    model = SentenceModel(encoder, Vocabulary(["<unk>", "x"]))
    scale = sentence_scale(*model.encode(["x", "x x"], log_variance=True))
    assert scale["mean_norm"] == pytest.approx((math.hypot(2, 1) + math.hypot(6, 1.5)) / 2, rel=1e-6)
    assert scale["log_variance"] == pytest.approx(0.0, abs=1e-6)  # log 4 and log 1/4 cancel
    encoder_b = WLO(2, dim=2)
    with torch.no_grad():
        encoder_b.scale.weight[1] = torch.tensor([0.5, 0.5])
    scale_b = sentence_scale(*SentenceModel(encoder_b, Vocabulary(["<unk>", "x"])).encode(["x", "x x"],
                                                                                          log_variance=True))
    assert scale_b["log_variance"] == pytest.approx((2 * math.log(0.25) + 2 * math.log(1 / 16)) / 4, rel=1e-6)


def test_band_rows_carry_the_sentence_scale_where_recorded() -> None:
    from reproduction.experiments.recipe_summary import band_rows

    bands = {"1-20": -0.1, "21-100": -0.5}
    dev = {"candidates": [{"name": "old", "term_bands": bands},
                          {"name": "new", "term_bands": bands, "scale": {"mean_norm": 3.456, "log_variance": -0.2345}},
                          {"name": "hidden", "term_bands": {"101-1000": 1.0}}]}
    labels, scaled, rows = band_rows(dev, {"old", "new"})
    assert labels == ["1-20", "21-100"] and scaled
    assert rows == [("old", [-0.1, -0.5], (None, None)), ("new", [-0.1, -0.5], (3.456, -0.2345))]
    assert band_rows({"candidates": dev["candidates"][:1]}, {"old"})[1] is False


def test_seed_check_contrasts_on_hand_made_records() -> None:
    from reproduction.experiments.recipe_summary import seed_check_contrasts, seed_check_values
    from reproduction.experiments.rounds import RECIPE_ROUNDS

    def record(sts: float, news: float, norm: float) -> dict:
        return {"sts17": sts, "news_dev": news, "diagnostics": {"term_count_spearman": 0.5, "frequent_term": -0.1,
                                                                "active_hinge": 0.7},
                "scale": {"mean_norm": norm, "log_variance": -0.2}}

    base = [record(0.70, 60.0, 3.0), record(0.72, 62.0, 3.0), record(0.74, 64.0, 3.0)]  # sd 0.02, 2.0, 0
    other = [record(0.75, 60.0, 4.0), record(0.76, 61.0, 4.0), record(0.77, 62.0, 4.0)]  # sd 0.01, 1.0, 0
    round_ = dataclasses.replace(RECIPE_ROUNDS[1], seed_checks=("base", "other"))
    values = seed_check_values(round_, {"other": other, "base": base})  # the round's order, not the file's
    assert list(values) == ["base", "other"] and values["base"][1] == [60.0, 62.0, 64.0]
    contrast = seed_check_contrasts(values)["other"]
    # STS +0.040 beats both sds (0.02, 0.01); news -1.0 does not (sd 2.0); the norm's +1.00 does (sd 0)
    assert contrast["STS17 r (dev)"] == (pytest.approx(0.04), True)
    assert contrast["News-train acc (dev)"] == (pytest.approx(-1.0), False)
    assert contrast["‖mean‖"] == (pytest.approx(1.0), True)
    assert contrast["frequent-word term"] == (pytest.approx(0.0), False)


def test_seed_checks_train_a_run_unless_its_last_checkpoint_says_finished(tmp_path, monkeypatch) -> None:
    import reproduction.experiments.recipe_records as records

    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    for name, state in (("done", {"finished": True}), ("cut-off", {"finished": False})):
        (tmp_path / name / "last").mkdir(parents=True)
        (tmp_path / name / "last" / "trainer_state.json").write_text(json.dumps({"step": 9, **state}))
    (tmp_path / "log-only").mkdir()
    (tmp_path / "log-only" / "log.jsonl").write_text("{}\n")  # a log is not a finished run
    assert [records.finished(n) for n in ("done", "cut-off", "log-only", "absent")] == [True, False, False, False]


def test_untrained_news_dev_rebuilds_the_initialization_the_trainer_scored(tmp_path, monkeypatch, data_dir,
                                                                          toy_pairs) -> None:
    # the trainer scores the model before its first step; for a run trained before it did,
    # untrained_news_dev rebuilds that model from the recorded settings (rarity init: from the counts)
    import reproduction.experiments.recipe_records as records
    from probsent.cli import main

    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROBSENT_DATA_DIR", str(data_dir))
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path / "runs")
    assert main(["train", "--data", str(toy_pairs(6)), "--out", str(tmp_path / "runs" / "toy"), "--batch-size", "4",
                 "--megabatch", "2", "--max-steps", "2", "--eval-every", "2", "--rarity-init", "0.3"]) == 0
    state_file = tmp_path / "runs" / "toy" / "last" / "trainer_state.json"
    state = json.loads(state_file.read_text())
    measured = state["untrained_news_train_accuracy"]
    assert 40.0 < measured < 80.0 and records.untrained_news_dev("toy") == measured
    del state["untrained_news_train_accuracy"]
    state_file.write_text(json.dumps(state))
    assert records.untrained_news_dev("toy") == pytest.approx(measured, abs=1e-9)


def test_length_news_dev_is_the_best_threshold_on_token_counts(data_dir) -> None:
    import reproduction.experiments.recipe_records as records
    from reproduction.evaluation.datasets import as_data_dir, load_news_train

    news = load_news_train(as_data_dir(str(data_dir)))
    counts = np.array([len(tokenize(s)) for s in news.sentences])
    brute = max(np.mean((counts > t) == news.specific) for t in np.concatenate([[-1], np.unique(counts)]))
    assert records.length_news_dev() == pytest.approx(100 * brute, abs=1e-9)


def test_training_gains_of_the_shown_runs_that_recorded_them() -> None:
    from reproduction.experiments.recipe_summary import training_gains

    dev = {"candidates": [{"name": "a", "news_dev": 65.7, "untrained_news_dev": 66.85},
                          {"name": "b", "news_dev": 67.8, "untrained_news_dev": 66.4},
                          {"name": "hidden", "news_dev": 99.0, "untrained_news_dev": 1.0},
                          {"name": "c", "news_dev": 70.0}]}  # not measured: not shown
    gains = training_gains(dev, {"a", "b", "c"})
    assert [(name, untrained, trained) for name, untrained, trained, _ in gains] == [("a", 66.85, 65.7),
                                                                                     ("b", 66.4, 67.8)]
    assert [gain for *_, gain in gains] == pytest.approx([-1.15, 1.4])
    assert training_gains({"candidates": [{"name": "c", "news_dev": 70.0}]}, {"c"}) == []
