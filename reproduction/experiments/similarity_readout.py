"""Which read-out ``SentenceModel.similarity`` returns by default (issue 31), chosen by a rule
committed before any of its numbers.

The shipped model's own similarity, the expected inner product log N(0; mu1 - mu2, S1 + S2),
grows with how specific the two sentences are: a sentence can be closer to another one than to
itself, and it has no fixed range. A user reads a similarity as "1 = the same, lower = less
alike". The default read-out must therefore be

- **eligible**: bounded, and largest for a sentence with itself (d(x, x) >= d(x, y) for every
  y, by construction, not by measurement); and
- **chosen on development sets only**: STS Benchmark *dev* and STS 2017 (track 5, en-en).

Candidates (probabilistic models; a deterministic model has one read-out, the cosine):

1. ``cosine``: the cosine of the means, in [-1, 1];
2. ``cosine_concat``: the cosine of concat(mean, variance), the paper's STS read-out, in [-1, 1];
3. ``kernel``: the normalized expected likelihood kernel per dimension,
   exp((EIP(a, b) - EIP(a, a) / 2 - EIP(b, b) / 2) / k), in (0, 1], 1 exactly when the two
   Gaussians are equal (Cauchy-Schwarz on the kernel's inner product); EIP is the expected
   inner product above and k the dimension;
4. ``expected_inner_product``: reported, not eligible (unbounded, not largest on itself).

Rule: the eligible candidate with the highest mean of (STS-B dev Pearson, STS 2017 Pearson)
x 100 on the shipped model; where the best two are within 1.0 point of each other, the one
earlier in the order above (the simpler read-out). STS Benchmark test is read once, after the
choice, for the chosen read-out. Said plainly: the test Pearson of ``cosine`` (66.1) and of
``cosine_concat`` (66.3) for the shipped model were already seen before this rule (RESULTS,
round 4); ``kernel``'s has not been computed.

    python -m reproduction.experiments.similarity_readout --stage dev    # dev record + the choice
    python -m reproduction.experiments.similarity_readout --stage test   # STS-B test, once, for the choice
"""
from __future__ import annotations

import argparse
import json

import numpy as np

from reproduction.experiments.paths import RESULTS_DIR
from probsent.files.atomic_writes import write_json

RECORD = RESULTS_DIR / "similarity-readout" / "dev.json"
TEST_RECORD = RESULTS_DIR / "similarity-readout" / "test.json"
CANDIDATES = ("cosine", "cosine_concat", "kernel")  # eligible, in the rule's order of preference
REPORTED = ("expected_inner_product",)  # measured, never chosen
TIE = 1.0  # points of the mean Pearson x 100 within which the earlier candidate wins


def readout_pearsons(model, pairs, names=(*CANDIDATES, *REPORTED)) -> dict[str, float]:
    """Pearson x 100 of each read-out in ``names`` on one STS set, computed by the API's
    ``similarity_pairwise`` (the same code a user calls)."""
    from reproduction.evaluation.metrics import pearson

    return {name: 100.0 * pearson(np.asarray(model.similarity_pairwise(pairs.first, pairs.second, measure=name),
                                             dtype=np.float64), pairs.scores)
            for name in names}


def choose(dev: dict[str, dict[str, float]]) -> str:
    """The rule: the eligible read-out with the best mean dev Pearson; within TIE of the best,
    the earliest in CANDIDATES."""
    means = {name: float(np.mean([dev[split][name] for split in dev])) for name in CANDIDATES}
    best = max(means.values())
    return next(name for name in CANDIDATES if means[name] >= best - TIE)


def main() -> None:
    import probsent
    from reproduction.evaluation import datasets as ds

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=["dev", "test"], required=True)
    parser.add_argument("--data-dir")
    args = parser.parse_args()
    data = ds.DataDir(args.data_dir)
    model = probsent.load()
    if args.stage == "dev":
        dev = {"STSB-dev": readout_pearsons(model, ds.load_sts_benchmark(data, "dev")),
               "STS17": readout_pearsons(model, ds.load_sts17(data))}
        chosen = choose(dev)
        write_json(RECORD, {"model": "probsent/pretrained/wlo", "pearson_x100": dev, "candidates": list(CANDIDATES),
                            "tie_points": TIE, "chosen": chosen})
        print(json.dumps(dev, indent=1), "\nchosen:", chosen)
        return
    chosen = json.loads(RECORD.read_text())["chosen"]
    test = readout_pearsons(model, ds.load_sts_benchmark(data, "test"), (chosen,))  # the chosen one only
    write_json(TEST_RECORD, {"model": "probsent/pretrained/wlo", "chosen": chosen,
                             "pearson_x100": {"STSB-test": {chosen: test[chosen]}}})
    print(f"STS-B test Pearson x100 of {chosen}: {test[chosen]:.2f}")


if __name__ == "__main__":
    main()
