"""The torch engine's WLO training step with and without the fused path of ``models/wlo_fused.py``.

Builds one torch-engine ``Trainer`` (WLO, the plan's main settings) on a pair file (default: every
200th of the shared training pairs, 6,000 pairs of every source, as tests/test_training.py's), mines the
negatives of its first mega-batches once, then times the same mini-batch steps (``Trainer._step``:
encoding with the prior, loss, backward, Adam), each round from the same starting weights, with
the fused path and without it (its two entry points made to decline, so the reference path of
``models/wlo.py`` runs). The two variants alternate over ``--rounds`` rounds; prints pairs/s of
each (of wall time and of the process's CPU time, which another process's load disturbs less),
per round and as medians, and the ratio fused / reference. Only prints; no asserts.

    python benchmarks/bench_wlo_fused.py [--data FILE] [--megabatches 1] [--rounds 5] [--threads N]
"""
from __future__ import annotations

import argparse
import copy
import gzip
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import probsent.models.wlo as wlo_module  # noqa: E402
from experiments.plan import MAIN_WLO, PAIRS  # noqa: E402
from probsent.settings import TrainConfig  # noqa: E402
from probsent.training.negatives import megabatch_negatives  # noqa: E402
from probsent.training.trainer import Trainer  # noqa: E402

FUSED = (wlo_module.fused_forward_with_prior, wlo_module.fused_encode_batches)


def every_200th_pair(path: Path, count: int = 6000) -> Path:
    """Every 200th line of the shared training pairs, ``count`` of them, written to ``path``."""
    with gzip.open(REPO / PAIRS, "rt", encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for number, line in enumerate(source):
            if number >= 200 * count:
                break
            if number % 200 == 0:
                out.write(line)
    return path


def use_fused(on: bool) -> None:
    """The fused path on, or declined everywhere (the reference path runs)."""
    if on:
        wlo_module.fused_forward_with_prior, wlo_module.fused_encode_batches = FUSED
    else:
        wlo_module.fused_forward_with_prior = lambda *args: None
        wlo_module.fused_encode_batches = lambda *args: None


def prepared_steps(trainer: Trainer, megabatches: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    """(ids, offsets, sentences s1 s2 n1 n2, pairs) of every mini-batch of the first ``megabatches``
    mega-batches of epoch 0, their negatives mined once by the untrained model."""
    cfg = trainer.config
    per_mega = cfg.batch_size * cfg.megabatch
    order = trainer._epoch_order(0)
    steps = []
    for first in range(0, megabatches * per_mega, per_mega):
        pairs = order[first:first + per_mega]
        count = len(pairs)
        if count < 2:  # the file has fewer mega-batches
            break
        ids, offsets = trainer.data.sentences(np.concatenate([2 * pairs, 2 * pairs + 1]))
        negative = megabatch_negatives(cfg, np.arange(2 * count), count, trainer.encoder, ids, offsets, None)
        for start in range(0, count, cfg.batch_size):
            rows = np.arange(start, min(count, start + cfg.batch_size))
            sentences = np.concatenate([rows, rows + count, negative[rows], negative[rows + count]])
            steps.append((ids, offsets, sentences, len(rows)))
    return steps


def timed_round(trainer: Trainer, start: torch.nn.Module, steps: list, fused: bool) -> tuple[float, float]:
    """Pairs per second of wall time and per second of this process's CPU time of ``steps``
    from the weights of ``start``, fused or not."""
    use_fused(fused)
    trainer.encoder = copy.deepcopy(start)
    trainer.optimizer = trainer._optimizer(trainer.encoder)
    trainer.generator.manual_seed(0)
    began, began_cpu = time.perf_counter(), time.process_time()
    for ids, offsets, sentences, pairs in steps:
        trainer._step(ids, offsets, sentences, pairs)
    seconds, cpu_seconds = time.perf_counter() - began, time.process_time() - began_cpu
    use_fused(True)
    pairs = sum(step[3] for step in steps)
    return pairs / seconds, pairs / cpu_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None, help="a pair file (default: every 200th shared training pair)")
    parser.add_argument("--megabatches", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        os.environ.setdefault("PROBSENT_CACHE", str(Path(workdir) / "cache"))
        data = args.data or str(every_200th_pair(Path(workdir) / "pairs.tsv"))
        config = TrainConfig(model="wlo", data=data, out=str(Path(workdir) / "out"), engine="torch",
                             eval_every=10**9, **MAIN_WLO)
        trainer = Trainer(config, progress=False, log=lambda _: None)
        trainer.lock.release()
        steps = prepared_steps(trainer, args.megabatches)
        start = copy.deepcopy(trainer.encoder)
        if args.threads:  # here: preparing the corpus and mining may change torch's count
            torch.set_num_threads(args.threads)
        print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
              f"{torch.get_num_threads()} threads, load {os.getloadavg()[0]:.2f}; {len(steps)} steps of "
              f"{config.batch_size} pairs from {args.data or 'every 200th shared training pair'}")
        rates: dict[str, list[tuple[float, float]]] = {"fused": [], "reference": []}
        for round_number in range(args.rounds):
            # alternate which goes first, so that a drift of the machine's speed affects both
            for fused in ((True, False) if round_number % 2 == 0 else (False, True)):
                rates["fused" if fused else "reference"].append(timed_round(trainer, start, steps, fused))
            (fused_wall, fused_cpu), (reference_wall, reference_cpu) = rates["fused"][-1], rates["reference"][-1]
            print(f"round {round_number + 1}: pairs/s of wall time: fused {fused_wall:,.0f}, reference "
                  f"{reference_wall:,.0f}, ratio {fused_wall / reference_wall:.2f}; of CPU time: fused "
                  f"{fused_cpu:,.0f}, reference {reference_cpu:,.0f}, ratio {fused_cpu / reference_cpu:.2f}")
        for k, clock in enumerate(("wall", "CPU")):
            fused_rate = statistics.median(rate[k] for rate in rates["fused"])
            reference_rate = statistics.median(rate[k] for rate in rates["reference"])
            print(f"median pairs/s of {clock} time: fused {fused_rate:,.0f}, reference {reference_rate:,.0f}; "
                  f"fused / reference = {fused_rate / reference_rate:.2f}x")
        print(f"torch threads {torch.get_num_threads()}, load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
