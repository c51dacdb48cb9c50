"""Where WLO training's time goes with the torch engine (the reference), per mega-batch, on
the main training mixture (benchmarks/bench_engines.py times the parts of the fast engine).

Trains a WLO with the plan's main settings for a few hundred steps (untrained start) and
prints the wall seconds of each part per mega-batch of 2,000 pairs: encoding the mega-batch,
mining its negatives (the compiled kernel on the CPU), and the 20 gradient steps (forward, backward, optimizer). Only prints.

    OMP_NUM_THREADS=2 python benchmarks/profile_wlo_training.py [--steps 200]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import probsent.training.negatives as negatives  # noqa: E402
import probsent.training.trainer as trainer_module  # noqa: E402
from reproduction.experiments.plan import MAIN_WLO, MIXTURE, PAIRS  # noqa: E402
from probsent.settings import TrainConfig  # noqa: E402
from benchmarks.bench_engines import timed as timed_into  # noqa: E402
from probsent.training.trainer import Trainer  # noqa: E402

SECONDS: dict[str, float] = defaultdict(float)


def timed(name: str, function: Callable[..., Any], key: Callable[..., str] | None = None) -> Callable[..., Any]:
    """``function``, adding its wall time to SECONDS[name] (or SECONDS[key(*args, **kwargs)])."""
    return timed_into(SECONDS, name, function, key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO / PAIRS))
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = TrainConfig(model="wlo", data=args.data, out=str(Path(tmp) / "run"), max_steps=args.steps,
                             eval_every=10**9, engine="torch", **MIXTURE, **MAIN_WLO)
        trainer = Trainer(config, progress=False, log=lambda _: None)
        # the parts, timed where the trainer and the mining call them
        trainer_module.encode_by_length = timed("", trainer_module.encode_by_length,
                                                key=lambda *a, **k: "steps: forward" if k.get("with_kl")
                                                else "encoding the mega-batch")
        negatives.encode_by_length = timed("encoding the mega-batch", negatives.encode_by_length)
        negatives.mine_fastest = timed("mining", negatives.mine_fastest)
        trainer.optimizer.step = timed("steps: optimizer", trainer.optimizer.step)
        backward = torch.Tensor.backward
        torch.Tensor.backward = timed("steps: backward", backward)  # type: ignore[method-assign]
        start = time.perf_counter()
        try:
            trainer.train()
        finally:
            torch.Tensor.backward = backward  # type: ignore[method-assign]
        total = time.perf_counter() - start
    megabatches = args.steps / config.megabatch
    pairs = args.steps * config.batch_size
    print(f"{torch.get_num_threads()} torch threads, {args.steps} steps ({pairs:,} pairs of the main "
          f"mixture, untrained start): {pairs / total:,.0f} pairs/s\n")
    print("| part | seconds per mega-batch |")
    print("|---|---:|")
    for name in ("encoding the mega-batch", "mining",
                 "steps: forward", "steps: backward", "steps: optimizer"):
        print(f"| {name} | {SECONDS[name] / megabatches:.3f} |")
    print(f"| everything (loop, checkpoint at the end included) | {total / megabatches:.3f} |")


if __name__ == "__main__":
    main()
