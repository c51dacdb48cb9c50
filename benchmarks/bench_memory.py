"""Peak memory of scoring very long lines and of indexing the training pairs (what ``probsent
eval`` reads for its word and sentence analyses), each in a fresh process.

    python benchmarks/bench_memory.py [--data-dir DIR] [--max-pairs N] [--line-mb 0.75 4.5]

Prints, per case, the process's peak resident memory (ru_maxrss) and the same for a process
that only loads the shipped model, so the difference is the case's own cost; no pass/fail.
A sentence is scored on its first 10,000 tokens (probsent.api.MAX_TOKENS), so a longer line
costs only its tokenization beyond that.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a checkout without installing


def child(case: str, argument: str) -> None:
    """Run one case in this process and print its peak memory (MB) and seconds."""
    import probsent
    from probsent.cli import main

    started = time.perf_counter()
    if case == "baseline":
        probsent.load()
    elif case == "score":
        with open(os.devnull, "w") as sink:
            sys.stdout = sink
            main(["specificity", "--input", argument])
            sys.stdout = sys.__stdout__
    elif case == "pairs":
        from probsent.data.mapped_pairs import load_mapped_pairs

        path, max_pairs = argument.split("|")
        with tempfile.TemporaryDirectory() as cache:  # a fresh cache: the file is read and indexed
            pairs = load_mapped_pairs(path, int(max_pairs) if max_pairs else None, cache_dir=cache)
        print(f"{pairs.num_pairs:,} pairs, {len(pairs.tokens):,} tokens", file=sys.stderr)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{peak:.0f} {time.perf_counter() - started:.1f}")


def run(case: str, argument: str = "") -> tuple[float, float]:
    """(peak MB, seconds) of ``case`` in a fresh process."""
    result = subprocess.run([sys.executable, __file__, "--child", case, argument], capture_output=True,
                            text=True, check=True)
    if result.stderr.strip():
        print("   ", result.stderr.strip().splitlines()[-1])
    peak, seconds = result.stdout.split()
    return float(peak), float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PROBSENT_DATA_DIR") or str(REPO.parent / "shared" / "data"))
    parser.add_argument("--max-pairs", type=int, help="index only the first N pairs (default: all)")
    parser.add_argument("--line-mb", type=float, nargs="*", default=[0.75, 4.5])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    base, _ = run("baseline")
    print(f"process with the shipped model loaded: {base:,.0f} MB peak")
    words = "The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday , traders said ."
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in args.line_mb:
            line = Path(tmp) / "line.txt"
            text = (words + " ") * int(megabytes * 1e6 / (len(words) + 1))
            line.write_text(text + "\n", encoding="utf-8")
            peak, seconds = run("score", str(line))
            print(f"specificity of one {len(text) / 1e6:.2f} MB line: {peak:,.0f} MB peak "
                  f"(+{peak - base:,.0f} MB), {seconds:.1f} s")
    pairs = Path(args.data_dir) / "paraphrase" / "pairs.tsv.gz"
    if pairs.is_file():
        peak, seconds = run("pairs", f"{pairs}|{args.max_pairs or ''}")
        print(f"indexing {'all' if not args.max_pairs else f'{args.max_pairs:,}'} training pairs "
              f"(eval's word and sentence analyses): {peak:,.0f} MB peak (+{peak - base:,.0f} MB), {seconds:.0f} s")
    else:
        print(f"{pairs} not found: pairs case skipped")


if __name__ == "__main__":
    main()
