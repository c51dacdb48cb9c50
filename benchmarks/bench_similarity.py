"""Time and peak memory of a similarity matrix (default 10,000 x 10,000) with the shipped model.

    python benchmarks/bench_similarity.py [--n 10000] [--m 10000] [--threads 2]

Sentences are lines of examples/sentences.txt with a running number appended (so every one
is different). Prints the encoding time, the matrix time and the process's peak resident
memory (ru_maxrss) before and after the matrix; the float32 result itself is n x m x 4 bytes.
"""
from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a checkout without installing


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sentences(count: int, offset: int) -> list[str]:
    """``count`` distinct sentences built from the example file."""
    lines = [l for l in (REPO / "examples" / "sentences.txt").read_text().splitlines() if l.strip()]
    return [f"{lines[i % len(lines)]} {offset + i}" for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--m", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    import probsent
    from probsent.api import MAX_SIMILARITY_CELLS

    torch.set_num_threads(args.threads)
    model = probsent.load()
    a, b = sentences(args.n, 0), sentences(args.m, args.n)
    model.encode(a[:100])  # warm up
    before = peak_mb()
    started = time.perf_counter()
    model.encode(a), model.encode(b)
    encoded = time.perf_counter() - started
    after_encoding = peak_mb()
    started = time.perf_counter()
    matrix = model.similarity(a, b)
    seconds = time.perf_counter() - started
    print(f"{platform.machine()}, torch {torch.__version__}, {args.threads} torch threads, "
          f"blocks of at most {MAX_SIMILARITY_CELLS:,} float64 numbers")
    print(f"similarity matrix {matrix.shape[0]:,} x {matrix.shape[1]:,} ({matrix.nbytes / 2**20:,.0f} MB float32), "
          f"{model.encoder.type_name}, dim {model.encoder.dim}")
    print(f"encoding both sides alone: {encoded:.2f} s")
    print(f"similarity (encoding included): {seconds:.1f} s, {args.n * args.m / seconds / 1e6:.2f} M pairs/s")
    print(f"peak resident memory: {before:,.0f} MB with the model loaded, {after_encoding:,.0f} MB after "
          f"encoding both sides, {peak_mb():,.0f} MB after the matrix (the result included)")


if __name__ == "__main__":
    main()
