"""A generated block inside a hand-written Markdown page: the lines between a marker line and
an end line, rewritten by a generator's ``main`` and compared by its ``--check``
(``reproduction.experiments.readme_sample``, ``reproduction.experiments.similarity_limits``)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from reproduction.experiments.paths import REPO
from probsent.files.atomic_writes import write_text


@dataclass(frozen=True)
class GeneratedBlock:
    """The block of ``page`` that starts ``skip`` lines after the line ``marker`` and ends at the
    first line ``end`` after it."""

    page: Path
    marker: str
    end: str
    skip: int = 1

    def _span(self, lines: list[str]) -> tuple[int, int]:
        """(first, end) line indices of the block's content."""
        if self.marker not in lines:
            raise SystemExit(f"{self.page}: no line {self.marker!r}")
        start = lines.index(self.marker) + self.skip
        if self.end not in lines[start:]:
            raise SystemExit(f"{self.page}: no line {self.end!r} after {self.marker!r}")
        return start, lines.index(self.end, start)

    def shown(self) -> list[str]:
        """The block the page shows now."""
        lines = self.page.read_text(encoding="utf-8").splitlines()
        first, end = self._span(lines)
        return lines[first:end]

    def write(self, block: list[str]) -> None:
        """Replace the block's content with ``block``, atomically."""
        lines = self.page.read_text(encoding="utf-8").splitlines()
        first, end = self._span(lines)
        write_text(self.page, "\n".join(lines[:first] + block + lines[end:]) + "\n")

    def main(self, render: Callable[[], list[str]], description: str, argv: list[str] | None = None) -> int:
        """A generator's command line: rewrite the block, or with ``--check`` exit 1 if it differs."""
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
        args = parser.parse_args(argv)
        block = render()
        if args.check:
            return 0 if self.shown() == block else 1
        self.write(block)
        print(f"wrote {self.page.relative_to(REPO)}")
        return 0
