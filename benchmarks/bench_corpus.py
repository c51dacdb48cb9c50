"""Scoring a large corpus, and one sentence, from the command line (issues 14 and 25).

In one run, on the first sides of the first N shared paraphrase pairs (default 1,000,000):

* the tokenizers alone, in this process: NLTK's ``TreebankWordTokenizer`` (on the first
  ``--nltk-sample`` sentences: it is slow), probsent's reference ``tokenize``, the piece
  tokenizer in Python (``piece_tokenize``: piece numbers) and the compiled one that corpus
  scoring uses (``compiled_tokenize``: the vocabulary ids scoring sums, from lists of str and
  from Arrow columns as Parquet gives them), in batches of 8,192, each starting with an empty
  cache (numba's kernels loaded before); sentences/s, and how many sentences the compiled
  one handed to the reference tokenizer whole;
* ``probsent specificity`` end to end (interpreter start, reading, scoring, writing) with 1
  and 2 worker processes, Parquet in and out (an ``id`` and a ``text`` column) and text in
  and out (one sentence a line, TSV out): wall time, sentences/s, CPU time and peak memory
  of the whole process tree (proportional set size, summed over the process and all its
  descendants; both sampled from /proc every 0.25 s); the outputs must agree row for row;
* one sentence from the command line (``probsent specificity "The Dow fell 2.3 % on
  Tuesday."``), five times: median wall time and the largest peak resident memory (GNU
  ``/usr/bin/time``);
* where a worker's time goes: CPU seconds per step of scoring the Parquet file chunk by chunk
  in this process (reading, the column's bytes, the compiled tokenizer, the term sums,
  writing; the reference tokenizer beside them), and the fixed start-up of a scoring process
  (interpreter, imports, the model, numba's first call) in a fresh process;
* with ``--spark``, also Spark ``local[2]`` on the Parquet file (its job time and whole run).

Commands run as ``python -m probsent.cli`` from this checkout, after one small warm-up run
(numba compiles the kernels once per machine and caches them). The machine's load average is
printed before, during and after: compare numbers of one run, not across runs.

    .venv/bin/python benchmarks/bench_corpus.py [--sentences 1000000] [--quick] [--work DIR] [--spark]

``--quick``: 100,000 sentences, NLTK on 10,000, the command-line sentence three times.
"""
from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO.parent / "shared" / "data" / "paraphrase" / "pairs.tsv.gz"
PROBSENT = [sys.executable, "-m", "probsent.cli"]  # this checkout's code (the command runs in REPO)
ONE_SENTENCE = "The Dow fell 2.3 % on Tuesday."
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def first_sides(count: int) -> list[str]:
    """The first side of the first ``count`` pairs."""
    with gzip.open(PAIRS, "rt", encoding="utf-8", newline="\n") as pairs:
        texts = [line.split("\t", 1)[0] for _, line in zip(range(count), pairs)]
    if len(texts) < count:
        raise SystemExit(f"{PAIRS} has only {len(texts):,} pairs")
    return texts


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


