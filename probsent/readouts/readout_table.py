"""Every read-out of a score, declared once: its name, type, what the model must hold, its help
and how it is computed.

A read-out is a per-sentence value read beside the specificity (which every scoring path
writes first). From its one :func:`readout` line come:

- the API method ``model.NAME(sentences, batch_size=256, *, show_progress_bar=None)``
  (:class:`probsent.api.SentenceModel`; a read-out with a hand-written method, for its
  examples, computes through the same entry);
- ``probsent specificity --NAME`` (dashes for underscores) and its output column, in the
  table's order after ``specificity``, in text, JSON Lines and Parquet output;
- the keyword ``NAME=True`` of :func:`probsent.spark.add_specificity` and its column;
- the spaCy attributes ``doc._.NAME`` and ``span._.NAME``.

The table is :data:`READOUTS`, filled in order by :func:`readout` (a plug-in adds one with a
line of its own, and :func:`unregister_readout` takes it away). Light: it imports only
:mod:`probsent.errors` at run time, so the command line's parser reads it without loading a model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from probsent.errors import InvalidValueError

if TYPE_CHECKING:
    from probsent.readouts.scoring_engine import ScoringEngine, Texts

__all__ = ["READOUTS", "Readout", "ScoredTexts", "asked", "readout", "unregister_readout"]

# what a read-out may need of the model beside its weights: the engine's attribute of that name
NEEDS = ("calibration", "percentiles")


class ScoredTexts:
    """A batch of texts as a read-out sees it: the engine, the texts, and their specificity and
    coverage, each computed once, on first use, where the caller has not given it."""

    def __init__(self, engine: "ScoringEngine", texts: "Texts", batch_size: int = 256,
                 scores: np.ndarray | None = None, coverage: np.ndarray | None = None) -> None:
        self.engine, self.texts, self.batch_size = engine, texts, batch_size
        self._scores, self._coverage = scores, coverage

    @property
    def scores(self) -> np.ndarray:
        """Each text's specificity (float64)."""
        if self._scores is None:
            self._scores = self.engine.specificity(self.texts, self.batch_size)
        return self._scores

    @property
    def coverage(self) -> np.ndarray:
        """Each text's share of tokens the model or English knows (float64, NaN without tokens)."""
        if self._coverage is None:
            self._coverage = self.engine.coverage(self.texts)
        return self._coverage


@dataclass(frozen=True)
class Readout:
    """One read-out (see the module's docstring).

    ``compute(scored)`` gives one float64 per text of a :class:`ScoredTexts`; ``needs`` names
    what the model must hold (one of :data:`NEEDS`, or None); ``withheld``: the value is NaN
    where :mod:`probsent.readouts.withheld` withholds a reading (``probsent specificity``
    counts those sentences in a warning)."""

    name: str
    help: str
    compute: Callable[[ScoredTexts], np.ndarray]
    needs: Optional[str] = None
    withheld: bool = False
    type: str = "float64"

    @property
    def flag(self) -> str:
        """The command line's flag."""
        return "--" + self.name.replace("_", "-")

    def available(self, engine: "ScoringEngine") -> bool:
        """Whether the model holds what the read-out needs."""
        return self.needs is None or getattr(engine, self.needs) is not None

    def require(self, engine: "ScoringEngine") -> None:
        """A one-line error saying how to make what the read-out needs, where the model lacks it."""
        if self.needs is not None:
            engine.require(self.needs)

    def of(self, scored: ScoredTexts) -> np.ndarray:
        """The read-out's values for a batch, as float64."""
        return np.asarray(self.compute(scored), dtype=np.float64)


READOUTS: dict[str, Readout] = {}  # every read-out, in column order


def readout(name: str, help: str, compute: Callable[[ScoredTexts], np.ndarray], needs: str | None = None,
            withheld: bool = False) -> Readout:
    """Declare a read-out and add it to :data:`READOUTS` (at the end: its column comes last)."""
    if not name.isidentifier() or name.startswith("_") or name in READOUTS or name == "specificity":
        raise ValueError(f"a read-out needs a new name that is a Python identifier, not {name!r}")
    if needs is not None and needs not in NEEDS:
        raise ValueError(f"a read-out needs one of {', '.join(NEEDS)} or nothing, not {needs!r}")
    READOUTS[name] = Readout(name, help, compute, needs, withheld)
    return READOUTS[name]


def unregister_readout(name: str) -> None:
    """Take a read-out away (a plug-in's, or a test's toy)."""
    READOUTS.pop(name, None)


def asked(names: Sequence[str]) -> list[Readout]:
    """The read-outs ``names`` asks for, in the table's order; a one-line error for an unknown name."""
    unknown = sorted(set(names) - set(READOUTS))
    if unknown:
        raise InvalidValueError(f"no read-out {unknown[0]!r} (read-outs: {', '.join(READOUTS)})")
    return [r for name, r in READOUTS.items() if name in names]


readout("probability",
        "also write P(specific): the chance that a news annotator calls the sentence specific (probsent "
        "calibrate fits it on news labels, from the score and the length); withheld (nan) with the "
        "percentile (tsv: score, probability, ..., sentence)",
        lambda scored: scored.engine.probability_of_scores(scored.scores, scored.texts),
        needs="calibration", withheld=True)
readout("percentile",
        "also write the percentile for the sentence's length, 0-100: the share of the model's reference "
        "sentences with as many tokens that score lower; nan for text mostly of unknown words, mostly "
        "repetition or under three words (a warning counts them)",
        lambda scored: scored.engine.percentile_of_scores(scored.scores, scored.texts),
        needs="percentiles", withheld=True)
readout("coverage",
        "also write the share of the sentence's tokens the model or English knows (0-1: an entry of their "
        "own, or with the open vocabulary a number or an English word); below 0.5 the score says little "
        "(a warning counts such sentences)",
        lambda scored: scored.coverage)
