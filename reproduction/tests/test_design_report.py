"""The ship rule's RESULTS section is computed from the records (hand-made records here)."""
import json

from reproduction.experiments import design_report as dr
from reproduction.experiments.design_rounds import DESIGN_ROUNDS


def _dev(score, **more):
    record = {"vocabulary": 50001, "sts17": 0.72, "stsb_dev_concat": 56.0, "stsb_dev_means": 60.0, "news_length_groups": 60.0,
              "equal_length": 85.0, "one_word_explain": 40.0, "shorter_specific": 10.0, "score": score,
              "missed": [], "diagnostics": {"frequent_term": -0.05, "term_count_spearman": 0.5, "active_hinge": 0.4}}
    return {**record, **more}


def test_the_section_shows_the_records_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(dr, "RECORDS", tmp_path)
    monkeypatch.setattr(dr, "PREVIOUSLY_SHIPPED", tmp_path / "shipped.json")
    monkeypatch.setattr(dr, "SHIPPED_ROWS", tmp_path / "shipped-rows.json")
    (tmp_path / "shipped.json").write_text(json.dumps({k: v for k, v in _dev(49.6).items()
                                                       if k not in ("missed", "diagnostics")} | {"sts17": float("nan")}))
    base = DESIGN_ROUNDS[1].candidates[0].name
    runs = {base: _dev(61.0), f"{base}-seed2": _dev(63.0), f"{base}-seed3": _dev(65.0),
            "other": _dev(50.0, missed=["STS 2017 0.600 < 0.7"])}
    (tmp_path / "round1.json").write_text(json.dumps({"runs": runs, "finalists": [base], "winner": base}))
    row = {"news": 74.0, "twitter": 45.0, "yelp": 70.0, "movie": 60.0}
    tested = {"winner": base, "length": row,
              "runs": {n: {"entropy": row, "probability": {**row, "news": v}, "stsb_test_concat": 55.0,
                           "stsb_test_means": 64.0} for n, v in ((base, 73.0), (f"{base}-seed2", 75.0), (f"{base}-seed3", 77.0))}}
    (tmp_path / "round1-test.json").write_text(json.dumps(tested))
    (tmp_path / "shipped-rows.json").write_text(json.dumps(
        {"measures": {"entropy": row, "probability": {**row, "news": 72.5}}, "length": {**row, "news": 73.0}}))
    text = dr.render()
    assert "| `other` |" in text and "STS 2017 0.600 < 0.7" in text
    assert "63.0 ± 2.0" in text  # the finalist's score over its three seeds: 61, 63, 65
    assert "| 75.0 ± 2.0 |" in text  # the calibrated probability's News accuracy: 73, 75, 77
    assert f"The rule chose `{base}`" in text
    assert "77.4" in text  # the paper's WLO News accuracy, labelled as the paper's
    assert "the calibrated probability is 0.5 points below Length" in text  # 72.5 against 73.0
    # a record with both probabilities (P(specific) for the length, the news-threshold one)
    (tmp_path / "shipped-rows.json").write_text(json.dumps(
        {"calibration": "percentile", "length": {**row, "news": 73.0},
         "measures": {"entropy": row, "probability": {**row, "news": 61.5}, "news_probability": row,
                      "withheld": {"news": 0.5, "twitter": 0.9, "yelp": 0.0, "movie": 0.1}}}))
    text = dr.render()
    assert "| shipped model, P(specific) for the sentence's length | 61.5 | 45.0 | 70.0 | 60.0 |" in text
    assert "| shipped model, news-threshold probability (a logistic of the score) | 74.0 |" in text
    assert "| share withheld by `model.note` (%) | 0.5 | 0.9 | 0.0 | 0.1 |" in text
    assert "P(specific) for the length is 11.5 points below Length" in text


def test_a_rounds_diagnostic_is_shown_beside_it(tmp_path):
    measures = {"news_length_groups": 65.24, "equal_length": 68.254, "one_word_explain": 30.646}
    record = {"model": "runs/x/best", "rarity_weight": 0.3,
              "measures": {"own terms": measures, "rarity alone": {**measures, "equal_length": 100.0}}}
    lines = dr.diagnostic_lines(record)
    assert "| own terms | 65.2 | 68.3 | 30.6 |" in lines  # in the order of the rule's measures
    assert "| rarity alone | 65.2 | 100.0 | 30.6 |" in lines
    assert "runs/x/best" in lines[0] and "0.3 x" in lines[0]
    assert dr.diagnostic_lines(None) == []


def test_the_similarity_read_out_is_shown_in_its_parts():
    record = {"a": {"concat": 60.04, "means": 70.0, "variances": 50.0, "variance_share": 0.9},
              "b": {"concat": 65.0, "means": 60.0, "variances": 64.0, "variance_share": 0.3}}
    text = "\n".join(dr.similarity_lines(record))
    assert "| `a` | 60.0 | 70.0 | 50.0 | 0.90 | – | – | – |" in text
    record["a"].update(expected_inner_product=55.55, own_distance_part=40.0, own_log_determinant_part=20.0)
    assert "| `a` | 60.0 | 70.0 | 50.0 | 0.90 | 55.5 | 40.0 | 20.0 |" in "\n".join(dr.similarity_lines(record))
    assert "outweighs the means in 1 of the 2 runs'" in text and "in 1 of them the variances alone" in text
    assert dr.similarity_lines(None) == []


def test_a_finalist_that_failed_a_floor_is_not_called_a_close_second():
    runs = {n: _dev(v) for n, v in (("w", 80.0), ("w-seed2", 81.0), ("w-seed3", 82.0))}
    runs |= {n: _dev(v, missed=["STS 2017 0.600 < 0.7"]) for n, v in (("x", 90.0), ("x-seed2", 90.0), ("x-seed3", 90.0))}
    text = dr.winner_sentence({"runs": runs, "finalists": ["w", "x"], "winner": "w"})
    assert "score 81.0 ± 1.0" in text and "`x`" not in text
    runs |= {n: _dev(v) for n, v in (("x", 80.5), ("x-seed2", 80.5), ("x-seed3", 80.5))}
    text = dr.winner_sentence({"runs": runs, "finalists": ["w", "x"], "winner": "w"})
    assert "Its lead over `x` (80.5 ± 0.0) is 0.5 points" in text
    for name in runs:
        runs[name]["stsb_dev_concat"] = 60.0 if name.startswith("w") else 50.0
    text = dr.winner_sentence({"runs": runs, "finalists": ["w", "x"], "winner": "w"}, "stsb_dev_concat")
    assert "(STS-B dev concat 60.0 ± 0.0 over three seeds)" in text and "`x`" not in text  # a lead beyond one sd


def test_the_ablation_is_shown_over_three_seeds_beside_the_winner():
    runs = {n: _dev(v) for n, v in (("w", 80.0), ("w-seed2", 81.0), ("w-seed3", 82.0))}
    every = {"base": _dev(50.0)}
    seeds = {"base-seed2": _dev(52.0), "base-seed3": _dev(54.0)}
    lines = dr.ablation_lines({"runs": runs, "winner": "w", "ablation": seeds}, every, "base")
    assert any(line.startswith("| `w` | ") and "| 81.0 ± 1.0 |" in line for line in lines)
    assert any(line.startswith("| `base` | ") and "| 52.0 ± 2.0 |" in line for line in lines)
    assert dr.ablation_lines({"runs": runs, "winner": "w", "ablation": {}}, every, "base") == []  # seeds missing
