"""A model directory moved elsewhere: usual file permissions, the training file found under
the data directory, a skipped analysis said out loud; the pairs' word index against a plain
re-count."""
from __future__ import annotations

import os
import stat
from collections import Counter

import numpy as np
import pytest

from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.data.pairs import ReadReport, read_tokenized_pairs
from reproduction.evaluation.training_pairs import load_training_pairs
from tests.helpers import write_toy_pairs
from tests.helpers import tiny_model as make_model


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_model_files_get_the_usual_permissions(tmp_path, umask) -> None:
    previous = os.umask(umask)
    try:
        make_model("wlo").save(tmp_path / "m")
        (tmp_path / "neighbour").write_text("x")
    finally:
        os.umask(previous)
    expected = stat.S_IMODE((tmp_path / "neighbour").stat().st_mode)
    assert expected == 0o666 & ~umask
    for path in (tmp_path / "m").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == expected, path
    assert stat.S_IMODE((tmp_path / "m").stat().st_mode) == 0o777 & ~umask


def test_training_file_found_under_the_data_dir(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "data"
    (data / "paraphrase").mkdir(parents=True)
    write_toy_pairs(data / "paraphrase" / "pairs.tsv", repeat=2)
    config = {"training": {"config": {"data": "/machine/elsewhere/data/paraphrase/pairs.tsv"}}}
    found = load_training_pairs(config, data_root=data)
    assert found.pairs is not None and found.path == str(data / "paraphrase" / "pairs.tsv")
    assert "not found there" in found.note
    missing = load_training_pairs(config, data_root=tmp_path / "empty")
    assert missing.pairs is None and "not found" in missing.note


def test_eval_reads_the_training_pairs_as_training_did(tmp_path, monkeypatch) -> None:
    """A run on a directory of parts and a file, with --max-pairs: eval counts those pairs only."""
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "parts").mkdir()
    first = write_toy_pairs(tmp_path / "parts" / "a.tsv", repeat=2)
    second = write_toy_pairs(tmp_path / "b.tsv", repeat=1)
    lines = [sum(1 for _ in open(p, encoding="utf-8")) for p in (first, second)]
    data = os.pathsep.join([str(tmp_path / "parts"), str(second)])
    whole = load_training_pairs({"training": {"config": {"data": data}}})
    assert whole.pairs is not None and whole.pairs.num_pairs == sum(lines)
    capped = load_training_pairs({"training": {"config": {"data": data, "max_pairs": 5}}})
    assert capped.pairs is not None and capped.pairs.num_pairs == 5
    gone = load_training_pairs({"training": {"config": {"data": data + os.pathsep + str(tmp_path / "gone.tsv")}}})
    assert gone.pairs is None and gone.note.endswith(f"not found: {tmp_path / 'gone.tsv'}")


def test_pairs_index_matches_a_plain_count(tmp_path, monkeypatch) -> None:
    """Words ranked by decreasing count (ties alphabetically), every token their rank."""
    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))
    path = write_toy_pairs(tmp_path / "pairs.tsv", repeat=3)
    with open(path, "a", encoding="utf-8") as out:
        out.write("zebra zebra quietly\tthe zebra\tother\n")
    mapped = load_mapped_pairs(path)
    sentences = [s for first, second, _ in read_tokenized_pairs(path, None, 100, ReadReport()) for s in (first, second)]
    counts = Counter(w for s in sentences for w in s)
    words = sorted(counts, key=lambda w: (-counts[w], w))
    assert mapped.words == words
    assert mapped.counts.tolist() == [counts[w] for w in words]
    flat = [words.index(w) for s in sentences for w in s]
    assert mapped.tokens.tolist() == flat
    assert np.diff(mapped.offsets).tolist() == [len(s) for s in sentences]
    assert mapped.sources == ["toy", "other"] and mapped.pair_sources.tolist()[-2:] == [0, 1]
