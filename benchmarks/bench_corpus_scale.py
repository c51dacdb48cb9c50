"""Training pairs at scale, and encoding a corpus (issue 45): numbers, no pass/fail.

In one run, for the shared 1,263,076 pairs and for a 5-million-pair file built from them (each
pair four times, written as plain TSV under ``--work``):

* cold pairs preparation: ``load_mapped_pairs`` with an empty cache directory in a fresh process
  (reading, the compiled tokenizer in worker processes on every core, ranking, writing the
  memory-mapped cache), its wall time and the peak resident memory of the process and of its
  whole process tree (the workers included);
* short training runs (``probsent train``, the shipped model's recipe, ``--max-steps`` steps
  and five times as many, the cache warm, no validation data), each in a fresh process: the
  peak resident memory of each (the child's VmHWM) and the training loop's pairs per
  second (the longer run's extra pairs over its extra seconds, as log.jsonl records them);

and, with ``--encode N``, ``probsent encode`` (Parquet out) beside ``probsent specificity``
(Parquet out) on the first N sentences of the shared pairs as a Parquet file, each in a fresh
process, alternately for ``--rounds`` rounds: wall time and sentences/s of the whole command
(interpreter start included), and their ratio in each round.

The CPU model, the cores and the load average (before and after each measure) are printed:
the machine may be shared, so compare numbers of one run.

    .venv/bin/python benchmarks/bench_corpus_scale.py [--data-dir DIR] [--work DIR] [--max-steps 40]
        [--encode 1000000 [--rounds 3]] [--skip-5m] [--skip-training]
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run from a checkout without installing

# the shipped model's recipe (probsent/pretrained/wlo/config.json), validation left out
RECIPE = ["--model", "wlo", "--rarity-init", "0.3", "--rarity-anchor", "1.0", "--hardness-cap", "0.0",
          "--no-validation"]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tree_rss_mb(pid: int) -> float:
    """Resident memory (MB) of ``pid`` and all its descendants, from /proc."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except (OSError, StopIteration):
            continue
        stack += [int(c) for c in children]
    return total / 1024


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak MB of the process tree, sampled every 0.2 s, standard output) of ``command``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    peak_tree = [0.0]

    def sample() -> None:
        while process.poll() is None:
            peak_tree[0] = max(peak_tree[0], tree_rss_mb(process.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{err}")
    return wall, peak_tree[0], out


def peak_mb() -> float:
    """This process's peak resident memory (MB): VmHWM, the high-water mark of its own memory
    since it started (ru_maxrss, where there is no /proc, also counts the memory of the process
    that started it: Linux carries it over fork and exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child_prepare(path: str, cache: str) -> None:
    """In a fresh process: prepare the pairs into ``cache``; print its own peak memory."""
    from probsent.data.mapped_pairs import load_mapped_pairs

    pairs = load_mapped_pairs(path, cache_dir=cache)
    print(f"{pairs.num_pairs:,} pairs, {len(pairs.tokens):,} tokens", file=sys.stderr)
    print(peak_mb())


def child_train(arguments: list[str]) -> None:
    """In a fresh process: ``probsent train arguments``; print its own peak memory."""
    from probsent.cli import main as probsent_main

    if probsent_main(["train", *arguments]) != 0:
        raise SystemExit(1)
    print(peak_mb())


def prepare(path: Path, work: Path) -> None:
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        # a first, discarded run puts the file in the system's cache; the second starts with an empty cache too
        run([sys.executable, __file__, "--child-prepare", str(path), str(Path(tmp) / "first")])
        before = load()
        wall, tree, out = run([sys.executable, __file__, "--child-prepare", str(path), str(Path(tmp) / "cold")])
        print(f"  cold pairs preparation: {wall:.1f} s wall (the process's start included), peak "
              f"{float(out.split()[-1]):,.0f} MB in the process, {tree:,.0f} MB in its process tree with the "
              f"workers (sampled); load {before} -> {load()}")


def train(path: Path, work: Path, steps: int) -> None:
    """Two runs, of ``steps`` and of 5 x ``steps`` steps: the peak memory of each, and the loop's
    pairs/s between them (the second run's extra steps over its extra seconds: start-up, the first
    mega-batches and the compilation of kernels cancel out)."""
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        cache = Path(tmp) / "cache"
        env = {"PROBSENT_CACHE": str(cache)}
        run([sys.executable, __file__, "--child-prepare", str(path), str(cache)])
        done = []
        for count in (steps, 5 * steps):
            before = load()
            out = Path(tmp) / f"run-{count}"
            wall, _, printed = run([sys.executable, __file__, "--child-train", "--data", str(path), "--out", str(out),
                                    "--max-steps", str(count), "--eval-every", str(count), *RECIPE], env)
            record = json.loads((out / "log.jsonl").read_text().splitlines()[-1])
            batch = json.loads((out / "last" / "config.json").read_text())["training"]["config"]["batch_size"]
            done.append((record["step"] * batch, record["seconds"]))
            print(f"  training, {count} steps (cache warm): peak {float(printed.split()[-1]):,.0f} MB resident "
                  f"(VmHWM), {wall:.1f} s wall in all; load {before} -> {load()}")
        (pairs_a, seconds_a), (pairs_b, seconds_b) = done
        print(f"  training loop: {(pairs_b - pairs_a) / (seconds_b - seconds_a):,.0f} pairs/s (the longer run's "
              f"extra pairs over its extra seconds)")


def encode_beside_specificity(data: Path, work: Path, sentences: int, rounds: int) -> None:
    """``probsent specificity`` and ``probsent encode`` (both Parquet in and out, all cores: their
    default --workers) on the same sentences, alternately, ``rounds`` times; each command's
    sentences/s and encode's share of specificity's speed in each round."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = []
    with gzip.open(data, "rt", encoding="utf-8") as handle:
        for line in handle:
            texts += line.rstrip("\n").split("\t")[:2]
            if len(texts) >= sentences:
                break
    source = work / "sentences.parquet"
    pq.write_table(pa.table({"text": texts[:sentences]}), source)
    for round_ in range(1, rounds + 1):
        speeds = {}
        for command in ("specificity", "encode"):
            before = load()
            out = work / f"{command}.parquet"
            wall, tree, _ = run([sys.executable, "-m", "probsent", command, "--input", str(source), "--output",
                                 str(out), "--force"])
            speeds[command] = sentences / wall
            print(f"  round {round_}: probsent {command}, {sentences:,} sentences, Parquet in and out: {wall:.1f} s "
                  f"wall, {speeds[command]:,.0f} sentences/s, peak {tree:,.0f} MB in the process tree; load "
                  f"{before} -> {load()}")
            out.unlink()
        print(f"  round {round_}: encode runs at {speeds['encode'] / speeds['specificity']:.2f} x specificity's speed")
    source.unlink()


def build_5m(data: Path, target: Path) -> Path:
    """The shared pairs four times over, as plain TSV (each copy in the file's order)."""
    if not target.exists():  # block by block: this process stays small (see peak_mb)
        with open(target, "wb") as out:
            for _ in range(4):
                with gzip.open(data, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 24), b""):
                        out.write(block)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PROBSENT_DATA_DIR")
                        or str(REPO.parent / "shared" / "data"))
    parser.add_argument("--work", default=tempfile.gettempdir(), help="where the 5M-pair file and caches go")
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--encode", type=int, default=0, help="also time encode beside specificity on N sentences")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of encode beside specificity")
    parser.add_argument("--skip-5m", action="store_true")
    parser.add_argument("--skip-training", action="store_true", help="only the encode rounds")
    parser.add_argument("--child-prepare", nargs=2, help=argparse.SUPPRESS)
    if sys.argv[1:2] == ["--child-train"]:
        child_train(sys.argv[2:])
        return
    args = parser.parse_args()
    if args.child_prepare:
        child_prepare(*args.child_prepare)
        return
    data = Path(args.data_dir) / "paraphrase" / "pairs.tsv.gz"
    work = Path(args.work)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{cpu_model()}, {cores} cores; load average {load()}")
    files = [] if args.skip_training else [("1.26M pairs (pairs.tsv.gz)", data)]
    if not (args.skip_5m or args.skip_training):
        files.append(("5.05M pairs (each pair four times, plain TSV)", build_5m(data, work / "pairs-x4.tsv")))
    for name, path in files:
        print(name)
        prepare(path, work)
        train(path, work, args.max_steps)
    if args.encode:
        encode_beside_specificity(data, work, args.encode, args.rounds)


if __name__ == "__main__":
    main()
