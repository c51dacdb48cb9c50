"""Design round 3: --rarity-anchor, each word's entropy term pulled toward its rarity start.

Pre-registered in commit ``48ff495`` (2026-11-27 09:08 UTC): committed after rounds 1-2's
development numbers and a development-only diagnostic (the entropy terms of d1-base replaced by
the words' rarity, ``--round 3 --stage rarity``), before any run of this round; no test number
seen. Then a ``Round`` entry of ``experiments/ship_rule.py``, a data file since issue 35 (its text
unchanged). Its record note was added after its runs.
"""
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds.base_recipe import design_run

WEIGHTS = (0.1, 1.0, 10.0)

ROUND = DesignRound(
    3,
    "Rounds 1-2: every candidate misses the equal-length floor, and training washes the rarity "
    "ordering out of the entropy terms (Spearman(term, log count) 0.09-0.31 at the end, from about "
    "1 at the --rarity-init start). A development-only diagnostic: with d1-base's terms replaced by "
    "0.3 x (log count - average) the equal-length pairs score 100.0, the one-word explain set 82.3 and "
    "the news length groups 66.5 (d1-base: 68.3, 30.6, 65.2); d1-base's terms plus that rarity score "
    "100.0, 62.9 and 67.3. So what the pairs teach the terms costs the rarity signal the development "
    "sets reward. --rarity-anchor (a named loss option, off in the paper's runs) adds X/2 (T_w - t_w)^2 "
    "per pair for each word of a step, pulling its term T_w toward its rarity start t_w, while the "
    "margin loss moves it where the pairs demand. Prediction: Spearman(term, log count) stays high and "
    "the equal-length pairs and one-word explain rise with X; the STS floors may fall at large X "
    "(the variances lose freedom). The ablation is d1-base (X = 0).",
    [design_run(f"d3-anchor{weight}", f"d1-base with --rarity-anchor {weight}", rarity_anchor=weight)
     for weight in WEIGHTS],
    ["The ablation's seeds 2 and 3 (`d1-base-seed2`, `d1-base-seed3`, `--stage ablation`) were trained "
     "after the round's test stage, to put the contrast between the winner and no anchor on three seeds; "
     "they choose nothing."],
    contrasts=[(f"d3-anchor{weight}", "d1-base") for weight in WEIGHTS],
    # the diagnostic the hypothesis quotes: d1-base's entropy terms against the words' rarity
    diagnostic="rarity", diagnostic_runs={"rarity": ("d1-base",)},
    ablation="d1-base",
    protocol_commit="48ff495")
