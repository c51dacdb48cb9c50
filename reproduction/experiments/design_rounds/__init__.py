"""The design rounds, one file each (``design_<N>.py``; what a round holds is
``experiments/design_round.py``): the ship rule's (``experiments/ship_rule.py``), numbered, and
issue 34's (``experiments/representation_rule.py``), lettered, and issue 41's
(``experiments/generality_rule.py``), G1, G2, ...

A new design round: ``design_<N>.py`` with its ``ROUND``, one line below, committed before any of
its runs is trained.
"""
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds import design_1, design_2, design_3, design_4, design_A, design_G1, design_G2
from reproduction.experiments.plan import Run

# under the ship rule
DESIGN_ROUNDS: dict[int, DesignRound] = {module.ROUND.number: module.ROUND for module in (
    design_1, design_2, design_3, design_4)}
# under issue 34's rule (similarity and entailment in noise units, the specificity floors)
REPRESENTATION_ROUNDS: dict[str, DesignRound] = {module.ROUND.number: module.ROUND for module in (design_A,)}
# under issue 41's rule (generality: SNLI dev entailment and WordNet pairs of unseen words, the floors)
GENERALITY_ROUNDS: dict[str, DesignRound] = {module.ROUND.number: module.ROUND for module in (design_G1, design_G2)}


def design_run_named(name: str) -> Run:
    """The seed-1 candidate named ``name`` of any design round."""
    found = [run for round_ in (*DESIGN_ROUNDS.values(), *REPRESENTATION_ROUNDS.values(), *GENERALITY_ROUNDS.values())
             for run in round_.candidates if run.name == name]
    if not found:
        raise SystemExit(f"no design round has a candidate named {name}")
    return found[0]


# Design changes the rounds have not tried yet, in the order the diagnostics suggest them.
UNTESTED = [
    "per-word noise, z_i = A_i (z_{i-1} + B_i + e_i), or a variance coupled to the translation B_w (a new model file)",
    "the direction inside the simplification pairs as a hinge on the two entropies (issue 34's round B was "
    "replaced by its diagnostic: the shipped model already ranks most originals more specific)",
    "the resampled mixture with an untrained-<unk> ablation, to separate the shape from the smaller vocabulary",
]
