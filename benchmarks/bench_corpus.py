"""Scoring a large corpus three ways: ``probsent specificity`` on 1 and 2 worker processes and
``probsent.spark.add_specificity`` in Spark ``local[2]``, Parquet in and Parquet out.

The corpus is the first sides of the first N shared paraphrase pairs (default 1,000,000), in
a Parquet file with an ``id`` column. Every run is a fresh process tree; the table gives its
wall time, sentences/s, the CPU time of the whole tree (user + system, every process of it)
with sentences per CPU-second (the figure for sizing a cluster by cores, and the one least
moved by other work on a shared machine), and the peak memory of the tree (proportional set
size, summed over the process and all its descendants: the JVM and Spark's Python workers
included). Both are sampled from /proc every 0.25 s. It checks that the three outputs hold the same scores row for row, and
reruns the 2-worker CLI and Spark on a tenth of the corpus to show that memory does not grow
with the input.

    .venv/bin/python benchmarks/bench_corpus.py [--sentences 1000000] [--work DIR]
"""
from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO.parent / "shared" / "data" / "paraphrase" / "pairs.tsv.gz"
PROBSENT = Path(sys.executable).with_name("probsent")


def write_corpus(path: Path, count: int) -> None:
    """The first side of the first ``count`` pairs, as ``id``, ``text``, in row groups of 65,536."""
    schema = pa.schema([("id", pa.int64()), ("text", pa.string())])
    with gzip.open(PAIRS, "rt", encoding="utf-8") as pairs, pq.ParquetWriter(path, schema) as writer:
        block: list[str] = []
        done = 0
        for line in pairs:
            block.append(line.split("\t", 1)[0])
            if len(block) == 65_536 or done + len(block) == count:
                writer.write_table(pa.table({"id": np.arange(done, done + len(block)), "text": block}, schema=schema))
                done += len(block)
                block = []
                if done == count:
                    break
    if done < count:
        raise SystemExit(f"{PAIRS} has only {done:,} pairs")


TICK = os.sysconf("SC_CLK_TCK")


def sample_tree(root: int, cpu: dict[int, float]) -> int:
    """Proportional set size (bytes) of ``root`` and all its descendants now; records each
    one's CPU seconds so far (user + system) in ``cpu``."""
    children: dict[int, list[int]] = {}
    seconds: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
            seconds[int(entry)] = (int(fields[11]) + int(fields[12])) / TICK
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        cpu[pid] = max(cpu.get(pid, 0.0), seconds.get(pid, 0.0))
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                total += next(int(line.split()[1]) * 1024 for line in rollup if line.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total


def measured(command: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds and peak memory in bytes of the process tree, stdout) of
    ``command``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    peak, cpu = [0], {}

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], sample_tree(process.pid, cpu))
            time.sleep(0.25)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out = process.stdout.read()
    process.wait()
    wall = time.perf_counter() - start
    sampler.join()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed with status {process.returncode}")
    return wall, sum(cpu.values()), peak[0], out


def spark_child(source: str, target: str) -> None:
    """Runs in its own process: score ``source`` with Spark local[2] into ``target`` and print
    the seconds of the job itself (the session's start excluded)."""
    from probsent.spark import add_specificity, local_session

    spark = local_session(2)
    start = time.perf_counter()
    add_specificity(spark.read.parquet(source)).write.mode("overwrite").parquet(target)
    print(f"{time.perf_counter() - start:.3f}")
    spark.stop()


def scores(path: Path) -> np.ndarray:
    table = pq.read_table(path, columns=["id", "specificity"]).sort_by("id")
    return table.column("specificity").to_numpy(zero_copy_only=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1_000_000)
    parser.add_argument("--work", help="directory for the corpus and outputs (default: a temporary one)")
    parser.add_argument("--spark-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spark_child:
        spark_child(*args.spark_child)
        return
    work = Path(args.work or tempfile.mkdtemp(prefix="probsent-bench-corpus-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"(1, 5, 15 min); {os.cpu_count()} cores")
    sizes = [args.sentences, args.sentences // 10]
    for size in sizes:
        write_corpus(work / f"corpus{size}.parquet", size)
    cli = lambda size, workers: [str(PROBSENT), "specificity", "--input", str(work / f"corpus{size}.parquet"),  # noqa: E731
                                 "--output", str(work / f"cli{workers}-{size}.parquet"), "--workers", str(workers),
                                 "--force"]
    spark = lambda size: [sys.executable, __file__, "--spark-child", str(work / f"corpus{size}.parquet"),  # noqa: E731
                          str(work / f"spark-{size}")]
    runs = [("CLI, 1 worker", args.sentences, cli(args.sentences, 1)),
            ("CLI, 2 workers", args.sentences, cli(args.sentences, 2)),
            ("Spark local[2]", args.sentences, spark(args.sentences)),
            ("CLI, 2 workers", sizes[1], cli(sizes[1], 2)),
            ("Spark local[2]", sizes[1], spark(sizes[1]))]
    rows = []
    for name, size, command in runs:
        wall, cpu, peak, out = measured(command)
        job = float(out.strip().splitlines()[-1]) if "Spark" in name else None
        rows.append((name, size, wall, cpu, peak, job))
        print(f"  {name}, {size:,} sentences: {wall:.1f} s, CPU {cpu:.1f} s, peak {peak / 2**20:,.0f} MiB "
              f"(load {os.getloadavg()[0]:.2f})", flush=True)
    reference = scores(work / f"cli2-{args.sentences}.parquet")
    for other in (work / f"cli1-{args.sentences}.parquet", work / f"spark-{args.sentences}"):
        got = scores(other)
        same_nulls = np.array_equal(np.isnan(got), np.isnan(reference))
        print(f"{other.name} vs {work.name}/cli2: {len(got):,} rows, nulls in the same rows: {same_nulls}, "
              f"largest difference {np.nanmax(np.abs(got - reference)):.3g}")
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}\n")
    base_wall, base_cpu = next((wall, cpu) for name, size, wall, cpu, _, _ in rows
                               if name == "CLI, 2 workers" and size == args.sentences)
    print("| path | sentences | wall s | sentences/s | vs CLI 2 workers | CPU s (tree) | sentences per "
          "CPU-second | vs CLI 2 workers | peak memory (tree) | Spark job only (session start excluded) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, size, wall, cpu, peak, job in rows:
        full = size == args.sentences
        ratio = f"{base_wall / wall:.2f}" if full else ""
        cpu_ratio = f"{base_cpu / cpu:.2f}" if full else ""
        extra = f"{job:.1f} s, {size / job:,.0f}/s" if job else ""
        print(f"| {name} | {size:,} | {wall:.1f} | {size / wall:,.0f} | {ratio} | {cpu:.1f} | {size / cpu:,.0f} "
              f"| {cpu_ratio} | {peak / 2**20:,.0f} MiB | {extra} |")


if __name__ == "__main__":
    main()
