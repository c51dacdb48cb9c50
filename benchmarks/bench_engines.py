"""WLO training speed of the two engines, fast and torch, on the same pairs of the main mixture.

Trains a WLO with the plan's main settings (main mixture, untrained start, no validation) with
``--engine fast`` and ``--engine torch`` on the same first pairs of the same shuffled epoch,
and prints pairs/s of each and their ratio, the milliseconds per mega-batch of each part
(encoding the mega-batch, mining its negatives, the steps; the fast engine also prepares the
steps' scrambled tokens), the thread counts, and what one epoch of the main mixture costs.
The engines alternate over ``--rounds`` rounds and the medians are printed, so that a drift
of the machine's speed affects both. Only prints; no asserts. Measure on an idle machine
(``uptime``).

    OMP_NUM_THREADS=2 python benchmarks/bench_engines.py [--steps 400] [--torch-steps 200] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import probsent.training.negatives as negatives_module  # noqa: E402
import probsent.training.trainer as trainer_module  # noqa: E402
from reproduction.experiments.plan import MAIN_WLO, MIXTURE, PAIRS  # noqa: E402
from probsent.settings import TrainConfig  # noqa: E402
from probsent.training.fast.engine import compile_kernels  # noqa: E402
from probsent.training.trainer import Trainer  # noqa: E402


def timed(seconds: dict[str, float], name: str, function: Callable[..., Any],
          key: Callable[..., str] | None = None) -> Callable[..., Any]:
    """``function``, adding its wall time to seconds[name] (or seconds[key(*args, **kwargs)])."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[key(*args, **kwargs) if key else name] += time.perf_counter() - start
    return wrapper


def run(engine: str, data: str, steps: int, workdir: Path) -> tuple[float, dict[str, float], int]:
    """Train ``steps`` steps with ``engine``; returns pairs/s, seconds per part and pairs per epoch."""
    config = TrainConfig(model="wlo", data=data, out=str(workdir / engine), max_steps=steps,
                         eval_every=10**9, engine=engine, **MIXTURE, **MAIN_WLO)
    trainer = Trainer(config, progress=False, log=lambda _: None)
    seconds: dict[str, float] = defaultdict(float)
    originals = (trainer_module.encode_by_length, negatives_module.encode_by_length, negatives_module.mine_fastest)
    if engine == "torch":  # the parts, timed where the reference trainer and its miner call them
        trainer_module.encode_by_length = timed(seconds, "steps", originals[0])
        negatives_module.encode_by_length = timed(seconds, "encoding", originals[1])
        negatives_module.mine_fastest = timed(seconds, "mining", originals[2])
        backward, step = torch.Tensor.backward, trainer.optimizer.step
        torch.Tensor.backward = timed(seconds, "steps", backward)  # type: ignore[method-assign]
        trainer.optimizer.step = timed(seconds, "steps", step)
    start = time.perf_counter()
    try:
        trainer.train()
    finally:
        trainer_module.encode_by_length, negatives_module.encode_by_length, negatives_module.mine_fastest = originals
        if engine == "torch":
            torch.Tensor.backward = backward  # type: ignore[method-assign]
    total = time.perf_counter() - start
    if trainer.fast is not None:
        seconds.update(trainer.fast.timings)
    seconds["everything"] = total
    return steps * config.batch_size / total, seconds, trainer.data.num_pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO / PAIRS))
    parser.add_argument("--steps", type=int, default=400, help="steps of the fast engine (100 pairs each)")
    parser.add_argument("--torch-steps", type=int, default=200, help="steps of the torch engine")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each engine, alternating")
    args = parser.parse_args()
    import numba

    compile_seconds = compile_kernels()
    print(f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads, numba {numba.__version__} with {numba.get_num_threads()} "
          f"threads; kernels ready in {compile_seconds:.1f} s (compiled, or loaded from numba's cache)\n")
    steps = {"fast": args.steps, "torch": args.torch_steps}
    results: dict[str, list[tuple[float, dict[str, float], int]]] = {"fast": [], "torch": []}
    for round_ in range(args.rounds):
        for engine in ("fast", "torch"):
            with tempfile.TemporaryDirectory() as tmp:
                results[engine].append(run(engine, args.data, steps[engine], Path(tmp)))
        print(f"round {round_ + 1}: fast {results['fast'][-1][0]:,.0f} pairs/s, torch "
              f"{results['torch'][-1][0]:,.0f} pairs/s (x{results['fast'][-1][0] / results['torch'][-1][0]:.1f})",
              flush=True)
    print(f"\nmedians over {args.rounds} rounds (fast: {args.steps} steps, torch: {args.torch_steps} steps "
          f"of 100 pairs; 20 steps a mega-batch):\n")
    print("| engine | pairs/s | ms per mega-batch: encoding | mining | preparing steps | steps | everything |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    rate = {}
    for engine, runs in results.items():
        rate[engine] = statistics.median(r[0] for r in runs)
        megabatches = steps[engine] / 20
        ms = {part: statistics.median(1000 * r[1].get(part, 0.0) / megabatches for r in runs)
              for part in ("encoding", "mining", "preparing steps", "steps", "everything")}
        print(f"| {engine} | {rate[engine]:,.0f} | {ms['encoding']:.0f} | {ms['mining']:.0f} | "
              f"{ms['preparing steps']:.0f} | {ms['steps']:.0f} | {ms['everything']:.0f} |")
    epoch_pairs = results["fast"][0][2]
    print(f"\nfast / torch: x{rate['fast'] / rate['torch']:.1f} (medians). One epoch of the main mixture "
          f"({epoch_pairs:,} pairs): {epoch_pairs / rate['fast']:.0f} s with the fast engine, "
          f"{epoch_pairs / rate['torch']:.0f} s with torch (training only: no validation).")


if __name__ == "__main__":
    main()
