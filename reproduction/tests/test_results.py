"""evaluation.json through its one reader and writer (reproduction.evaluation.results): every committed
file loads and survives a round trip, and a wrong version, a missing or mistyped field is a
one-line error naming the file and the place in it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from probsent.errors import InvalidValueError, MissingFileError
from reproduction.evaluation.results import (FORMAT_VERSION, Ablation, AblationEntry, EvaluationRun, Extreme,
                                         LengthGroup, NewsAccuracy, RatedCorrelation, Results, Sentential,
                                         Skipped, Specificity, Sts, StsTable, SystemResult, evaluation_from_json,
                                         evaluation_to_json, load_evaluation, save_evaluation)

WING = Path(__file__).resolve().parents[1]  # reproduction/: its records as the repository kept them
COMMITTED = sorted(WING.glob("results/**/evaluation.json")) + [WING / "docs" / "results" / "evaluation.json"]


def small_run() -> EvaluationRun:
    """A run with one model and one baseline, every kind of field used once."""
    table = StsTable(stsb_test=61.5, sts17=70.0, sets_mean=50.0, years_mean=49.0,
                     years={"STS12": {"MSRpar": 40.0, "mean": 40.0}})
    model = SystemResult(
        kind="model", path="runs/x/best", paper_row="WLO", config={"model": {"type": "wlo"}, "training": {"step": 3}},
        specificity=Specificity(NewsAccuracy(70.0, 71.5, threshold=None, n_train=2730, n_test=885),
                                RatedCorrelation(10.0, 984), RatedCorrelation(20.0, 845), RatedCorrelation(-5.0, 920)),
        sts=Sts(True, {"cosine": table}), lexical=Skipped("no training pairs"),
        sentential=Sentential("entropy", 100, 0, [3, 15], 100, 2, {
            "3": LengthGroup(1, Extreme("a b c", 70.0), Extreme("a b c", 70.0)),
            "10": LengthGroup(1, Extreme("a " * 9 + "z", 80.0), Extreme("a " * 9 + "z", 80.0))}, corpus="toy"))
    majority = SystemResult(kind="baseline", paper_row="Majority",
                            specificity=Specificity(NewsAccuracy(54.6, 70.6, majority="specific")))
    ablation = Ablation(AblationEntry("WLO", 70.0, 71.5, path="runs/x/best", prior_weight=1e-4),
                        Skipped("not given"))
    return EvaluationRun(Results({"Majority": majority, "WLO": model}, {"WLO": {"specificity": 1.5}}, 2.0, ablation),
                         command="probsent eval --model runs/x/best", created="2026-11-26T00:00:00+00:00",
                         notes=["a note"], plots=["plots/a.png"], seconds_command=3.0)


def test_a_run_survives_the_round_trip(tmp_path: Path) -> None:
    run = small_run()
    save_evaluation(tmp_path / "evaluation.json", run)
    again = load_evaluation(tmp_path / "evaluation.json")
    assert again == run
    assert list(again.results.systems) == ["Majority", "WLO"]  # the order, though keys are sorted on disk
    assert list(again.results.systems["WLO"].sentential.by_length) == ["3", "10"]  # by length, not as text
    raw = json.loads((tmp_path / "evaluation.json").read_text())
    assert raw["format_version"] == FORMAT_VERSION and raw["results"]["system_order"] == ["Majority", "WLO"]
    assert raw["results"]["systems"]["WLO"]["sts"]["pearson"]["cosine"]["STSB-test"] == 61.5
    assert raw["results"]["systems"]["WLO"]["lexical"] == {"skipped": "no training pairs"}
    assert "path" not in raw["results"]["systems"]["Majority"]  # None: an absent key


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(WING)))
def test_every_committed_file_loads_and_round_trips(path: Path) -> None:
    run = load_evaluation(path)
    assert run.results.systems and all(entry.specificity.news is not None for entry in run.results.systems.values())
    assert evaluation_from_json(json.loads(json.dumps(evaluation_to_json(run)))) == run
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert list(run.results.systems) == raw["results"]["system_order"]


def _broken(tmp_path: Path, change) -> Path:
    data = evaluation_to_json(small_run())
    change(data)
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps(data))
    return path


def _one_line_error(path: Path) -> str:
    with pytest.raises(InvalidValueError) as caught:
        load_evaluation(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    path = _broken(tmp_path, lambda data: data.update(format_version=2))
    assert "evaluation format version 2 is not supported" in _one_line_error(path)
    path = _broken(tmp_path, lambda data: data.pop("format"))
    assert "not a probsent evaluation" in _one_line_error(path)


def test_a_missing_field_is_named_with_its_place(tmp_path: Path) -> None:
    path = _broken(tmp_path, lambda data: data["results"]["systems"]["WLO"]["specificity"]["news"].pop("accuracy"))
    assert _one_line_error(path).endswith("results.systems.WLO.specificity.news: missing field 'accuracy'")
    path = _broken(tmp_path, lambda data: data.pop("environment"))
    assert _one_line_error(path).endswith("top level: missing field 'environment'")
    # an optional result may be absent: a system without STS
    path = _broken(tmp_path, lambda data: data["results"]["systems"]["WLO"].pop("sts"))
    assert load_evaluation(path).results.systems["WLO"].sts is None


def test_a_mistyped_or_unknown_field_is_named(tmp_path: Path) -> None:
    path = _broken(tmp_path, lambda data: data["results"]["systems"]["WLO"]["sts"]["pearson"]["cosine"]
                   .update({"STS17": "high"}))
    assert _one_line_error(path).endswith('results.systems.WLO.sts.pearson.cosine.STS17: expected a number, not "high"')
    path = _broken(tmp_path, lambda data: data["results"]["systems"]["Majority"].update(colour="red"))
    assert _one_line_error(path).endswith("results.systems.Majority: unknown field 'colour'")
    path = _broken(tmp_path, lambda data: data["results"]["systems"]["WLO"]["sentential"]["by_length"]["3"]
                   .update(n=True))
    assert _one_line_error(path).endswith("sentential.by_length.3.n: expected an integer, not true")


def test_missing_and_damaged_files(tmp_path: Path) -> None:
    with pytest.raises(MissingFileError, match="no such evaluation file"):
        load_evaluation(tmp_path / "absent.json")
    (tmp_path / "evaluation.json").write_text("{not json")
    assert "damaged evaluation file" in _one_line_error(tmp_path / "evaluation.json")
