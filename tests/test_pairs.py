"""Reading pair files: every kind of bad input has a documented outcome."""
from __future__ import annotations

import gzip

import numpy as np
import pytest

from probsent import ProbsentError
from probsent.cli import main
from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.data.mixture import apply_mixture
from probsent.data.pairs import ReadReport, read_tokenized_pairs
from probsent.training.training_data import build_vocabulary


def read_all(path, **kwargs):
    report = ReadReport()
    triples = list(read_tokenized_pairs(path, report=report, **kwargs))
    return [(first, second) for first, second, _ in triples], report


def test_skips_and_counts_unusable_lines(tmp_path) -> None:
    path = tmp_path / "pairs.tsv"
    lines = [b"Hello there.\tHi there!\tsrc\n",
             b"\n",
             b"   \n",
             b"no tab on this line\n",
             b"caf\xe9 latin-1\tcoffee\n",  # not UTF-8
             b"...\t\t\n",  # second side has no token
             b"good line\tanother good line\n"]
    path.write_bytes(b"".join(lines))
    pairs, report = read_all(path)
    assert pairs == [(["hello", "there", "."], ["hi", "there", "!"]),
                     (["good", "line"], ["another", "good", "line"])]
    assert report.skipped == {"blank line": 2, "no tab": 1, "not UTF-8": 1, "sentence with no token": 1}
    assert report.lines == 7 and report.pairs == 2
    assert "2 pairs from 7 lines" in report.summary()


def test_long_lines_are_cut(tmp_path) -> None:
    path = tmp_path / "long.tsv"
    path.write_text(" ".join(["word"] * 10_000) + "\tshort one\n")
    pairs, report = read_all(path, max_tokens=100)
    assert len(pairs[0][0]) == 100 and report.truncated_sentences == 1


def test_max_pairs(tmp_path) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("".join(f"s {i}\tt {i}\n" for i in range(50)))
    pairs, _ = read_all(path, max_pairs=7)
    assert len(pairs) == 7


def test_gzip_and_errors(tmp_path) -> None:
    good = tmp_path / "p.tsv.gz"
    with gzip.open(good, "wt") as f:
        f.write("".join(f"sentence number {i}\tanother sentence {i}\n" for i in range(5000)))
    assert len(read_all(good)[0]) == 5000
    truncated = tmp_path / "t.tsv.gz"
    truncated.write_bytes(good.read_bytes()[:2000])
    with pytest.raises(ProbsentError, match=r"t\.tsv\.gz:\d+: damaged or truncated gzip"):
        read_all(truncated)
    with pytest.raises(ProbsentError, match="no such file"):
        read_all(tmp_path / "missing.tsv")
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    with pytest.raises(ProbsentError, match="no usable sentence pairs"):
        read_all(empty)
    only_bad = tmp_path / "bad.tsv"
    only_bad.write_text("no tabs here\nnor here\n")
    with pytest.raises(ProbsentError, match=r"2 skipped \(no tab\)"):
        read_all(only_bad)


def test_pairs_cache_is_reused(tmp_path, monkeypatch) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("the cat sat\ta cat sat\nthe dog ran\ta dog ran\nunseen words here\tthe cat\n")
    first = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    assert first.words[:3] == ["cat", "the", "a"]  # by frequency (3, 3, 2), ties alphabetical
    monkeypatch.setattr("probsent.data.mapped_pairs.tokenize_block",
                        lambda *a, **k: pytest.fail("the cache was not used"))
    second = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    assert second.words == first.words and (second.tokens == first.tokens).all()
    assert second.report == first.report
    mixture = apply_mixture(second)
    vocab, _, ids_of_ranks = build_vocabulary(mixture, 2, 1)
    assert vocab.words == ["<unk>", "cat", "the"]
    ids, _ = mixture.sentences(np.array([0]), ids_of_ranks)
    assert ids.tolist() == [2, 1, 0]  # the cat sat -> sat is unknown


@pytest.mark.parametrize("content,fragment", [
    (None, "no such file"),
    (b"", "no usable sentence pairs"),
    (b"\x1f\x8b\x08\x00garbage", "damaged or truncated gzip"),
])
def test_cli_one_line_errors(tmp_path, capsys, content, fragment) -> None:
    data = tmp_path / "data.tsv"
    if content is not None:
        data.write_bytes(content)
    code = main(["train", "--data", str(data), "--out", str(tmp_path / "out"), "--no-validation"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and err.startswith("probsent: error:") and fragment in err
    assert str(data) in err
