"""The wing's atomic writer: a record is the old file or the complete new one, and no temporary
is left behind either way."""
from __future__ import annotations

import json

import pytest

from reproduction.evaluation.atomic_files import atomic_path, write_json


def test_a_record_is_written_whole_with_sorted_keys(tmp_path) -> None:
    path = tmp_path / "new" / "record.json"  # a missing parent is created
    write_json(path, {"b": 1, "a": [1.5, None]})
    assert path.read_text(encoding="utf-8") == '{\n  "a": [\n    1.5,\n    null\n  ],\n  "b": 1\n}\n'
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": [1.5, None], "b": 1}
    assert [p.name for p in path.parent.iterdir()] == ["record.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path) -> None:
    path = tmp_path / "plot.png"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_path(path) as tmp:
            assert tmp.parent == tmp_path and tmp.suffix == ".png"  # a writer may read the format from it
            tmp.write_bytes(b"half")
            raise RuntimeError("interrupted")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]
