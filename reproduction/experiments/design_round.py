"""What a design round is: data, one file per round in ``experiments/design_rounds/design_<N>.py``.
A design round competes under a rule: the ship rule's numbered rounds under
``experiments/ship_rule.py``, issue 34's lettered rounds under ``experiments/representation_rule.py``
(the recipe study's rounds are another kind, ``reproduction.experiments.protocol.RecipeRound``).

A new design round is a new file ``design_<N>.py`` with its ``ROUND`` and its line in
``experiments/design_rounds/__init__.py``, committed before any of its runs (that commit is its
pre-registration; its hash goes into ``protocol_commit`` once it exists).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from reproduction.experiments.plan import Run


@dataclass(frozen=True)
class DesignRound:
    """One pre-registered design round: its hypothesis and its candidates (seed 1). The fields
    after ``record_notes`` are the ship rule's; issue 34's rule reads the first four and
    ``protocol_commit``."""

    number: int | str  # the ship rule's rounds are numbered (1, 2, ...), issue 34's lettered (A, B, C)
    hypothesis: str
    candidates: list[Run] = field(default_factory=list)
    record_notes: list[str] = field(default_factory=list)  # how the runs are or were made
    # (candidate, the run it is compared with); default: every candidate against the first
    contrasts: list[tuple[str, str]] = field(default_factory=list)
    # the diagnostic stage (``--stage rarity``) whose development-only record the hypothesis
    # quotes: RESULTS shows it beside the hypothesis
    diagnostic: str | None = None
    # per diagnostic stage of this round (``--stage rarity``, ``--stage similarity``), the runs it
    # reads (development sets only); a stage a round names no runs for is refused for it
    diagnostic_runs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the run without the round's change (seed 1 in an earlier round's record): its seeds 2-3
    # (``--stage ablation``) put the winner's contrast on three seeds; they choose nothing
    ablation: str | None = None
    # the development number that chooses among the finalists (the rule's ``score`` unless a
    # round's change cannot move it), and whether every candidate is a finalist (a round whose
    # candidates are rescaled copies of trained runs: their seeds cost no training)
    choose_by: str = "score"
    every_candidate_final: bool = False
    protocol_commit: str = ""  # the commit that fixed its rule and candidates, before any of its runs

    def compared(self) -> list[tuple[str, str]]:
        """The (candidate, reference) pairs the report contrasts."""
        first = self.candidates[0].name
        return self.contrasts or [(run.name, first) for run in self.candidates[1:]]
