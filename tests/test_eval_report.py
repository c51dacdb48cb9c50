"""The baseline report's table and its error path (no data needed)."""
from probsent.evaluation import baseline_report


def test_format_table_marks_missing_cells():
    table = baseline_report.format_table({
        "Majority": {"specificity": {"news": {"accuracy": 54.576, "f1": 70.61}}},
    })
    header, row = table.splitlines()
    assert header.split()[:2] == ["News", "acc"]
    assert row.split() == ["Majority", "54.6", "70.6", *["-"] * 7]


def test_missing_data_dir_is_one_line_on_stderr(tmp_path, capsys):
    assert baseline_report.main(["--data-dir", str(tmp_path / "absent")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tmp_path / "absent") in err
