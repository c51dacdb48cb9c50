"""Reading paraphrase pair files: one pair a line, ``s1<TAB>s2[<TAB>source]``, plain or gzip.

Lines that cannot give a pair are skipped and counted, never fatal: blank lines, lines with no
tab, lines that are not valid UTF-8, and pairs with a side of zero tokens. A line longer than
``MAX_LINE_BYTES`` (64 MiB) is a one-line error naming it; a long sentence is tokenized only as
far as its first ``max_tokens`` tokens. A file that cannot be
read (missing, damaged or truncated gzip) or that gives no pair at all is a one-line error.
"""
from __future__ import annotations

import gzip
import os
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator

from probsent.errors import InvalidValueError, MissingFileError
from probsent.text.tokenize import first_tokens
from probsent.files.untrusted import bounded_lines

MAX_TOKENS = 100  # training sentences are cut to their first MAX_TOKENS tokens


@dataclass
class ReadReport:
    """What happened to the lines of a pair file."""

    lines: int = 0
    pairs: int = 0
    skipped: Counter = field(default_factory=Counter)
    truncated_sentences: int = 0

    def summary(self) -> str:
        """One line: pairs kept, and why the others were skipped."""
        parts = [f"{self.pairs:,} pairs from {self.lines:,} lines"]
        parts += [f"{n:,} skipped ({why})" for why, n in sorted(self.skipped.items())]
        if self.truncated_sentences:
            parts.append(f"{self.truncated_sentences:,} sentences cut to the token limit")
        return "; ".join(parts)


def open_pair_file(path: Path) -> IO[bytes]:
    """The file as bytes, decompressed when it starts like gzip; MissingFileError if it is not a file."""
    if not path.is_file():
        raise MissingFileError(f"{path}: no such file")
    with path.open("rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gzipped else path.open("rb")


def read_tokenized_pairs(path: str | os.PathLike[str], max_pairs: int | None = None,
                         max_tokens: int = MAX_TOKENS,
                         report: ReadReport | None = None) -> Iterator[tuple[list[str], list[str], str]]:
    """Yield (tokens of s1, tokens of s2, source) for every usable line of ``path``.

    ``source`` is the third field (the dataset the pair comes from), or "" when there is none.

    Sentences longer than ``max_tokens`` are cut to their first ``max_tokens`` tokens.
    Counts go to ``report``; raises ProbsentError naming the file and line on unreadable data.
    """
    path = Path(path)
    report = report if report is not None else ReadReport()
    with open_pair_file(path) as handle:
        number = 0
        try:
            for number, raw in enumerate(bounded_lines(handle, str(path)), start=1):
                if max_pairs is not None and report.pairs >= max_pairs:
                    break
                report.lines = number
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    report.skipped["not UTF-8"] += 1
                    continue
                if not line.strip():
                    report.skipped["blank line"] += 1
                    continue
                fields = line.rstrip("\r\n").split("\t")
                if len(fields) < 2:
                    report.skipped["no tab"] += 1
                    continue
                # one token past the cap tells a cut sentence; the rest is never tokenized
                first, second = first_tokens(fields[0], max_tokens + 1), first_tokens(fields[1], max_tokens + 1)
                if not first or not second:
                    report.skipped["sentence with no token"] += 1
                    continue
                for tokens in (first, second):
                    if len(tokens) > max_tokens:
                        report.truncated_sentences += 1
                        del tokens[max_tokens:]
                report.pairs += 1
                yield first, second, fields[2].strip() if len(fields) > 2 else ""
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InvalidValueError(f"{path}:{number + 1}: damaged or truncated gzip data ({exc})") from None
    if report.pairs == 0:
        raise InvalidValueError(f"{path}: no usable sentence pairs ({report.summary()})")