def one_sentence(repeat: int) -> tuple[float, int]:
    """(median wall seconds, largest peak resident bytes) of scoring one sentence from the
    command line, each run a fresh process. The peak is GNU time's (``/usr/bin/time -f %M``):
    the resource usage of a child of this large process would count this process's pages,
    which the child holds between its fork and its exec."""
    walls, peaks = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", *PROBSENT, "specificity", ONE_SENTENCE],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
        walls.append(time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(f"probsent specificity failed: {done.stderr[-500:]}")
        peaks.append(int(done.stderr.strip().splitlines()[-1]) * 1024)
    return statistics.median(walls), max(peaks)


def step_profile(parquet: Path, out: Path, count: int) -> list[tuple[str, float]]:
    """(step, CPU microseconds per sentence) of scoring the first ``count`` rows of ``parquet``
    chunk by chunk in this process, as a worker and the parent do it."""
    from probsent.api import load, scoring_engine
    from probsent.text.segment_sums import term_sums
    from probsent.text.tokenize import tokenize_many
    from probsent.text.utf8_texts import Utf8Texts

    table = scoring_engine(load()).term_table("scoring")
    table.token_ids(Utf8Texts.from_strings(["warm up."]))
    steps = dict.fromkeys(["read a Parquet batch (8,192 rows)", "the text column as Utf8Texts (its bytes)",
                           "compiled tokenizer: vocabulary ids", "term sums (compiled), NaN for no sentence",
                           "write the batch with its scores", "(beside: the column as Python str)",
                           "(beside: the reference tokenizer on those str)"], 0.0)
    names = list(steps)
    clock = time.process_time
    done = 0
    batches = pq.ParquetFile(parquet).iter_batches(batch_size=8192)
    schema = pa.schema([("id", pa.int64()), ("text", pa.string()), ("specificity", pa.float64())])
    with pq.ParquetWriter(out, schema, write_page_checksum=True) as writer:
        while done < count:
            start = clock()
            batch = next(batches)
            steps[names[0]] += clock() - start
            start = clock()
            texts = Utf8Texts.from_arrow(batch.column("text"))
            steps[names[1]] += clock() - start
            start = clock()
            ids, offsets = table.token_ids(texts)
            steps[names[2]] += clock() - start
            start = clock()
            scores = -(table.prior_entropy + term_sums(table.terms, ids, offsets))
            scores[offsets[1:] == offsets[:-1]] = np.nan
            steps[names[3]] += clock() - start
            start = clock()
            writer.write_batch(pa.record_batch([batch.column(0), batch.column(1),
                                                pa.array(scores, mask=np.isnan(scores))], schema=schema))
            steps[names[4]] += clock() - start
            start = clock()
            strings = batch.column("text").to_pylist()
            steps[names[5]] += clock() - start
            start = clock()
            tokenize_many(strings)
            steps[names[6]] += clock() - start
            done += batch.num_rows
    return [(name, seconds / done * 1e6) for name, seconds in steps.items()]


START_UP = """
import time
start = time.perf_counter()
from probsent.api import load, scoring_engine
from probsent.text.utf8_texts import Utf8Texts
table = scoring_engine(load()).term_table("scoring")
loaded = time.perf_counter()
import numba
imported = time.perf_counter()
table.text_scores(Utf8Texts.from_strings(["The Dow fell."] * 2))
print(loaded - start, imported - loaded, time.perf_counter() - imported)
"""


def start_up() -> str:
    """The fixed start-up of a scoring process, measured in a fresh one."""
    begin = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", START_UP], capture_output=True, text=True, cwd=REPO, check=True)
    total = time.perf_counter() - begin
    model, numba, first = map(float, done.stdout.split())
    return (f"a scoring process's fixed start-up: {total:.2f} s wall in all; probsent and the model {model:.2f} s, "
            f"import numba {numba:.2f} s, the first compiled call (numba's set-up, cached kernels) {first:.2f} s")


def tokenizer_rates(texts: list[str], nltk_count: int) -> tuple[list[tuple[str, int, float]], str]:
    """(tokenizer, sentences, sentences/s) of each tokenizer alone, in this process; and what
    the compiled tokenizer handed to the reference on all the sentences."""
    from nltk.tokenize import TreebankWordTokenizer
    import nltk.redos

    from probsent.text.compiled_tokenize import CompiledTokenIds
    from probsent.text.piece_tokenize import PieceTokenizer
    from probsent.text.tokenize import tokenize_many
    from probsent.text.utf8_texts import Utf8Texts
    from probsent.api import load
    from probsent.readouts.word_terms import MAX_TOKENS

    nltk.redos.DEFAULT_TIMEOUT = None  # NLTK's ReDoS guard costs time and changes no result
    treebank = TreebankWordTokenizer().tokenize
    index = load().vocab.index
    CompiledTokenIds(index, MAX_TOKENS)(texts[:10])  # numba's cached kernels loaded (or compiled)
    arrays = [pa.array(texts[i:i + 8192], pa.string()) for i in range(0, len(texts), 8192)]
    compiled: list[CompiledTokenIds] = []

    def batched(run) -> Callable:  # noqa: ANN001
        return lambda items: [run(items[i:i + 8192]) for i in range(0, len(items), 8192)]

    def from_arrow(items: list[str]) -> None:
        compiled.append(CompiledTokenIds(index, MAX_TOKENS))
        for k, array in enumerate(arrays[:(len(items) + 8191) // 8192]):
            compiled[-1](Utf8Texts.from_arrow(array[:len(items) - 8192 * k]))

    cases = [("NLTK TreebankWordTokenizer (text.lower())", lambda items: [treebank(t.lower()) for t in items]),
             ("probsent.text.tokenize (reference): token lists", tokenize_many),
             ("probsent.text.piece_tokenize (piece cache, Python): piece numbers",
              lambda items: batched(PieceTokenizer().split)(items)),
             ("probsent.text.compiled_tokenize: vocabulary ids, from lists of str",
              lambda items: batched(CompiledTokenIds(index, MAX_TOKENS))(items)),
             ("probsent.text.compiled_tokenize: vocabulary ids, from Arrow columns (Parquet scoring)", from_arrow)]
    rows = []
    for count in (nltk_count, len(texts)):
        for name, run in cases:
            if name.startswith("NLTK") and count != nltk_count:
                continue
            start = time.perf_counter()
            run(texts[:count])
            rows.append((name, count, count / (time.perf_counter() - start)))
    last = compiled[-1]
    non_ascii = sum(not t.isascii() for t in texts)
    note = (f"compiled tokenizer on all {last.texts:,} sentences: {last.fallbacks:,} handed to the reference whole "
            f"(not printable, or over the token cap), {non_ascii:,} non-ASCII (by its piece cache), "
            f"{last.settled:,} pieces tokenized once by Python")
    return rows, note


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1_000_000)
    parser.add_argument("--nltk-sample", type=int, default=50_000,
                        help="NLTK and the others on the first this many sentences (default 50,000)")
    parser.add_argument("--quick", action="store_true",
                        help="a quick run: 100,000 sentences, NLTK on 10,000, one sentence three times")
    parser.add_argument("--work", help="directory for the corpus and outputs (default: a temporary one)")
    parser.add_argument("--spark", action="store_true", help="also Spark local[2] on the Parquet file")
    parser.add_argument("--spark-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spark_child:
        spark_child(*args.spark_child)
        return
    if args.quick:
        args.sentences, args.nltk_sample = 100_000, 10_000
    work = Path(args.work or tempfile.mkdtemp(prefix="probsent-bench-corpus-"))
    work.mkdir(parents=True, exist_ok=True)
    load = lambda: " ".join(f"{x:.2f}" for x in os.getloadavg())  # noqa: E731
    print(f"load before: {load()} (1, 5, 15 min); {os.cpu_count()} cores; {args.sentences:,} sentences")
    size = args.sentences
    texts = first_sides(size)
    write_corpus(work / f"corpus{size}.parquet", size)
    (work / f"corpus{size}.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")

    token_rows, fallback_note = tokenizer_rates(texts, min(args.nltk_sample, size))
    nltk_rate = token_rows[0][2]
    for name, count, rate in token_rows:
        print(f"  {name}, {count:,} sentences: {rate:,.0f} sentences/s (x{rate / nltk_rate:.1f} NLTK)", flush=True)
    print(f"  {fallback_note} (load {load()})", flush=True)
    warm = work / "warm-up.txt"
    warm.write_text("".join(t + "\n" for t in texts[:4096]), encoding="utf-8")
    start = time.perf_counter()
    measured([*PROBSENT, "specificity", "--input", str(warm), "--output", str(work / "warm-up.tsv"), "--force"])
    print(f"  warm-up run (4,096 sentences; loads or compiles numba's kernels): {time.perf_counter() - start:.1f} s")

    def cli(kind: str, workers: int) -> list[str]:
        suffix = {"parquet": "parquet", "text": "txt"}[kind]
        out = {"parquet": "parquet", "text": "tsv"}[kind]
        return [*PROBSENT, "specificity", "--input", str(work / f"corpus{size}.{suffix}"),
                "--output", str(work / f"cli{workers}-{size}.{out}"), "--workers", str(workers), "--force"]

    runs = [(f"CLI, {workers} worker{'s' if workers > 1 else ''}, {kind}", cli(kind, workers))
            for kind in ("parquet", "text") for workers in (1, 2)]
    if args.spark:
        runs.append(("Spark local[2], parquet", [sys.executable, __file__, "--spark-child",
                                                 str(work / f"corpus{size}.parquet"), str(work / f"spark-{size}")]))
    rows = []
    for name, command in runs:
        wall, cpu, peak, out = measured(command)
        job = float(out.strip().splitlines()[-1]) if "Spark" in name else None
        rows.append((name, wall, cpu, peak, job))
        print(f"  {name}: {wall:.1f} s, CPU {cpu:.1f} s, peak {peak / 2**20:,.0f} MiB (load {load()})", flush=True)
    reference = scores(work / f"cli2-{size}.parquet")
    others = [work / f"cli1-{size}.parquet"] + ([work / f"spark-{size}"] if args.spark else [])
    for other in others:
        got = scores(other)
        print(f"{other.name} vs cli2: {len(got):,} rows, nulls in the same rows: "
              f"{np.array_equal(np.isnan(got), np.isnan(reference))}, "
              f"largest difference {np.nanmax(np.abs(got - reference)):.3g}")
    for workers in (1, 2):
        tsv = (work / f"cli{workers}-{size}.tsv").read_text(encoding="utf-8").splitlines()
        got = np.array([float(line.split("\t", 1)[0]) for line in tsv])
        print(f"cli{workers}-{size}.tsv vs cli2 parquet: {len(got):,} rows, largest difference "
              f"{np.nanmax(np.abs(got - reference)):.3g} (TSV prints 4 decimals)")
    repeat = 3 if args.quick else 5
    one_wall, one_peak = one_sentence(repeat)
    profile_count = min(size, 300_000)
    profile = step_profile(work / f"corpus{size}.parquet", work / "profile.parquet", profile_count)
    fixed = start_up()
    print(f"load after: {load()}\n")
    print(fallback_note + "\n")

    print("| tokenizer alone (this process) | sentences | sentences/s | vs NLTK |")
    print("|---|---:|---:|---:|")
    for name, count, rate in token_rows:
        print(f"| {name} | {count:,} | {rate:,.0f} | {rate / nltk_rate:.1f} |")
    print()
    print("| end to end | sentences | wall s | sentences/s | vs NLTK alone | CPU s (tree) | sentences per "
          "CPU-second | peak memory (tree) | Spark job only |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, wall, cpu, peak, job in rows:
        extra = f"{job:.1f} s, {size / job:,.0f}/s" if job else ""
        print(f"| {name} | {size:,} | {wall:.1f} | {size / wall:,.0f} | {size / wall / nltk_rate:.1f} | {cpu:.1f} "
              f"| {size / cpu:,.0f} | {peak / 2**20:,.0f} MiB | {extra} |")
    print()
    print(f"| one sentence from the command line | wall s (median of {repeat}) | peak resident memory |")
    print("|---|---:|---:|")
    print(f"| `probsent specificity \"{ONE_SENTENCE}\"` | {one_wall:.2f} | {one_peak / 2**20:,.0f} MiB |")
    print()
    print(f"| step (one process, the first {profile_count:,} rows of the Parquet file) | CPU µs per sentence |")
    print("|---|---:|")
    for name, micros in profile:
        print(f"| {name} | {micros:.2f} |")
    print()
    print(fixed)


if __name__ == "__main__":
    main()
