"""Development sets for the representation: what a design round may choose by.

- **STS Benchmark dev** (1,500 pairs) and **STS 2017** (track 5, 250 pairs): Pearson r x100
  between each similarity read-out and the gold scores (the measures of Table 8: the cosine
  of concat(mean, variance), of the means, and the log expected inner product, for a
  probabilistic model; the cosine of the vectors otherwise);
- **SNLI dev, equal-length pairs** (139 entailment / 184 neutral / 218 contradiction): per
  label, the % of pairs whose hypothesis scores less specific than its premise (Table 4's
  measure on the development split).

Nothing here reads a test split: the SNLI test split and STS Benchmark test are read once, by
``probsent eval``, after a choice.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from reproduction.evaluation import datasets as ds
from reproduction.evaluation import metrics, tables
from reproduction.evaluation.results import SnliEntailment

STS_DEV_SETS = ("STSB-dev", "STS17")


@dataclass
class Development:
    """One system's development numbers: set -> measure -> Pearson x100, and SNLI dev."""

    sts: dict[str, dict[str, float]]
    snli_dev: SnliEntailment

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sts_pearson(encoder: tables.Encoder, pairs: ds.StsPairs) -> dict[str, float]:
    """Pearson x100 of each similarity read-out of ``encoder`` with the pairs' gold scores."""
    probabilistic = bool(getattr(encoder, "probabilistic", False))
    similarities = tables.sts_similarities(encoder, pairs, probabilistic)
    return {measure: 100.0 * metrics.pearson(values, pairs.scores) for measure, values in similarities.items()}


def development_sets(data: tables.DataLike = None) -> dict[str, ds.StsPairs]:
    """The STS development sets by name (STS Benchmark dev, STS 2017)."""
    data = ds.as_data_dir(data)
    return {"STSB-dev": ds.load_sts_benchmark(data, "dev"), "STS17": ds.load_sts17(data)}


def development_measures(scorer: tables.Scorer, encoder: tables.Encoder | None,
                         data: tables.DataLike = None) -> Development:
    """Every development number of a system: STS dev sets where it can encode, SNLI dev always."""
    data = ds.as_data_dir(data)
    sts = ({name: sts_pearson(encoder, pairs) for name, pairs in development_sets(data).items()}
           if encoder is not None else {})
    return Development(sts=sts, snli_dev=tables.snli_entailment(scorer, data, split="dev"))


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def development_table(rows: dict[str, Development]) -> str:
    """A Markdown table, one row per system: STS-B dev and STS 2017 (concat / means / expected
    inner product for Gaussians, the cosine otherwise) and SNLI dev entailment / neutral /
    contradiction."""
    header = ["System", "STSB dev cosine", "STSB dev means", "STSB dev exp. inner product", "STS17 cosine",
              "SNLI dev entailment", "SNLI dev neutral", "SNLI dev contradiction"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, dev in rows.items():
        stsb, sts17 = dev.sts.get("STSB-dev", {}), dev.sts.get("STS17", {})
        cells = [name, _cell(stsb.get("cosine")), _cell(stsb.get("cosine_mean")),
                 _cell(stsb.get("expected_inner_product")), _cell(sts17.get("cosine"))]
        cells += [_cell(dev.snli_dev.less_specific(label)) for label in ds.SNLI_LABELS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
