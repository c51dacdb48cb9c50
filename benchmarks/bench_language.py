"""What the language rule costs scoring (issue 49 item 3; docs/PERFORMANCE.md): the time of
``model.percentile`` (the score, then the withholding rules: what ``probsent specificity
--percentile`` runs) and of ``model.note`` on English paraphrase sentences, with the language
rule and with it switched off (every sentence English), alternating in one process, the best of
the rounds; and the share of sentences that :func:`probsent.text.language_id.english_screen`
leaves to the word-by-word reading; and the rule alone
(:func:`probsent.text.language_id.sentence_languages` on tokens already made) over the percentile's
time, the steadier number on a busy machine; and what the first ``note`` of a fresh process costs
(the word table read once).
Run: ``python benchmarks/bench_language.py [--data-dir ../shared/data] [--sentences 100000] [--rounds 5]``."""
from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import statistics
import time
from pathlib import Path
from unittest import mock

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def english_sentences(data_dir: Path, count: int) -> list[str]:
    """The first ``count`` distinct first sentences of the training paraphrase pairs."""
    seen: dict[str, None] = {}
    with gzip.open(data_dir / "paraphrase" / "pairs.tsv.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            seen.setdefault(line.split("\t", 1)[0], None)
            if len(seen) == count:
                break
    return list(seen)


def all_english(token_ids, ids, offsets, counted, known, sentences):
    """The language rule switched off: every sentence English."""
    return np.zeros(len(offsets) - 1, dtype=np.int16)


FIRST_USE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import probsent
model = probsent.load()
model.specificity("It is good.")
start = time.perf_counter()
model.note("The Dow fell 2.3 % on Tuesday.")
print(json.dumps(time.perf_counter() - start))
"""


def first_use_seconds(runs: int = 3) -> float:
    """Median seconds of a fresh process's first ``note`` (reading the word table, and the
    vocabulary's English leads) after loading and scoring once."""
    import subprocess
    import sys

    return statistics.median(json.loads(subprocess.run([sys.executable, "-c", FIRST_USE, str(REPO)], check=True,
                                                       capture_output=True, text=True).stdout) for _ in range(runs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    import probsent
    from probsent.text.language_id import english_screen

    sentences = english_sentences(args.data_dir, args.sentences)
    model = probsent.load()
    model.percentile(sentences[:2000]), model.note(sentences[:2000])  # first uses: kernels, the word table
    times: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for rule in ("with", "without"):
            for method in ("percentile", "note"):
                patch = mock.patch("probsent.readouts.withheld.sentence_languages", all_english) if rule == "without" \
                    else contextlib.nullcontext()
                with patch:
                    start = time.perf_counter()
                    getattr(model, method)(sentences)
                    times.setdefault(f"{method} {rule}", []).append(time.perf_counter() - start)
    ids, offsets = model._token_ids(sentences)
    from probsent.text.token_ids import coverage_counts
    counts = coverage_counts(ids, offsets, model._token_ids.coverage_codes)
    unsure = float(np.mean(~english_screen(model._token_ids, ids, offsets, *counts)))
    from probsent.text.language_id import sentence_languages
    for _ in range(args.rounds):  # the rule alone, on the same tokens
        start = time.perf_counter()
        sentence_languages(model._token_ids, ids, offsets, *counts, sentences)
        times.setdefault("language rule alone", []).append(time.perf_counter() - start)
    median = {key: min(values) for key, values in times.items()}  # the best round: the least disturbed by other load
    print(json.dumps({"sentences": len(sentences), "rounds": args.rounds,
                      **{f"{key} sentences/s": round(len(sentences) / seconds) for key, seconds in median.items()},
                      "percentile time ratio (with/without)": round(median["percentile with"] / median["percentile without"], 3),
                      "note time ratio (with/without)": round(median["note with"] / median["note without"], 3),
                      "language rule alone / percentile without": round(
                          median["language rule alone"] / median["percentile without"], 3),
                      "share read word by word": round(unsure, 4),
                      "first note in a fresh process, seconds": round(first_use_seconds(), 3)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
