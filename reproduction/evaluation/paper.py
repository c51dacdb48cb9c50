"""The numbers Chen & Gimpel (2020) report, for the report to print beside ours.

Only the numbers quoted in the project's brief are here; a row whose numbers were not
transcribed has ``None`` for every column (the report says so rather than inventing them).
Keys of a Table 2 row: ``news`` (accuracy), ``twitter``, ``yelp``, ``movie`` (Spearman x100).
"""
from __future__ import annotations

from dataclasses import dataclass, field

CITATION = "Chen & Gimpel (2020)"
"""How the report labels the paper's numbers."""



@dataclass(frozen=True)
class PaperRow:
    """One system of the paper's Table 2: its numbers and whether we can run it here."""

    label: str
    numbers: dict[str, float | None]
    runnable: bool = True
    note: str = ""
    aliases: tuple[str, ...] = field(default=())  # our system names that stand for this row


def _row(news: float | None, twitter: float | None, yelp: float | None, movie: float | None) -> dict[str, float | None]:
    return {"news": news, "twitter": twitter, "yelp": yelp, "movie": movie}


_NOT_OBTAINABLE = "weights not obtainable on this machine"
_UNTRANSCRIBED = _row(None, None, None, None)

TABLE2: tuple[PaperRow, ...] = (
    PaperRow("WLO", _row(77.4, 60.5, 76.6, 61.9)),
    PaperRow("Wordsum", _row(75.8, 57.9, 75.4, 60.0)),
    PaperRow("Wordavg", _row(54.6, -10.6, -32.3, -27.2)),
    PaperRow("LSTMavg", _row(54.6, -14.8, -41.1, -14.8)),
    PaperRow("LSTMGaussian", _row(55.5, 3.2, 2.2, 4.1)),
    PaperRow("Length", _row(73.4, 44.5, 67.6, 58.1), aliases=("Length",)),
    PaperRow("Majority", _row(54.6, None, None, None), aliases=("Majority",)),
    PaperRow("GloVe sum", _row(70.4, 32.2, 62.8, 49.0), aliases=("GloVe (sum)",),
             note="ours: GloVe 6B 50d"),
    PaperRow("GloVe avg", _row(54.6, -49.6, -59.0, -38.2), aliases=("GloVe (avg)",),
             note="ours: GloVe 6B 50d"),
    PaperRow("InferSent", _UNTRANSCRIBED, runnable=False, note=_NOT_OBTAINABLE),
    PaperRow("Skip-thought", _UNTRANSCRIBED, runnable=False, note=_NOT_OBTAINABLE),
    PaperRow("ELMo", _UNTRANSCRIBED, runnable=False, note=_NOT_OBTAINABLE),
    PaperRow("BERT-base [CLS]", _row(64.5, 20.8, 29.5, 18.1), runnable=False,
             note=_NOT_OBTAINABLE + "; all-MiniLM-L6-v2 stands in"),
    PaperRow("Li & Nenkova 2015 (SPECITELLER)", _row(81.6, 55.3, 63.3, 57.5), aliases=("SPECITELLER",),
             note="ours: SPECITELLER's own P(specific) at 0.5 (ref.probs); News only"),
    PaperRow("Ko et al. 2019", _row(None, 67.9, 75.0, 70.6), runnable=False,
             note="supervised domain-adapted model, not reimplemented"),
)
"""Table 2 (specificity) rows in the paper's order."""

TABLE3_LENGTH_NORMALIZED = {"WLO": 70.1, "Wordavg": 69.0, "Wordsum": 68.6, "LSTMavg": 69.6, "LSTMGaussian": 67.0}
TABLE3_POOL_SIZE = 3582

TABLE4_SNLI = {
    "WLO": {"entailment": 75.8, "neutral": 54.7, "contradiction": 57.2},
    "Wordsum": {"entailment": 75.0, "neutral": 54.7, "contradiction": 57.7},
}
"""% of equal-length pairs whose hypothesis is less specific than its premise."""

TABLE7_MODEL = "WLO"
"""The model (its label) of the paper's prior ablation."""

TABLE7_PRIOR_ABLATION = {
    "with_prior": {"accuracy": 77.4, "f1": 78.4},
    "without_prior": {"accuracy": 67.9, "f1": 68.2},
}
"""News accuracy and F1 of WLO trained with and without the KL prior."""

TABLE8_STSB = {"WLO": 73.7, "LSTMGaussian": 74.3, "LSTMavg": 73.6, "Wordavg": 73.4}
"""STS Benchmark test Pearson x100."""


def paper_row(label: str) -> str | None:
    """``label`` (a model's label, e.g. "WLO") if the paper's Table 2 has a row of that name, else None."""
    return label if any(row.label == label for row in TABLE2) else None


def as_json() -> dict[str, object]:
    """Every paper number above, for the evaluation JSON."""
    return {
        "citation": CITATION,
        "table2_specificity": {row.label: row.numbers for row in TABLE2},
        "table3_length_normalized": {"accuracy": TABLE3_LENGTH_NORMALIZED, "pool_size": TABLE3_POOL_SIZE},
        "table4_snli": TABLE4_SNLI,
        "table7_prior_ablation": TABLE7_PRIOR_ABLATION,
        "table8_stsb": TABLE8_STSB,
    }
