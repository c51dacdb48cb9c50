"""The development table of the representation: STS Benchmark dev, STS 2017 and SNLI dev.

    python -m reproduction.experiments.dev_sets --model probsent/pretrained/wlo [--model DIR ...]
        [--baseline length] [--data-dir ../shared/data] [--out results/design/dev.json]

Prints one Markdown row per model (and per baseline asked for) with the measures of
:mod:`reproduction.evaluation.development`; ``--out`` also writes them as JSON (with the command
and the data files' sha256). Reads no test split: what a design round chooses by.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import probsent
from reproduction.evaluation import datasets as ds
from reproduction.evaluation.command import BASELINE_NAMES, TRANSFORMER_BASELINES, baseline_systems
from reproduction.evaluation.development import Development, development_measures, development_table
from reproduction.evaluation.model_scorer import ModelScorer
from reproduction.evaluation.suite import Options, SharedTrainingPairs, System
from probsent.files.atomic_writes import write_text


def measure(models: list[str], baselines: list[str], data: ds.DataDir) -> dict[str, Development]:
    """Development numbers of each model (named by its path) and each baseline (by its row name;
    information content from the first model's training counts, as in ``probsent eval``)."""
    rows: dict[str, Development] = {}
    first: System | None = None
    for path in models:
        scorer = ModelScorer(path, probsent.load(path))
        first = first or System(path, "model", scorer, encoder=scorer, model=scorer.model, path=path)
        rows[path] = development_measures(scorer, scorer, data)
    counts_from = (first, SharedTrainingPairs(Options(progress=False), data.root)) if first else None
    systems, _ = baseline_systems(baselines, False, data, counts_from)
    for system in systems:
        rows[system.name] = development_measures(system.scorer, system.encoder, data)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", default=[], metavar="DIR", help="model directory; repeatable")
    parser.add_argument("--baseline", action="append", default=[], metavar="NAME",
                        choices=[n for n in BASELINE_NAMES if n not in TRANSFORMER_BASELINES],
                        help="untrained baseline, as in probsent eval (information content: from the first"
                             " model's training counts)")
    parser.add_argument("--data-dir", metavar="DIR", help="evaluation data root (default: as probsent eval)")
    parser.add_argument("--out", metavar="FILE", help="also write the numbers as JSON here")
    args = parser.parse_args(argv)
    if not args.model and not args.baseline:
        parser.error("nothing to measure: give --model DIR and/or --baseline NAME")
    data = ds.DataDir(args.data_dir)
    rows = measure(args.model, args.baseline, data)
    print(development_table(rows))
    if args.out:
        record = {"command": shlex.join(["python", "-m", "reproduction.experiments.dev_sets", *(argv or sys.argv[1:])]),
                  "data_sha256": dict(sorted(data.sha256.items())),
                  "systems": {name: dev.to_dict() for name, dev in rows.items()}}
        write_text(Path(args.out), json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
