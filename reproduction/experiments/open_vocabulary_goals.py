"""Issue 49's goals for the open vocabulary, read on the records of the model shipped with it
against those of the model shipped before it (reproduction/docs/EXPERIMENTS.md, "Round 4:
test, once, after the choice"): the table there is this command's.

    python -m reproduction.experiments.open_vocabulary_goals          # rewrites the table (--check compares)

The records before are kept in results/open-vocabulary/before/, written from the commit before
the table shipped by

    for r in design/shipped-rows.json probability/test.json shipped/evaluation.json; do
        git show 14c7d76:reproduction/results/$r > results/open-vocabulary/before/$(echo $r | tr / -); done

and the development rows (the out-of-vocabulary explain set, the equal-length pairs) are the
two columns of results/open_vocabulary_dev.md, whose copy without the table is the model shipped
before.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from reproduction.evaluation.results import load_evaluation
from reproduction.experiments.generated_block import GeneratedBlock
from reproduction.experiments.paths import RESULTS_DIR, WING
from reproduction.experiments.probability_report import GOALS, TEST as PROBABILITY_TEST
from reproduction.experiments.ship_rule import SHIPPED_ROWS

BEFORE = RESULTS_DIR / "open-vocabulary" / "before"
DEV_RECORD = RESULTS_DIR / "open_vocabulary_dev.md"
KO = ("twitter", "yelp", "movie")
BLOCK = GeneratedBlock(WING / "docs" / "EXPERIMENTS.md",
                       "<!-- open vocabulary goals: python -m reproduction.experiments.open_vocabulary_goals -->",
                       "<!-- end open vocabulary goals -->")


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def dev_rows(path: Path = DEV_RECORD) -> dict[str, tuple[float, float]]:
    """(without, with) of each development row of the record's first table."""
    found = re.findall(r"^\| (\w+) \| (-?[\d.]+) \| (-?[\d.]+) \|$", path.read_text(encoding="utf-8"), re.M)
    return {name: (float(without), float(with_)) for name, without, with_ in found}


def _state(rows: dict, probability: dict, evaluation: Path) -> dict[str, float | tuple]:
    """The numbers the goals read from one model's records."""
    news = probability["news"]["P(specific)"]
    spearman_gaps = [probability["ko2019"][s]["probability"] - probability["ko2019"][s]["score"] for s in KO]
    model = load_evaluation(evaluation).results.first_model()
    return {"news": rows["measures"]["entropy"]["news"], "ko": [rows["measures"]["entropy"][s] for s in KO],
            "shorter": model.shorter_specific.accuracy,
            "auc": news["auc"], "log_loss": news["log_loss"], "ece": news["ece"], "range": (news["min"], news["max"]),
            "gaps": spearman_gaps, "stsb": rows["measures"]["stsb_test_concat"],
            "table3": (model.length_normalized_news.accuracy, model.length_normalized_news.majority_floor),
            "snli": (model.snli.entailment, model.snli.neutral, model.snli.contradiction)}


def table() -> list[str]:
    """The goals, before and now, and whether each is met now."""
    before = _state(_json(BEFORE / "design-shipped-rows.json"), _json(BEFORE / "probability-test.json"),
                    BEFORE / "shipped-evaluation.json")
    now = _state(_json(SHIPPED_ROWS), _json(PROBABILITY_TEST), RESULTS_DIR / "shipped" / "evaluation.json")
    dev = dev_rows()
    met = lambda ok: "yes" if ok else "**no**"  # noqa: E731
    ko = lambda v: " / ".join(f"{x:.2f}" for x in v)  # noqa: E731
    gaps = lambda v: " / ".join(f"{x:+.1f}" for x in v)  # noqa: E731
    span = lambda v: f"{v[0]:.2f}-{v[1]:.2f}"  # noqa: E731
    return [
        "| goal | before | with the table | met |",
        "|---|---|---|---|",
        f"| news test accuracy (entropy) no lower | {before['news']:.2f} | {now['news']:.2f} | "
        f"{met(now['news'] >= before['news'])} |",
        f"| Twitter / Yelp / Movie Spearman no lower | {ko(before['ko'])} | {ko(now['ko'])} | "
        f"{met(all(n >= b for n, b in zip(now['ko'], before['ko'])))} |",
        f"| shorter-specific pairs no lower | {before['shorter']:.1f} | {now['shorter']:.1f} | "
        f"{met(now['shorter'] >= before['shorter'])} |",
        f"| equal-length pairs no lower (development; no test split) | {dev['equal_length'][0]:.2f} | "
        f"{dev['equal_length'][1]:.2f} | {met(dev['equal_length'][1] >= dev['equal_length'][0])} |",
        f"| P AUC >= {GOALS['auc']} | {before['auc']:.3f} | {now['auc']:.3f} | {met(now['auc'] >= GOALS['auc'])} |",
        f"| P log-loss <= {GOALS['log_loss']} | {before['log_loss']:.3f} | {now['log_loss']:.3f} | "
        f"{met(now['log_loss'] <= GOALS['log_loss'])} |",
        f"| P ECE <= {GOALS['ece']} | {before['ece']:.3f} | {now['ece']:.3f} | {met(now['ece'] <= GOALS['ece'])} |",
        f"| P spans {GOALS['min']}-{GOALS['max']} | {span(before['range'])} | {span(now['range'])} | "
        f"{met(now['range'][0] <= GOALS['min'] and now['range'][1] >= GOALS['max'])} |",
        f"| P's Spearman within {GOALS['spearman_points']:g} points of the score's (Twitter / Yelp / Movie) | "
        f"{gaps(before['gaps'])} | {gaps(now['gaps'])} | {met(min(now['gaps']) >= -GOALS['spearman_points'])} |",
        f"| out-of-vocabulary explain set >= 90 % (development) | {dev['oov_explain'][0]:.2f} | "
        f"{dev['oov_explain'][1]:.2f} | {met(dev['oov_explain'][1] >= 90)} |",
        "",
        "Printed beside, not goals (the same single reading of the test sets):",
        "",
        "| measure | before | with the table |",
        "|---|---|---|",
        f"| length-normalized News, % (Table 3; its majority-per-group floor) | {before['table3'][0]:.1f} "
        f"({before['table3'][1]:.1f}) | {now['table3'][0]:.1f} ({now['table3'][1]:.1f}) |",
        f"| SNLI equal-length test pairs, entailment / neutral / contradiction, % | "
        f"{' / '.join(f'{x:.1f}' for x in before['snli'])} | {' / '.join(f'{x:.1f}' for x in now['snli'])} |",
        f"| STS Benchmark test, cosine of concat(mean, var), Pearson x100 | {before['stsb']:.2f} | {now['stsb']:.2f} |",
    ]


def main(argv: list[str] | None = None) -> int:
    return BLOCK.main(table, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
