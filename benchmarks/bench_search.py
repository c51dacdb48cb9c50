"""Semantic search from the command line (issue 50): queries per second against a 210,000-sentence
corpus searched as sentences (encoded again by every call) and as ``probsent encode``'s Parquet
(encoded once), and the peak memory of 50,000 queries against 20,000 sentences.

    python benchmarks/bench_search.py [--data-dir DIR] [--corpus 210000] [--queries 10 100]
                                      [--memory-queries 50000] [--memory-corpus 20000] [--work DIR]

``--memory-queries 0`` leaves the memory run out.

The sentences are distinct sentences of the shared training pairs (``paraphrase/pairs.tsv.gz``:
both sides of every second pair, drawn evenly, as ``bench_tokenize.py`` draws them); the corpus
takes the even-numbered ones and the queries the odd-numbered ones, so no query is in the corpus.
Every command is a fresh ``probsent`` process (the shipped model, default settings, ``--top-k
10``, hits written to a file) timed under ``/usr/bin/time -v``: wall seconds and peak resident
memory. Queries per second = queries / wall seconds of the whole call (start-up, reading, encoding
the queries and, for sentences, the corpus). Prints a Markdown table; docs/PERFORMANCE.md holds its
last output.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_tokenize import data_dir, load_sentences  # noqa: E402

PROBSENT = [sys.executable, "-m", "probsent"]


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of one process, from /usr/bin/time -v."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return wall, peak_kb / 1024


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", help="shared data directory (default: $PROBSENT_DATA_DIR or ../shared/data)")
    parser.add_argument("--corpus", type=int, default=210_000, help="corpus sentences (default 210,000)")
    parser.add_argument("--queries", type=int, nargs="+", default=[10, 100], help="query counts (default 10 100)")
    parser.add_argument("--memory-queries", type=int, default=50_000)
    parser.add_argument("--memory-corpus", type=int, default=20_000)
    parser.add_argument("--work", help="directory for the files (default: a temporary one)")
    args = parser.parse_args()
    pairs = data_dir(args.data_dir) / "paraphrase" / "pairs.tsv.gz"
    if not pairs.is_file():
        raise SystemExit(f"{pairs} not found (use --data-dir or PROBSENT_DATA_DIR)")
    work = Path(args.work or tempfile.mkdtemp(prefix="probsent-bench-search-"))
    work.mkdir(parents=True, exist_ok=True)
    most_queries = max([*args.queries, args.memory_queries])
    pool = load_sentences(pairs, 2 * max(args.corpus, most_queries), stride=2)
    corpus, queries = pool[0::2][:args.corpus], pool[1::2][:most_queries]
    (work / "corpus.txt").write_text("".join(s + "\n" for s in corpus), encoding="utf-8")
    (work / "memory-corpus.txt").write_text("".join(s + "\n" for s in corpus[:args.memory_corpus]), encoding="utf-8")
    for count in {*args.queries, args.memory_queries} - {0}:
        (work / f"queries{count}.txt").write_text("".join(s + "\n" for s in queries[:count]), encoding="utf-8")
    print(f"load before: {load()} (1, 5, 15 min); {os.cpu_count()} cores; work in {work}")
    (work / "corpus.parquet").unlink(missing_ok=True)
    wall, peak = timed([*PROBSENT, "encode", "--input", str(work / "corpus.txt"), "--output", str(work / "corpus.parquet")])
    print(f"probsent encode of the {args.corpus:,}-sentence corpus, once: {wall:.1f} s, {peak:,.0f} MB peak")
    print()
    print(f"| queries | corpus ({args.corpus:,} sentences) | wall s | queries/s | peak MB |")
    print("|---:|---|---:|---:|---:|")
    for count in args.queries:
        for name, path in (("sentences, encoded again", "corpus.txt"), ("encoded once (Parquet)", "corpus.parquet")):
            out = work / "hits.tsv"
            out.unlink(missing_ok=True)
            wall, peak = timed([*PROBSENT, "similarity", "--corpus", str(work / path), "--queries",
                                str(work / f"queries{count}.txt"), "--output", str(out)])
            print(f"| {count:,} | {name} | {wall:.1f} | {count / wall:,.1f} | {peak:,.0f} |", flush=True)
    if not args.memory_queries:
        print(f"load after: {load()}")
        return
    out = work / "hits.tsv"
    out.unlink(missing_ok=True)
    wall, peak = timed([*PROBSENT, "similarity", "--corpus", str(work / "memory-corpus.txt"), "--queries",
                        str(work / f"queries{args.memory_queries}.txt"), "--output", str(out)])
    print()
    print(f"{args.memory_queries:,} queries against {args.memory_corpus:,} sentences (encoded again, --top-k 10): "
          f"{wall:.1f} s, peak {peak:,.0f} MB (maximum resident set size)")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
