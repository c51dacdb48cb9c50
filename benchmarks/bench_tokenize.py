"""Speed of probsent.text.tokenize against NLTK's TreebankWordTokenizer.

Both tokenize the same unique sentences drawn evenly from the training pairs
(``paraphrase/pairs.tsv.gz`` of the shared data), one sentence at a time, in
this single process.  NLTK is timed as ``TreebankWordTokenizer().tokenize(s.lower())``,
which is what ``probsent.text.tokenize.tokenize(s)`` reproduces.  Prints sentences
per second (best of ``--repeat`` runs, wall clock) and the ratio; no pass/fail.

    python benchmarks/bench_tokenize.py [--data-dir DIR] [--n 20000] [--repeat 3]

The data directory is ``--data-dir``, else ``$PROBSENT_DATA_DIR``, else
``../shared/data`` next to the repository.
"""
from __future__ import annotations

import argparse
import gzip
import os
import platform
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a checkout without installing


def data_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    if os.environ.get("PROBSENT_DATA_DIR"):
        return Path(os.environ["PROBSENT_DATA_DIR"])
    return REPO.parent / "shared" / "data"


def load_sentences(pairs: Path, n: int, stride: int = 50) -> list[str]:
    """``n`` distinct sentences spread evenly over the file (both sides of every ``stride``-th pair)."""
    unique: dict[str, None] = {}
    with gzip.open(pairs, "rt", encoding="utf-8", newline="\n") as handle:
        for number, line in enumerate(handle):
            if number % stride == 0:
                s1, s2 = line.rstrip("\n").split("\t")[:2]
                unique[s1] = None
                unique[s2] = None
    candidates = list(unique)
    if len(candidates) < n:
        raise SystemExit(f"only {len(candidates)} distinct sentences in the sample; lower --n or --stride")
    return [candidates[i * len(candidates) // n] for i in range(n)]


def sentences_per_second(fn: Callable[[str], list[str]], sentences: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for sentence in sentences:
            fn(sentence)
        best = min(best, time.perf_counter() - start)
    return len(sentences) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="shared data directory (default: see module doc)")
    parser.add_argument("--n", type=int, default=20000, help="number of distinct sentences (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of probsent; the best counts (default 3)")
    parser.add_argument("--nltk-repeat", type=int, default=1, help="runs of NLTK, which is slow (default 1)")
    args = parser.parse_args()

    pairs = data_dir(args.data_dir) / "paraphrase" / "pairs.tsv.gz"
    if not pairs.is_file():
        raise SystemExit(f"{pairs} not found (use --data-dir or PROBSENT_DATA_DIR)")
    sentences = load_sentences(pairs, args.n)

    import probsent.text.tokenize as ours
    from nltk.tokenize import TreebankWordTokenizer
    import nltk

    treebank = TreebankWordTokenizer()

    def nltk_tokenize(text: str) -> list[str]:
        return treebank.tokenize(text.lower())

    # Same output?  (Not timed.)  Also count the sentences that needed the
    # general path rather than the fast one.
    general = 0
    general_path = ours._treebank

    def counting(text: str) -> list[str]:
        nonlocal general
        general += 1
        return general_path(text)

    ours._treebank = counting
    try:
        outputs = [ours.tokenize(s) for s in sentences]
    finally:
        ours._treebank = general_path
    mismatches = sum(a != nltk_tokenize(s) for s, a in zip(sentences, outputs))

    ours_rate = sentences_per_second(ours.tokenize, sentences, args.repeat)
    nltk_rate = sentences_per_second(nltk_tokenize, sentences, args.nltk_repeat)

    print(f"python {platform.python_version()}, nltk {nltk.__version__}, {platform.machine()}")
    print(f"{len(sentences)} distinct sentences from {pairs}")
    print(f"  general (slow) path used for {general} of them; {mismatches} outputs differ from NLTK")
    print(f"probsent.text.tokenize : {ours_rate:10,.0f} sentences/s (best of {args.repeat})")
    print(f"NLTK Treebank     : {nltk_rate:10,.0f} sentences/s (best of {args.nltk_repeat})")
    print(f"ratio             : {ours_rate / nltk_rate:10.1f}x")


if __name__ == "__main__":
    main()
