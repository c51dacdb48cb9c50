"""How often a fresh process gets a low-accuracy result from torch's first parallel calls of MKL's
vector math (see probsent/numerics.py), with and without probsent's fix.

Each trial is a fresh interpreter that, as its first torch work, calls sqrt, exp, log, log1p,
expm1 and tanh on 4,096 float32 and float64 values (two chunks, so both intra-op threads of a
2-core machine run at once) and compares with numpy's results; a process counts as corrupted
when any value is off by more than 4 units in the last place. "without" imports torch alone,
"with" imports probsent first (which settles VML's choice of kernels on one thread). The
trials alternate, so both see the same load.

    .venv/bin/python benchmarks/bench_vector_math.py [--trials 100]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TRIAL = """
import sys
import numpy as np
import torch
if sys.argv[1] == "with":
    sys.path.insert(0, sys.argv[2])
    import probsent  # noqa: F401
g = torch.Generator().manual_seed(0)
bad = 0
for name, low, high in (("sqrt", 1e-6, 1.0), ("exp", -5, 5), ("log", 1e-3, 10),
                        ("log1p", 0, 3), ("expm1", -2, 2), ("tanh", -3, 3)):
    for dtype in (torch.float32, torch.float64):
        x = (torch.rand(4096, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
        got = getattr(torch, name)(x).double().numpy()
        exact = getattr(np, name)(x.double().numpy())
        eps = np.finfo(np.float32 if dtype == torch.float32 else np.float64).eps
        bad += int(np.any(np.abs(got - exact) > 4 * eps * np.abs(exact) + 1e-300))
print(bad)
"""


def trial(mode: str) -> int:
    """Functions with a low-accuracy result in one fresh process."""
    done = subprocess.run([sys.executable, "-c", TRIAL, mode, str(REPO)], capture_output=True,
                          text=True, check=True)
    return int(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100, help="fresh processes each way")
    args = parser.parse_args()
    corrupted = {"without": 0, "with": 0}
    for _ in range(args.trials):
        for mode in corrupted:
            corrupted[mode] += trial(mode) > 0
    print("| probsent imported first | fresh processes | with a low-accuracy result |")
    print("|---|---:|---:|")
    for mode, count in corrupted.items():
        print(f"| {mode} | {args.trials} | {count} ({100 * count / args.trials:.1f}%) |")


if __name__ == "__main__":
    main()
