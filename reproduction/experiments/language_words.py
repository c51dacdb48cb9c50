"""Distil wordfreq's per-language word lists into the small table the language identifier ships
(``probsent/text/language_words.tsv.gz``; :mod:`probsent.text.language_id` reads it).

For each language in :data:`probsent.text.language_id.WORD_LIST_LANGUAGES` it keeps the words of
wordfreq's ``small`` list whose Zipf frequency (log10 of uses per billion words) is at least
:data:`probsent.text.language_id.MIN_ZIPF`, folded as the identifier folds the words it reads
(NFC, ``’`` -> ``'``, casefold) and written only if they are one word to the identifier (letters,
with apostrophes inside). Zipf is kept in tenths. wordfreq is needed here only (the eval extra);
the core install reads the shipped file. Lists by script not covered here (Greek, Hebrew, CJK,
Indic, Thai...) are identified by their script alone.

Run ``python -m reproduction.experiments.language_words`` to rewrite the file (``--check``: exit 1 if the
file would change). wordfreq's data are CC BY-SA 4.0 (its README); the file's header says so.
"""
from __future__ import annotations

import argparse
import gzip
import sys

from probsent.files.atomic_writes import atomic_path
from reproduction.experiments.paths import REPO
from probsent.integrations.research_facade import WORDS_FILE, word_table_lines

HEADER = ("# Per-language word frequencies distilled from wordfreq 3 (CC BY-SA 4.0, Robyn Speer and "
          "contributors): language, Zipf in tenths, the words (space-separated). Written by "
          "`python -m reproduction.experiments.language_words`; read by probsent.text.language_id.")


def table_lines() -> list[str]:
    """The file's lines: the header, then the identifier's own selection from wordfreq's lists
    (:func:`probsent.text.language_id.word_table_lines`)."""
    from wordfreq import get_frequency_dict

    return [HEADER, *word_table_lines(lambda language: get_frequency_dict(language, "small"))]


def file_bytes() -> bytes:
    """The gzip file (mtime 0, so the same lists give the same bytes)."""
    return gzip.compress(("\n".join(table_lines()) + "\n").encode("utf-8"), compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    """Write the table, or with ``--check`` exit 1 if the shipped one differs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    args = parser.parse_args(argv)
    data = file_bytes()
    if args.check:
        return 0 if WORDS_FILE.read_bytes() == data else 1
    with atomic_path(WORDS_FILE) as tmp:
        tmp.write_bytes(data)
    print(f"wrote {WORDS_FILE.relative_to(REPO)} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
