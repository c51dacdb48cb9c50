"""The columns of the recipe rounds' test tables, read from one evaluated system, and where the
baselines those tables compare with are recorded (results/recipe/baselines.json, written once)."""
from __future__ import annotations

from reproduction.experiments.rounds.reference import records
from reproduction.evaluation.results import SystemResult

BASELINES = records(1) / "baselines.json"  # in round 1's records
DOMAINS = ("twitter", "yelp", "movie")
COLUMNS = ("News acc", "Twitter ρ", "Yelp ρ", "Movie ρ", "STS-B r concat(mean, var)", "STS-B r means",
           "shorter-specific %")


def numbers(entry: SystemResult | None) -> list[float | None]:
    """The columns of :data:`COLUMNS` of one evaluated system (None where it has no number)."""
    if entry is None:
        return [None] * len(COLUMNS)
    spec = entry.specificity
    rated = [spec.domain(d) for d in DOMAINS]
    stsb = {measure: table.stsb_test for measure, table in entry.sts.pearson.items()} if entry.sts else {}
    return [spec.news.accuracy, *(r.spearman if r is not None else None for r in rated),
            stsb.get("cosine"), stsb.get("cosine_mean"),
            entry.shorter_specific.accuracy if entry.shorter_specific is not None else None]
