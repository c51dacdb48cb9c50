"""Run the untrained baselines on every specificity evaluation and print a table.

Usage: ``python -m probsent.evaluation.baseline_report [--data-dir DIR] [--minilm] [--json FILE]``

Rows: Majority, SPECITELLER, Length, Word Freq (sum/avg), GloVe (sum/avg) and, with
``--minilm``, all-MiniLM-L6-v2 [CLS]/mean norms. Columns: News accuracy and F1, Spearman x100
on Twitter/Yelp/Movie, length-normalized News accuracy and SNLI "hypothesis less specific" %.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Sequence

from probsent.errors import ProbsentError
from probsent.evaluation import baselines as bl
from probsent.evaluation import experiments as ex
from probsent.evaluation.datasets import DataDir

COLUMNS = ("News acc", "News F1", "Twitter", "Yelp", "Movie", "LenNorm", "SNLI E", "SNLI N", "SNLI C")


def baseline_scorers(data: DataDir, minilm: bool = False) -> list[ex.Scorer]:
    """The untrained scorers, in table order."""
    scorers: list[ex.Scorer] = [
        bl.LengthScorer(),
        bl.WordFrequencyScorer("sum"),
        bl.WordFrequencyScorer("avg"),
        bl.GloveScorer("sum", data),
        bl.GloveScorer("avg", data),
    ]
    if minilm:
        encoder = bl.MiniLMEncoder()
        scorers += [bl.MiniLMScorer("cls", encoder), bl.MiniLMScorer("mean", encoder)]
    return scorers


def evaluate_scorer(scorer: ex.Scorer, data: DataDir) -> dict[str, Any]:
    """All specificity experiments for one scorer."""
    return {
        "specificity": ex.specificity_experiment(scorer, data),
        "length_normalized_news": ex.length_normalized_news(scorer, data),
        "snli": ex.snli_entailment(scorer, data),
    }


def _row(result: dict[str, Any]) -> list[float | None]:
    spec = result.get("specificity", {})
    snli = result.get("snli", {})
    return [
        spec.get("news", {}).get("accuracy"),
        spec.get("news", {}).get("f1"),
        *(spec.get(d, {}).get("spearman") for d in ("twitter", "yelp", "movie")),
        result.get("length_normalized_news", {}).get("accuracy"),
        *(snli.get(label) for label in ("entailment", "neutral", "contradiction")),
    ]


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """A fixed-width text table, one row per scorer, numbers to one decimal."""
    width = max(len(name) for name in results) + 2
    lines = ["".ljust(width) + "".join(c.rjust(9) for c in COLUMNS)]
    for name, result in results.items():
        cells = ["-" if v is None else f"{v:.1f}" for v in _row(result)]
        lines.append(name.ljust(width) + "".join(c.rjust(9) for c in cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="evaluation data root (default: $PROBSENT_DATA_DIR or ../shared/data)")
    parser.add_argument("--minilm", action="store_true", help="also run the all-MiniLM-L6-v2 norm baselines")
    parser.add_argument("--json", help="write all numbers and the sha256 of every data file read to this file")
    args = parser.parse_args(argv)
    try:
        data = DataDir(args.data_dir)
        results: dict[str, dict[str, Any]] = {
            "Majority": {"specificity": ex.majority_baseline(data)},
            "SPECITELLER": {"specificity": ex.speciteller_baseline(data)},
        }
        seconds: dict[str, float] = {}
        for scorer in baseline_scorers(data, args.minilm):
            start = time.perf_counter()
            results[scorer.name] = evaluate_scorer(scorer, data)
            seconds[scorer.name] = time.perf_counter() - start
    except ProbsentError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(format_table(results))
    if args.json:
        report = {"results": results, "seconds": seconds, "data_root": str(data.root), "sha256": data.sha256}
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
