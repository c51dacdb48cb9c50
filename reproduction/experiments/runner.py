"""Run ``probsent`` commands for the experiments: one subprocess each, on one torch thread."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from reproduction.experiments.paths import REPO


def run_probsent(*args: str, log: Path | None = None) -> None:
    """Run the ``probsent`` command of this environment on one thread; raise if it fails."""
    command = [sys.executable, "-m", "probsent.cli", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with open(log, "a") if log else open(os.devnull, "w") as sink:
        started = time.time()
        result = subprocess.run(command, cwd=REPO, env=env, stdout=sink if log else None,
                                stderr=sink if log else None)
    if result.returncode != 0:
        where = f" (log: {log})" if log else ""
        raise SystemExit(f"failed after {time.time() - started:.0f} s: probsent {' '.join(args)}{where}")


def evaluate(models: list[str], out: Path, baselines: bool = False, ablation: str | None = None,
             log: Path | None = None, transformer: bool = True) -> None:
    """``probsent eval`` of ``models`` (paths relative to the repository) into ``out``, with
    every baseline and the prior ablation's model where asked."""
    args = ["eval", "--out", str(out.relative_to(REPO)), "--force", "--quiet"]
    args += [] if transformer else ["--skip-transformer"]
    for model in models:
        args += ["--model", model]
    if ablation:
        args += ["--ablation-model", ablation]
    args += ["--baseline", "all"] if baselines else []
    run_probsent(*args, log=log)


def run_summarize() -> None:
    """Regenerate docs/RESULTS.md (``python -m reproduction.experiments.summarize``) in a fresh process."""
    subprocess.run([sys.executable, "-m", "reproduction.experiments.summarize"], cwd=REPO, check=True)
