"""Issue 34's design round A: a similarity the rarity-anchored variances do not sway.

Pre-registered in commit ``e4d26bd`` (2026-11-27 18:51 UTC), as the entry "A" of ``ROUNDS`` in
``experiments/representation_rule.py``: committed after its diagnostic (development only,
``python -m reproduction.experiments.representation_rule --round A --stage diagnostic``) and before any run
of this round. A data file since issue 35, its text unchanged. It competes under issue 34's rule
(``experiments/representation_rule.py``; docs/EXPERIMENTS.md, "Similarity and entailment rounds"),
not the ship rule's score.
"""
from reproduction.experiments.design_round import DesignRound
from reproduction.experiments.design_rounds.base_recipe import shipped_recipe_run

ROUND = DesignRound(
    "A",
    "Round 4's diagnostic (results/design/similarity-diagnostic.json, STS-B dev): with the rarity anchor "
    "the distance part of the model's own similarity, -1/2 sum_d (mu1 - mu2)^2 / (S1 + S2), fell from 52.0 "
    "to 36.1 while the means' cosine stayed at 69.4-69.6: rarity-sized variances divide exactly the gaps "
    "that name what a sentence is about. The protocol's diagnostic before this entry, on the shipped model "
    "(STS-B dev Pearson x100, `--round A --stage diagnostic`): its own distance part 36.2, the pooled "
    "distance -1/2 sum_d (mu1 - mu2)^2 / mean_d(S1 + S2) 43.8, above 36.1, so the pooled candidate stays. "
    "Prediction: a training similarity the anchored variances do not sway spreads the means by meaning, "
    "so STS-B dev concat and SNLI dev entailment rise while the entropy (anchored as before) keeps the "
    "specificity floors.",
    [shipped_recipe_run("a-pooled", "the shipped recipe with --similarity-distance pooled",
                        similarity_distance="pooled"),
     shipped_recipe_run("a-wlo2v", "the shipped recipe with --model wlo2v (the protocol's --variance-parts 2)",
                        model="wlo2v"),
     shipped_recipe_run("a-wlo2v-anchor0.3", "a-wlo2v with --rarity-anchor 0.3", model="wlo2v", rarity_anchor=0.3)],
    ["The protocol's `--variance-parts 2` is `--model wlo2v`, a new model file "
     "(probsent/models/wlo_two_variances.py): a different parameterization is a model type in probsent. Its "
     "prior adds the variance part of KL(N(mu_i, Sigma_S,i) || N(0, I)) on every prefix (the protocol did not "
     "say how the second scale is regularized).",
     "The candidates train by the torch engine; the shipped recipe's seeds were trained by the fast engine.",
     "Added after `a-pooled`'s seed-1 record: it misses two floors, so it cannot be a finalist, and "
     "`--similarity-distance` left probsent train (the lean rule); `a-pooled` trains at commit "
     "0a6bcda (git checkout 0a6bcda).",
     "Added after every seed-1 record: no candidate passes the floors, so the round has no finalist, and "
     "`--model wlo2v` left the model registry too; both wlo2v candidates train at commit 0a6bcda."],
    protocol_commit="e4d26bd")
