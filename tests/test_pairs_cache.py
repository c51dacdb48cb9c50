"""The pairs read by the compiled tokenizer over worker processes equals the reference reader,
and its memory-mapped cache is rebuilt when damaged or from another format or version."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from probsent.data import mapped_pairs as mapped_pairs_module
from probsent.data.mapped_pairs import load_mapped_pairs
from probsent.data.pairs import ReadReport, read_tokenized_pairs

TRICKY = [
    b"The cat sat.\tA cat sat!\tbible\n",
    b"\n",  # blank
    b"   \t  \n",  # blank (only whitespace and a tab)
    b"no tab here\n",
    b"\xff\xfe broken\tutf-8\n",  # not UTF-8
    b"one side\t\tsource\n",  # a side with no token
    b"Windows line\tends here\t captions \r\n",  # CRLF, a source with spaces around it
    b"Cannot gonna\tca n't won't\tcaptions\textra field\n",
    b"\xc3\xa9t\xc3\xa9 Caf\xc3\xa9\t\xe2\x80\x9cquoted\xe2\x80\x9d text\n",  # no source: ""
    b"control\x0bchar inside\tfine\tbible\n",
    (" ".join(f"w{i}" for i in range(150)) + "\tshort\tbible\n").encode(),  # cut at 100 tokens
    b"last line without newline\tstill a pair\tbible",
]


def _reference(path: Path, max_pairs=None):
    report = ReadReport()
    triples = list(read_tokenized_pairs(path, max_pairs, 100, report))
    return triples, report


def _as_triples(mapped):
    sentences = [[mapped.words[t] for t in mapped.tokens[mapped.offsets[k]:mapped.offsets[k + 1]]]
                 for k in range(len(mapped.offsets) - 1)]
    return [(sentences[2 * i], sentences[2 * i + 1], mapped.sources[mapped.pair_sources[i]])
            for i in range(mapped.num_pairs)]


@pytest.mark.parametrize("max_pairs", [None, pytest.param(3, marks=pytest.mark.slow)])
@pytest.mark.parametrize("block_bytes", [1 << 20, pytest.param(64, marks=pytest.mark.slow)])  # one block
# read here; many blocks over worker processes
def test_the_compiled_reader_equals_the_reference(tmp_path, monkeypatch, max_pairs, block_bytes) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"".join(TRICKY * 3))
    monkeypatch.setattr(mapped_pairs_module, "BLOCK_BYTES", block_bytes)
    mapped = load_mapped_pairs(path, max_pairs=max_pairs, cache_dir=tmp_path / "cache")
    triples, report = _reference(path, max_pairs)
    assert _as_triples(mapped) == triples
    counts = Counter(w for first, second, _ in triples for w in first + second)
    assert mapped.words == sorted(counts, key=lambda w: (-counts[w], w))
    assert mapped.counts.tolist() == [counts[w] for w in mapped.words]
    assert mapped.report["summary"] == report.summary() and mapped.report["lines"] == report.lines
    assert mapped.report["skipped"] == dict(report.skipped)


def _cache_dir(tmp_path: Path) -> Path:
    [directory] = (tmp_path / "cache").glob("pairs-*")
    return directory


def test_a_cache_of_the_old_name_is_left_alone_and_the_pairs_read_again(tmp_path) -> None:
    """A cache written as ``corpus-<key>`` (before the pairs cache got its name) is not read: the
    pairs are read again into ``pairs-<key>``, the same pairs; the old directory stays as it was."""
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"".join(TRICKY))
    first = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    expected = (_as_triples(first), first.words, first.counts.tolist())
    directory = _cache_dir(tmp_path)
    old = directory.rename(directory.with_name("corpus-" + directory.name.removeprefix("pairs-")))
    again = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    assert (_as_triples(again), again.words, again.counts.tolist()) == expected
    assert _cache_dir(tmp_path) == directory and sorted(p.name for p in old.iterdir()) == sorted(
        p.name for p in directory.iterdir())


@pytest.mark.parametrize("damage", ["cut tokens", *(pytest.param(d, marks=pytest.mark.slow) for d in (
    "changed tokens", "meta not json", "other version", "other format", "missing words"))])  # one in the edit loop
def test_a_damaged_or_foreign_cache_is_rebuilt(tmp_path, damage) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"".join(TRICKY))
    first = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    expected = (_as_triples(first), first.words, first.counts.tolist())
    directory = _cache_dir(tmp_path)
    meta = json.loads((directory / "meta.json").read_text())
    original = dict(meta)
    if damage == "cut tokens":
        data = (directory / "tokens.i32").read_bytes()
        (directory / "tokens.i32").write_bytes(data[:-4])
    elif damage == "changed tokens":
        data = bytearray((directory / "tokens.i32").read_bytes())
        data[0] ^= 1
        (directory / "tokens.i32").write_bytes(bytes(data))
    elif damage == "meta not json":
        (directory / "meta.json").write_text("{")
    elif damage in ("other version", "other format"):
        meta["version" if damage == "other version" else "format"] = "0.0.0" if damage == "other version" else 2
        (directory / "meta.json").write_text(json.dumps(meta))
    else:
        (directory / "words.txt").unlink()
    again = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    assert (_as_triples(again), again.words, again.counts.tolist()) == expected
    assert json.loads((_cache_dir(tmp_path) / "meta.json").read_text()) == original  # rebuilt as this version writes it
    assert original["format"] == mapped_pairs_module.CACHE_FORMAT


@pytest.mark.parametrize("damage", ["meta null", "meta a list", "sources null", "a size of 1e400", "a size of -1",
                                    "a size as text", "sums null", "report null", "words linked to /dev/zero",
                                    "tokens linked to /dev/zero", "words longer than recorded"])
def test_a_cache_of_the_wrong_shape_or_kind_is_rebuilt(tmp_path, damage) -> None:
    """Issue 50, item 7: a meta.json of the wrong shape crashed every later run (AttributeError,
    TypeError, OverflowError), and a words.txt linked to /dev/zero hung load_mapped_pairs. Any damaged
    cache is rebuilt; only regular files are read, and only as far as meta.json says."""
    import os
    import signal

    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"".join(TRICKY))
    first = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    expected = (_as_triples(first), first.words, first.counts.tolist())
    directory = _cache_dir(tmp_path)
    text = (directory / "meta.json").read_text()
    meta, original = json.loads(text), json.loads(text)
    if damage == "meta null":
        text = "null"
    elif damage == "meta a list":
        text = "[]"
    elif damage in ("sources null", "sums null", "report null"):
        meta[{"sources null": "sources", "sums null": "sha256", "report null": "report"}[damage]] = None
        text = json.dumps(meta)
    elif damage.startswith("a size"):
        meta["sizes"]["tokens.i32"] = "SIZE"
        text = json.dumps(meta).replace('"SIZE"', {"a size of 1e400": "1e400", "a size of -1": "-1",
                                                   "a size as text": '"12"'}[damage])
    elif damage.endswith("/dev/zero"):
        name = "words.txt" if damage.startswith("words") else "tokens.i32"
        (directory / name).unlink()
        os.symlink("/dev/zero", directory / name)
    else:
        with open(directory / "words.txt", "ab") as handle:
            handle.write(b"\nmore")
    (directory / "meta.json").write_text(text)

    class Hung(BaseException):  # not an OSError: nothing on the way may take it for a damaged file
        pass

    def hung(*_):
        raise Hung("load_mapped_pairs hung on the damaged cache")

    before = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        again = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert (_as_triples(again), again.words, again.counts.tolist()) == expected
    rebuilt = _cache_dir(tmp_path)
    assert json.loads((rebuilt / "meta.json").read_text()) == original
    assert not any(p.is_symlink() for p in rebuilt.iterdir())


@pytest.mark.slow
def test_the_cache_is_mapped_not_loaded(tmp_path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"".join(TRICKY))
    load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    mapped = load_mapped_pairs(path, cache_dir=tmp_path / "cache")
    for array in (mapped.tokens, mapped.pair_sources):
        assert isinstance(array, np.memmap)
    assert not isinstance(mapped.offsets, np.memmap)  # a step's index, read at random: in memory
    assert mapped.tokens.dtype == np.int32 and mapped.pair_sources.dtype == np.int32
    # a step's sentences are read by pread, not through the map: the same ids
    ids, offsets = mapped.sentences(np.array([5, 0, 3]))
    flat = np.fromfile(mapped.tokens.filename, dtype=np.int32)
    expected = [flat[mapped.offsets[k]:mapped.offsets[k + 1]] for k in (5, 0, 3)]
    assert [ids[offsets[j]:offsets[j + 1]].tolist() for j in range(3)] == [e.tolist() for e in expected]
