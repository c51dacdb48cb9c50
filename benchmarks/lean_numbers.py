"""The numbers of issue 35 ("the lean house"), printed from the tree as it is: how many flags
``probsent train --help`` lists, the lines of ``probsent/training/`` and of the trainer's loop,
the definitions of the Gaussian constants, and the lengths of the long docs; with
``--timings``, why the mining kernel is not the matrix kernel plus an argmax (both timed on the
same 4,000 Gaussians, a mega-batch). Only prints.

    .venv/bin/python benchmarks/lean_numbers.py [--timings]
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def train_flags() -> int:
    """The flags ``probsent train --help`` lists (``--help`` itself, and the removed flags that are
    kept hidden only to name the tag where they went, not counted)."""
    from probsent.cli import build_parser

    parser = build_parser(plugins=False)  # probsent's own commands (train's flags)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    train = sub.choices["train"]
    return sum(1 for a in train._actions
               if a.option_strings and "-h" not in a.option_strings and a.help != argparse.SUPPRESS)


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def function_lines(path: Path, owner: str, name: str) -> int:
    """Lines of ``owner.name`` in ``path`` (its decorators and docstring included)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item.end_lineno - item.lineno + 1
    raise LookupError(f"{owner}.{name} not in {path}")


def constant_definitions(names: set[str]) -> list[str]:
    """file:line of every assignment to one of ``names`` in the package."""
    found = []
    for path in sorted((REPO / "probsent").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def mining_timings(n: int = 4000, dim: int = 50, repeats: int = 5) -> tuple[float, float]:
    """Median seconds to mine ``n`` Gaussians' negatives by the mining kernel, and by
    ``gaussian_matrix``'s N x M kernel (float64, in blocks of 500 rows) then an argmax."""
    import time

    import numpy as np

    from probsent.gaussian_matrix import expected_inner_product_matrix
    from probsent.training.fast.mining_kernels import mine_gaussian_negatives

    rng = np.random.default_rng(0)
    mean = rng.normal(0, 3, (n, dim)).astype(np.float32)
    logvar = rng.normal(-2, 1, (n, dim)).astype(np.float32)
    partner = np.arange(n) ^ 1

    def by_matrix() -> np.ndarray:
        wide, var = mean.astype(np.float64), np.exp(logvar.astype(np.float64))
        best = np.empty(n, np.int64)
        for first in range(0, n, 500):
            rows = np.arange(first, min(n, first + 500))
            out = np.empty((len(rows), n))
            expected_inner_product_matrix(wide[rows], var[rows], wide, var, out)
            out[np.arange(len(rows)), rows] = out[np.arange(len(rows)), partner[rows]] = -np.inf
            best[rows] = out.argmax(1)
        return best

    def by_kernel() -> np.ndarray:
        return mine_gaussian_negatives(mean, logvar, partner)

    assert np.array_equal(by_kernel(), by_matrix())  # also compiles both
    seconds: dict[str, list[float]] = {"kernel": [], "matrix": []}
    for _ in range(repeats):  # alternating, so a drift of the machine hits both
        for name, run in (("kernel", by_kernel), ("matrix", by_matrix)):
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    return float(np.median(seconds["kernel"])), float(np.median(seconds["matrix"]))


def main() -> int:
    training = sorted((REPO / "probsent" / "training").rglob("*.py"))
    trainer = REPO / "probsent" / "training" / "trainer.py"
    definitions = constant_definitions({"LOG_2PI"})
    rows = [
        ("flags of `probsent train --help` (goal <= 32)", train_flags()),
        ("lines of probsent/training/ (2,791 on 45714a7; goal: 20% fewer)", sum(lines(p) for p in training)),
        ("lines of trainer.py", lines(trainer)),
        ("lines of Trainer._train, the loop (goal: about 120)", function_lines(trainer, "Trainer", "_train")),
        ("modules in probsent/training/losses/", len(list((REPO / "probsent/training/losses").glob("*.py")))),
        ("definitions of LOG_2PI (goal 1): " + ", ".join(definitions), len(definitions)),
        ("lines of docs/PERFORMANCE.md (goal <= 250)", lines(REPO / "docs" / "PERFORMANCE.md")),
        ("lines of reproduction/docs/RESULTS.md", lines(REPO / "reproduction" / "docs" / "RESULTS.md")),
    ]
    for label, value in rows:
        print(f"{value:>7,}  {label}")
    if "--timings" in sys.argv[1:]:
        kernel, matrix = mining_timings()
        print(f"mining 4,000 x 50 Gaussians: the mining kernel {1e3 * kernel:.0f} ms, the matrix kernel "
              f"then an argmax {1e3 * matrix:.0f} ms ({matrix / kernel:.0f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
