"""The language sets' table (docs/EVALUATION.md): how often English is told apart from other
languages, through the public API.

For each split and set of ``reproduction/evaluation/data/language_sets.tsv`` it counts, with
``probsent.load().note(sentences)``:

* **language right**: a sentence of another language is withheld with the note naming its
  language ("looks French"); an English one (technical or ordinary) gets no "looks ..." note;
* **read**: the English sentence gets no note at all (percentile and P(specific) given); this
  also needs its coverage at least ``LOW_COVERAGE``, so it moves with the vocabulary, not with the
  identifier.

``python -m reproduction.experiments.language_sets`` rewrites the table in docs/EVALUATION.md (``--check``:
exit 1 if it differs); ``--compare`` adds the identifier alone and, where the package is
installed, py3langid (``pip install py3langid``), on the same sentences. ``--split dev`` prints
the development rows only (the numbers were chosen on them).
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from reproduction.experiments.generated_block import GeneratedBlock
from reproduction.experiments.paths import REPO, WING

SETS_FILE = WING / "evaluation" / "data" / "language_sets.tsv"
BLOCK = GeneratedBlock(REPO / "docs" / "EVALUATION.md", "<!-- language sets: python -m reproduction.experiments.language_sets -->",
                       "<!-- end language sets -->")
SET_NAMES = {"other": "other languages", "technical": "technical English", "english": "ordinary English"}


def read_sets(path: Path = SETS_FILE) -> list[dict[str, str]]:
    """The rows of the sets file (comment lines skipped)."""
    with open(path, encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


def language_right(row: dict[str, str], note: str) -> bool:
    """Whether ``note`` is right about the row's language."""
    from probsent.integrations.research_facade import language_note
    if row["set"] == "other":
        return note == language_note(row["language"])
    return not note.startswith("looks ")


def table(rows: list[dict[str, str]], splits: tuple[str, ...] = ("dev", "test")) -> list[str]:
    """The Markdown table: one line per split and set."""
    import probsent

    notes = probsent.load().note([row["sentence"] for row in rows])
    lines = ["| split | set | sentences | language right | read (no note) |", "|---|---|---:|---:|---:|"]
    for split in splits:
        for name, label in SET_NAMES.items():
            picked = [(row, note) for row, note in zip(rows, notes) if row["split"] == split and row["set"] == name]
            right = sum(language_right(row, note) for row, note in picked)
            read = "" if name == "other" else f"{100 * sum(note == '' for _, note in picked) / len(picked):.1f} %"
            lines.append(f"| {split} | {label} | {len(picked)} | {100 * right / len(picked):.1f} % | {read} |")
    return lines


def comparison(rows: list[dict[str, str]], split: str) -> list[str]:
    """The identifier alone against py3langid (if installed): share right per set, and time per sentence."""
    import time

    from probsent.api import language_of
    candidates = {"probsent.text.language_id": language_of}
    try:
        import py3langid
    except ImportError:
        print("py3langid is not installed: compared with nothing", file=sys.stderr)
    else:
        candidates["py3langid 0.4 (97 languages)"] = lambda text: py3langid.classify(text)[0]
    picked = [row for row in rows if row["split"] == split]
    lines = [f"| identifier ({split}) | " + " | ".join(SET_NAMES.values()) + " | µs per sentence |",
             "|---|" + "---:|" * (len(SET_NAMES) + 1)]
    for label, identify in candidates.items():
        identify(picked[0]["sentence"])  # any model loaded before the clock starts
        start = time.perf_counter()
        found = [identify(row["sentence"]) for row in picked]
        micros = (time.perf_counter() - start) / len(picked) * 1e6
        cells = []
        for name in SET_NAMES:
            pairs = [(row, code) for row, code in zip(picked, found) if row["set"] == name]
            right = sum(code == (row["language"] if name == "other" else "en") for row, code in pairs)
            cells.append(f"{100 * right / len(pairs):.1f} %")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {micros:.0f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or ``--check``) the table, or print the dev rows or the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    parser.add_argument("--split", choices=("dev", "test"), help="print this split's rows only")
    parser.add_argument("--compare", action="store_true", help="print the identifier against py3langid")
    args = parser.parse_args(argv)
    rows = read_sets()
    if args.compare:
        print("\n".join(comparison(rows, args.split or "test")))
        return 0
    if args.split:
        print("\n".join(table(rows, (args.split,))))
        return 0
    return BLOCK.main(lambda: table(rows), "language sets", ["--check"] if args.check else [])


if __name__ == "__main__":
    sys.exit(main())
