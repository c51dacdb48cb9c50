"""The data the product reads for itself: the data root, and the two sets that training's model
selection and ``probsent calibrate`` use (STS 2017 track 5, the news training rows).

:class:`DataDir` resolves paths under the data root (``--data-dir``, ``$PROBSENT_DATA_DIR``, or
``../shared/data``), raises a one-line :class:`~probsent.errors.ProbsentError` naming a missing
file, and records the sha256 of each file it reads (``DataDir.sha256``). The research wing's
harness (``reproduction/evaluation/datasets.py``) reads every other set with it.

Layout read here, under the data root (the project's ``shared/data``)::

    specificity/news-train/{data.txt,label.txt,DERIVED_rows_overlapping_news_test.txt}
    sts/sts17-track5-en-en/STS.{input,gs}.track5.en-en.txt
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probsent.errors import InvalidValueError, MissingFileError

DATA_DIR_ENV = "PROBSENT_DATA_DIR"
"""Environment variable naming the data root when no explicit directory is given."""

NEWS_TRAIN_PDTB_ROWS = 2796
"""Rows 0..2795 of news-train are the PDTB-derived training set."""

def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Find the evaluation data root.

    Order: the explicit ``data_dir`` argument, then ``$PROBSENT_DATA_DIR``, then
    ``../shared/data`` relative to the current directory, then relative to the repository.
    An explicitly named directory that does not exist is an error (no silent fallback).
    """
    if data_dir is not None:
        explicit, origin = Path(data_dir), "data directory"
    elif os.environ.get(DATA_DIR_ENV):
        explicit, origin = Path(os.environ[DATA_DIR_ENV]), f"${DATA_DIR_ENV}"
    else:
        explicit = None
    if explicit is not None:
        if not explicit.is_dir():
            raise MissingFileError(f"{origin} not found: {explicit}")
        return explicit
    candidates = [Path.cwd() / ".." / "shared" / "data", _repo_root() / ".." / "shared" / "data"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    raise MissingFileError(
        f"evaluation data directory not found: tried {candidates[0]} and {candidates[1]};"
        f" pass --data-dir or set ${DATA_DIR_ENV}"
    )


class DataDir:
    """The data root: resolves relative paths and records the sha256 of every file read."""

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self.root: Path = resolve_data_dir(data_dir)
        self.sha256: dict[str, str] = {}

    def path(self, relative: str) -> Path:
        """Absolute path of ``relative`` under the root; ProbsentError if it is not a file."""
        full = self.root / relative
        if not full.is_file():
            raise MissingFileError(f"evaluation data file not found: {full}")
        return full

    def read_bytes(self, relative: str) -> bytes:
        """Read a whole file, recording its sha256 under its relative path."""
        data = self.path(relative).read_bytes()
        self.sha256[relative] = hashlib.sha256(data).hexdigest()
        return data

    def read_text(self, relative: str, errors: str = "strict") -> str:
        """Read a UTF-8 text file (``errors`` as for ``bytes.decode``)."""
        try:
            return self.read_bytes(relative).decode("utf-8", errors=errors)
        except UnicodeDecodeError as exc:
            raise InvalidValueError(f"{self.root / relative}: not UTF-8 ({exc.reason} at byte {exc.start})") from None

    def read_lines(self, relative: str, errors: str = "strict") -> list[str]:
        """Lines of a text file without their line endings (a final newline adds no line).

        Splits on ``\\n`` (and strips a ``\\r`` before it) only: ``str.splitlines`` would also
        split on characters such as U+2028 or U+0085 that can occur inside a sentence.
        """
        text = self.read_text(relative, errors)
        if not text:
            return []
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        return [line[:-1] if line.endswith("\r") else line for line in lines]

    def record_file(self, relative: str) -> Path:
        """Hash a file that is read elsewhere (streamed), and return its path."""
        full = self.path(relative)
        digest = hashlib.sha256()
        with full.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        self.sha256[relative] = digest.hexdigest()
        return full


def as_data_dir(data: DataDir | str | os.PathLike[str] | None) -> DataDir:
    """Accept a DataDir, a path or None (resolve the default) and return a DataDir."""
    return data if isinstance(data, DataDir) else DataDir(data)


def check_aligned(data: DataDir, files: dict[str, list]) -> None:
    counts = {name: len(rows) for name, rows in files.items()}
    if len(set(counts.values())) != 1:
        detail = ", ".join(f"{data.root / name}: {n} lines" for name, n in counts.items())
        raise InvalidValueError(f"line counts differ: {detail}")



def parse_numbers(data: DataDir, relative: str, lines: list[str], kind: type = float) -> np.ndarray:
    values = []
    for number, line in enumerate(lines, start=1):
        try:
            values.append(kind(line.strip()))
        except ValueError:
            raise InvalidValueError(f"{data.root / relative}:{number}: not a number: {line!r}") from None
    return np.asarray(values)



@dataclass(frozen=True)
class LabelledSentences:
    """Sentences with a binary specificity label (True = specific)."""

    sentences: list[str]
    specific: np.ndarray  # bool, one per sentence
    rows: np.ndarray  # 0-based line numbers in the source file



@dataclass(frozen=True)
class StsPairs:
    """Sentence pairs with gold similarity scores (0-5)."""

    name: str
    first: list[str]
    second: list[str]
    scores: np.ndarray


def load_news_train(data: DataDir, pdtb_only: bool = True, drop_test_overlap: bool = True) -> LabelledSentences:
    """News training sentences (label 1 = general, 2 = specific).

    By default the cleaned threshold-tuning set: rows 0..2795 (PDTB-derived) minus the rows
    listed in ``DERIVED_rows_overlapping_news_test.txt`` (equal to news-test sentences).
    """
    base = "specificity/news-train/"
    sentences = data.read_lines(base + "data.txt")
    labels = data.read_lines(base + "label.txt")
    check_aligned(data, {base + "data.txt": sentences, base + "label.txt": labels})
    codes = parse_numbers(data, base + "label.txt", labels, int)
    if not set(np.unique(codes)) <= {1, 2}:
        raise InvalidValueError(f"{data.root / base}label.txt: labels must be 1 or 2")
    keep = np.ones(len(sentences), dtype=bool)
    if pdtb_only:
        keep[NEWS_TRAIN_PDTB_ROWS:] = False
    if drop_test_overlap:
        name = base + "DERIVED_rows_overlapping_news_test.txt"
        overlap = parse_numbers(data, name, [x for x in data.read_lines(name) if x.strip()], int)
        keep[overlap[overlap < len(keep)]] = False
    rows = np.flatnonzero(keep)
    return LabelledSentences([sentences[i] for i in rows], codes[rows] == 2, rows)


def load_sts_input_gold(data: DataDir, input_name: str, gold_name: str, label: str) -> StsPairs:
    """A SemEval pair file (s1<TAB>s2) and its gold file; pairs with an empty gold line are dropped."""
    pairs = data.read_lines(input_name)
    gold = data.read_lines(gold_name)
    check_aligned(data, {input_name: pairs, gold_name: gold})
    first, second, scores = [], [], []
    for number, (pair, score) in enumerate(zip(pairs, gold), start=1):
        if not score.strip():
            continue  # unscored pair
        fields = pair.split("\t")
        if len(fields) < 2:
            raise InvalidValueError(f"{data.root / input_name}:{number}: expected two tab-separated sentences")
        try:
            scores.append(float(score))
        except ValueError:
            raise InvalidValueError(f"{data.root / gold_name}:{number}: not a number: {score!r}") from None
        first.append(fields[0])
        second.append(fields[1])
    return StsPairs(label, first, second, np.asarray(scores))


def load_sts17(data: DataDir) -> StsPairs:
    """SemEval-2017 STS track 5 (English-English), 250 pairs."""
    base = "sts/sts17-track5-en-en/"
    return load_sts_input_gold(data, base + "STS.input.track5.en-en.txt", base + "STS.gs.track5.en-en.txt", "STS17")
