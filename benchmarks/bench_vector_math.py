"""How often a resumed training run leaves the bit-exact path of the uninterrupted one because
of torch's vector-math race (probsent/numerics.py), with and without probsent's fix.

The scenario of the failure seen in CI (tests/test_training.py, kill and resume): a toy
Wordsum run on the torch engine is trained to step 124 (a checkpoint) and, uninterrupted, to
step 126 (the reference). Each trial starts a process resuming a copy of the checkpoint and
kills it (SIGKILL) after a random 0-3 s, as the test does, then resumes a fresh copy to step
126 in a new process and compares the weights with the reference, bit for bit. "with" is probsent as shipped; "without"
is the same process with ``probsent.numerics.settle_vector_math`` replaced by a no-op before
probsent is imported. The two modes alternate, so both see the same load. The race needs two
threads to make their first call at the same moment, which a busy machine (CI's) makes more
likely: ``--busy N`` runs N spinning processes beside the trials.

    .venv/bin/python benchmarks/bench_vector_math.py [--trials 40] [--busy 2] [--work DIR]
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.helpers import write_toy_pairs  # noqa: E402

LAUNCH = """
import sys, types
if sys.argv[1] == "without":
    stub = types.ModuleType("probsent.numerics")
    stub.settle_vector_math = lambda: None
    sys.modules["probsent.numerics"] = stub
from probsent.cli import main
sys.argv = ["probsent"] + sys.argv[2:]
main()
"""


def train(mode: str, data: Path, out: Path, steps: int | None, wait: bool = True) -> subprocess.Popen:
    """``probsent train`` of the toy Wordsum run into ``out`` (resumed if it holds one)."""
    command = [sys.executable, "-c", LAUNCH, mode, "train", "--model", "wordsum", "--data", str(data),
               "--out", str(out), "--batch-size", "10", "--megabatch", "2", "--eval-every", "3",
               "--epochs", "4", "--engine", "torch", "--quiet", "--no-validation", "--resume"]
    if steps is not None:
        command += ["--max-steps", str(steps)]
    process = subprocess.Popen(command, env=dict(os.environ, PYTHONPATH=str(REPO)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if wait and process.wait() != 0:
        raise SystemExit(f"training in {out} failed")
    return process


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40, help="resumed processes each way")
    parser.add_argument("--busy", type=int, default=0, help="spinning processes beside the trials")
    parser.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temporary one)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-vector-math-"))
    work.mkdir(parents=True, exist_ok=True)
    data = write_toy_pairs(work / "toy.tsv", 40)
    for name, steps in (("reference", 126), ("checkpoint", 124)):
        shutil.rmtree(work / name, ignore_errors=True)
        train("with", data, work / name, steps)
    reference = load_file(str(work / "reference" / "last" / "model.safetensors"))
    rng = random.Random(0)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    departed = {"without": 0, "with": 0}
    for _ in range(args.trials):
        for mode in departed:
            out = work / "trial"
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(work / "checkpoint", out)
            killed = train(mode, data, out, None, wait=False)
            time.sleep(rng.uniform(0.0, 3.0))
            killed.send_signal(signal.SIGKILL)
            killed.wait()
            shutil.rmtree(out)
            shutil.copytree(work / "checkpoint", out)
            train(mode, data, out, 126)
            got = load_file(str(out / "last" / "model.safetensors"))
            departed[mode] += not all(torch.equal(reference[k], got[k]) for k in reference)
    for spinner in spinners:
        spinner.kill()
        spinner.wait()
    print(f"busy processes beside the trials: {args.busy}; load average after: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| vector math settled on import | resumed processes | weights not bit-equal to the uninterrupted run |")
    print("|---|---:|---:|")
    for mode, count in departed.items():
        print(f"| {mode} | {args.trials} | {count} ({100 * count / args.trials:.0f}%) |")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
