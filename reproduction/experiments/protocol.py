"""The rules every round of the recipe study shares (docs/EXPERIMENTS.md, rules 1-6).

A :class:`RecipeRound` is data: its reference, the families of single changes it adds, the earlier
runs its tables show, its seed checks, where its records go. The functions here turn a round
into its candidates, its combination, its two selections, the seeds and ablation trained
after the selection, and they decide what an earlier round keeps (a run is trained,
evaluated and shipped once). Development numbers only: the validation logs of the runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reproduction.experiments.paths import RUNS_DIR
from reproduction.experiments.plan import Run
from reproduction.experiments.stage_helpers import SEEDS, diagnostics, validations, with_seed

COMBINE_MARGIN = 0.5  # rule 2: news-dev accuracy points a family's best must gain to join the combination
# rule 4: a selected run is trained again with the seeds ``SEEDS`` (experiments/stage_helpers.py)


@dataclass(frozen=True)
class RecipeRound:
    """One pre-registered round of the recipe study: the families of single changes it adds to
    the earlier rounds', the name of its combination, the earlier runs its tables show, and where
    its records go. (The ship rule's rounds are ``reproduction.experiments.design_round.DesignRound``.)"""

    number: int
    title: str  # its section's heading in docs/RESULTS.md
    hypothesis: str  # what it tests, in one line
    reference: Run  # every single change is one change against it
    new_families: dict[str, list[Run]]  # family -> its members, one change each
    results_dir: Path
    previous: RecipeRound | None = None  # the round before it: its candidates compete too
    combined_name: str | None = None  # None: the round adds no combination
    after: tuple[Run, ...] = field(default=())  # trained after the round's test numbers, outside it
    ship_margin: float = 0.0  # rule 6: points of news-train accuracy a new model must gain to be shipped
    shown_with: tuple[str, ...] = field(default=())  # earlier candidates its tables show beside its own runs
    seed_checks: tuple[str, ...] = field(default=())  # candidates whose dev numbers get seeds 2-3 (choose nothing)
    untrained: bool = False  # record the shown runs' news-dev before training (with Length's and the
    # word-score ceiling's)

    @property
    def history(self) -> tuple[RecipeRound, ...]:
        """The rounds up to this one, oldest first."""
        return (*(self.previous.history if self.previous else ()), self)

    @property
    def families(self) -> dict[str, list[Run]]:
        """Every family of changes of this round and the earlier ones, in their order."""
        return {family: members for r in self.history for family, members in r.new_families.items()}

    @property
    def single_changes(self) -> list[Run]:
        return [run for members in self.families.values() for run in members]

    @property
    def combining(self) -> list[RecipeRound]:
        """The rounds whose combination competes in this one: the earlier ones, then its own."""
        return [r for r in self.history if r.combined_name]


def log_path(round_: RecipeRound, name: str) -> Path:
    """A run's validation log: runs/<name>/log.jsonl, or the copy a round recorded (committed)."""
    path = RUNS_DIR / name / "log.jsonl"
    if not path.is_file():
        path = next((r.results_dir / f"{name}.jsonl" for r in round_.history
                     if (r.results_dir / f"{name}.jsonl").is_file()), path)
    return path


def validation_log(round_: RecipeRound, name: str) -> list[dict[str, Any]]:
    """A run's validation records, oldest first."""
    return validations(log_path(round_, name))


def dev_scores(round_: RecipeRound, name: str) -> dict[str, float]:
    """A run's development numbers: best STS 2017 Pearson (its ``best/``) and best news-dev
    accuracy (its ``best-news/``), from its validation log."""
    log = validation_log(round_, name)
    return {"sts17": max(r["sts17_pearson"] for r in log),
            "news_dev": max(r["news_train_accuracy"] for r in log)}


def final_diagnostics(round_: RecipeRound, name: str) -> dict[str, float]:
    """The diagnostics of a run's last validation."""
    return diagnostics(validation_log(round_, name)[-1])


def combined_run(round_: RecipeRound, combining: RecipeRound | None = None) -> Run:
    """Rule 2: the reference plus, of every family of ``combining`` (by default ``round_``),
    the member with the highest news-dev accuracy where it beats the reference's by at least
    :data:`COMBINE_MARGIN` points. Its name is ``combining``'s; its flags come from the logs."""
    combining = combining or round_
    reference = round_.reference
    reference_dev = dev_scores(round_, reference.name)["news_dev"]
    flags = dict(reference.flags)
    chosen = []
    for members in combining.families.values():
        best = max(members, key=lambda run: (dev_scores(round_, run.name)["news_dev"], -members.index(run)))
        if dev_scores(round_, best.name)["news_dev"] >= reference_dev + COMBINE_MARGIN:
            flags.update({k: v for k, v in best.flags.items() if reference.flags.get(k) != v})
            chosen.append(best.name)
    return Run(combining.combined_name, "recipe", flags, "the reference plus " + (", ".join(chosen) or "nothing"))


def candidates(round_: RecipeRound) -> list[Run]:
    """Every run that competes in the round's selections, in tie-breaking order: the reference,
    the single changes of every round so far, then every combination."""
    return [round_.reference, *round_.single_changes, *(combined_run(round_, r) for r in round_.combining)]


def candidate_names(round_: RecipeRound) -> list[str]:
    """The names of :func:`candidates`, read from no log (a combination's name is fixed, its
    flags come from the development logs)."""
    return [round_.reference.name, *(run.name for run in round_.single_changes),
            *(r.combined_name for r in round_.combining)]


def select(round_: RecipeRound) -> dict[str, str]:
    """Rule 3, the two selections: {"paper": best STS 2017, "ours": best news-dev accuracy};
    ties go to the earlier candidate."""
    runs = candidates(round_)
    scores = {run.name: dev_scores(round_, run.name) for run in runs}
    order = {run.name: i for i, run in enumerate(runs)}
    pick = lambda key: max(scores, key=lambda name: (scores[name][key], -order[name]))  # noqa: E731
    return {"paper": pick("sts17"), "ours": pick("news_dev")}


def by_name(round_: RecipeRound, name: str) -> Run:
    """The candidate of ``round_`` named ``name``."""
    return next(run for run in candidates(round_) if run.name == name)


def seed_runs(round_: RecipeRound, selection: dict[str, str]) -> dict[str, list[str]]:
    """Rule 4: per selected run (and the prior ablation of our rule's run), its three seeds' names."""
    groups = {}
    for rule in ("paper", "ours"):
        name = selection[rule]
        groups[name] = [name] + [with_seed(by_name(round_, name), seed).name for seed in SEEDS]
    ours = by_name(round_, selection["ours"])
    groups["ablation"] = [with_seed(ours, seed, "-lambda0").name for seed in (1, *SEEDS)]
    return groups


def extra_runs(round_: RecipeRound, selection: dict[str, str]) -> list[Run]:
    """The runs trained after the selection: seeds 2 and 3 of the selected runs, and our rule's
    run without the prior (seeds 1 to 3), but none an earlier round trained and evaluated."""
    runs = [with_seed(by_name(round_, selection[rule]), seed) for rule in ("paper", "ours") for seed in SEEDS]
    ours = by_name(round_, selection["ours"])
    runs += [with_seed(ours, seed, "-lambda0", prior_weight=0.0) for seed in (1, *SEEDS)]
    # a run an earlier round evaluated keeps that round's training and test numbers
    return [run for run in {run.name: run for run in runs}.values()
            if evaluation_dir(round_, run.name).parent == round_.results_dir]


def earlier_round_of(round_: RecipeRound, name: str) -> RecipeRound | None:
    """The earliest round before ``round_`` in which run ``name`` was a candidate, if any."""
    return next((r for r in round_.history[:-1] if name in candidate_names(r)), None)


def evaluation_dir(round_: RecipeRound, name: str) -> Path:
    """Where run ``name``'s test numbers are: this round's records, or an earlier round's
    where that round evaluated the run already (a run is evaluated once)."""
    for earlier in round_.history[:-1]:
        if (earlier.results_dir / name / "evaluation.json").is_file():
            return earlier.results_dir / name
    return round_.results_dir / name


def new_in_round(round_: RecipeRound) -> set[str]:
    """The reference and the candidates no earlier round had."""
    return {round_.reference.name} | {name for name in candidate_names(round_)
                                      if earlier_round_of(round_, name) is None}


def shown_runs(round_: RecipeRound) -> set[str]:
    """The runs a round's tables show: its new runs and the earlier ones it is compared with."""
    return new_in_round(round_) | set(round_.shown_with)


def seed_check_runs(round_: RecipeRound) -> dict[str, list[Run]]:
    """Per name of ``round_.seed_checks``: the candidate and its seeds 2 and 3."""
    runs = {run.name: run for run in candidates(round_)}  # built once: it reads the dev logs
    return {name: [runs[name], *(with_seed(runs[name], seed) for seed in SEEDS)] for name in round_.seed_checks}
