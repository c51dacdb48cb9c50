"""The recipe study's sections of docs/RESULTS.md, one per round (experiments/rounds/), from
results/recipe/ and results/recipe<N>/ (written by ``python -m reproduction.experiments.recipe --round N``):
candidates, selections, test numbers over three seeds, the prior ablation, the shorter-specific
pairs and whether each goal was reached. Every number and every comparison is computed from the
JSON files: the functions without a leading underscore return the numbers, the others write
them as Markdown."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats

from reproduction.experiments.model_readings import RANK_BAND_LABELS
from reproduction.experiments.paths import REPO, WING, RESULTS_DIR
from reproduction.experiments.protocol import RecipeRound, earlier_round_of, evaluation_dir, new_in_round, seed_runs, shown_runs
from reproduction.experiments.stage_helpers import SEEDS
from reproduction.experiments.rounds import LATEST, RECIPE_ROUNDS, UNTESTED
from reproduction.experiments.selection import load_json, load_run
from reproduction.experiments.table_columns import BASELINES, COLUMNS, DOMAINS, numbers
from reproduction.evaluation.paper import TABLE2, TABLE8_STSB
from reproduction.evaluation.results import SystemResult

WORDSUM = ["wordsum-minibatch-long", "wordsum-minibatch-long-seed2", "wordsum-minibatch-long-seed3"]


def _model_entry(path: Path) -> SystemResult | None:
    evaluation = load_run(path)
    return evaluation.results.first_model() if evaluation is not None else None


def seed_numbers(entries: list[SystemResult | None]) -> list[list[float]]:
    """Per column, the values of the seeds that have one."""
    columns = zip(*(numbers(e) for e in entries if e is not None)) if any(entries) else [()] * len(COLUMNS)
    return [[v for v in column if v is not None] for column in columns]


def _mean(values: list[float]) -> float | None:
    return statistics.mean(values) if values else None


def mean_sd(values: list[float], digits: int = 1) -> str:
    """"mean ± sample sd" of seed values (one value alone; "—" for none)."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f}"


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _row(label: str, columns: list[list[float]]) -> str:
    return "| " + " | ".join([label, *(mean_sd(c) for c in columns)]) + " |"


def _paper_row(label: str) -> str:
    row = next(r for r in TABLE2 if r.label == label)
    cells = [row.numbers.get("news"), *(row.numbers.get(d) for d in DOMAINS),
             TABLE8_STSB.get(label), None, None]
    return "| " + " | ".join([f"{label} (paper's numbers)", *(_fmt(v) for v in cells)]) + " |"


def sections() -> list[str]:
    """The Markdown lines of every round's section."""
    lines: list[str] = []
    for number in sorted(RECIPE_ROUNDS):
        lines += ([""] if lines else []) + section(RECIPE_ROUNDS[number])
    return lines


def _command(round_: RecipeRound, stage: str) -> str:
    """The command that runs ``stage`` of the round."""
    flag = "" if round_.number == 1 else f" --round {round_.number}"
    return f"python -m reproduction.experiments.recipe{flag} --stage {stage}"


def section(round_: RecipeRound) -> list[str]:
    """The Markdown lines of one round's section (a pointer to the command where nothing is
    evaluated yet)."""
    out = round_.results_dir
    where = out.relative_to(WING).as_posix()
    dev = load_json(out / "dev.json")
    lines = [f"## {round_.title}", "",
             f"Generated from `{where}/` by `{_command(round_, 'select')}`, "
             "`--stage seeds`, `--stage evaluate`; the protocol (candidates, combination rule, the two "
             "selection rules" + (", and what had been seen before the round" if round_.number > 1 else "")
             + f") is `experiments/rounds/round_{round_.number}.py` with the rules of `experiments/protocol.py`, "
             "told in [docs/EXPERIMENTS.md](EXPERIMENTS.md) with the commits that fixed it before the runs."]
    if dev is None:
        return lines + ["", "(not run yet)"]
    lines += ["", "### Candidates (development numbers only)", "",
              "| Run | Change | Steps | STS17 r (dev) | News-train acc (dev) | Spearman(term, log count) | "
              "frequent-word term | negatives sharing more words | active hinge | prior/margin gradient on A |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    shown = shown_runs(round_)
    for c in dev["candidates"]:
        if c["name"] not in shown:
            continue
        d = c["diagnostics"]
        lines.append("| " + " | ".join([f"`{c['name']}`", c["note"], f"{c['steps']:,}", _fmt(c["sts17"], 3),
                                         _fmt(c["news_dev"]), _fmt(d.get("term_count_spearman"), 3),
                                         _fmt(d.get("frequent_term"), 3), _fmt(d.get("negatives_sharing_more"), 3),
                                         _fmt(d.get("active_hinge"), 3), _fmt(d.get("prior_gradient_share"), 4)]) + " |")
    selection = dev["selection"]
    others = len(dev["candidates"]) - len(shown & {c["name"] for c in dev["candidates"]})
    lines += ([] if not others else
              ["", "The reference" + (", the earlier runs this round is compared with ("
                                       + ", ".join(f"`{name}`" for name in round_.shown_with) + ")"
                                       if round_.shown_with else "")
               + f" and this round's runs; the {others} other candidates, of earlier rounds, "
               "compete too (their rows are in those rounds' sections)."])
    lines += ["", "Diagnostics at each run's last validation, on a fixed sample of 2,000 training pairs; "
              f"the course over training of the runs shown: [{where}/curves.png](../{where}/curves.png).",
              *([f"`{round_.combined_name}` = {dev['combined']} (rule: each family's best on news-train accuracy, "
                 f"where it beats the reference by at least {dev['combine_margin']} points)."]
                if dev["combined"] else ["This round adds no combination; the earlier rounds' compete."]), "",
              f"Selected: the paper's rule (best STS17 r of `best/`) chose **`{selection['paper']}`**; ours "
              f"(best news-train accuracy of `best-news/`) chose **`{selection['ours']}`**."]
    lines += _band_lines(dev, shown)
    lines += _untrained_lines(dev, shown)
    lines += _family_lines(round_, dev)
    lines += _seed_check_lines(round_, load_json(out / "seed_checks.json"))
    lines += _after_lines(round_, dev)
    lines += _test_lines(round_, selection)
    ship = load_json(out / "ship.json")
    earlier = earlier_round_of(round_, selection["ours"])
    if earlier is not None:
        lines += ["", f"Shipping (rule 6): our rule chose `{selection['ours']}`, a run of round {earlier.number}, "
                  f"whose shipping decision was made there; nothing changes."]
    if ship:
        verb = "replaced" if ship["ship"] else "did not replace"
        lines += ["", f"Shipping (rule 6): `{ship['run']}` trimmed to at most {ship['max_words']:,} words scores "
                  f"{ship['news_train_accuracy']:.2f} on the news training rows against the shipped model's "
                  f"{ship['shipped_news_train_accuracy']:.2f} (`{ship['shipped_run']}`, {ship['shipped_max_words']:,} "
                  f"words)" + (f", a lead it had to make of at least {ship['ship_margin']} points" if ship.get("ship_margin")
                               else "") + f", so it {verb} the shipped model (`{where}/ship.json`)."]
    if round_ is LATEST:
        lines += _across_rounds_lines(dev)
        lines += ["", "### Still untested after this round", "", *(f"- {item}" for item in UNTESTED)]
    return lines


def training_gains(dev: dict[str, Any], shown: set[str]) -> list[tuple[str, float, float, float]]:
    """Per shown run whose untrained accuracy was recorded (from round 8 on): (name, news-train
    accuracy before its first step, of its ``best-news/`` checkpoint, the gain)."""
    return [(c["name"], c["untrained_news_dev"], c["news_dev"], c["news_dev"] - c["untrained_news_dev"])
            for c in dev["candidates"] if c["name"] in shown and "untrained_news_dev" in c]


def _untrained_lines(dev: dict[str, Any], shown: set[str]) -> list[str]:
    """What training added to the shown runs' news-train accuracy (recorded from round 8 on)."""
    rows = training_gains(dev, shown)
    if not rows:
        return []
    return ["", "What training added on the news training rows: the accuracy of each run's model before its "
            "first step (its initialization: `reproduction.experiments.recipe_records.untrained_news_dev`) and of its `best-news/` "
            f"checkpoint; the Length baseline scores {dev['length_news_dev']:.1f} on the same rows"
            + (_ceiling_sentence(dev["word_score_ceiling"], max(trained for _, _, trained, _ in rows))
               if "word_score_ceiling" in dev else "") + ":", "",
            "| Run | News-train acc untrained | News-train acc best-news/ (dev) | gain |", "|---|---|---|---|",
            *(f"| `{name}` | {untrained:.1f} | {trained:.1f} | {gain:+.1f} |" for name, untrained, trained, gain in rows)]


def _ceiling_sentence(ceiling: dict[str, Any], best_run: float) -> str:
    """What a sum of per-word terms (the form of WLO's entropy) reaches when fit to the rows' labels,
    against the best of the runs shown."""
    return (f", and a sum of per-word terms, the form of WLO's entropy, fit to these rows' labels (logistic "
            f"regression on word counts, {ceiling['folds']}-fold cross-validation, the best of "
            f"{len(ceiling['per_l2'])} L2 weights: `python -m reproduction.experiments.word_score_ceiling`) scores "
            f"{ceiling['best']:.1f}, {ceiling['best'] - best_run:+.1f} points against the best run below: what "
            f"the form of the score allows when it learns from these labels, not from paraphrases")


def band_rows(dev: dict[str, Any], shown: set[str]) -> tuple[list[str], bool, list[tuple[str, list, tuple]]]:
    """The mean word term per frequency-rank band of the shown runs' ``best/`` models: the bands
    any run has, whether any run recorded its sentence scale (from round 6 on), and per run its
    name, its band terms (None where missing) and its (mean norm, log-variance), None where missing."""
    rows = [c for c in dev["candidates"] if c["name"] in shown and c.get("term_bands")]
    bands = [band for band in RANK_BAND_LABELS if any(band in c["term_bands"] for c in rows)]
    scaled = any("scale" in c for c in rows)
    return bands, scaled, [(c["name"], [c["term_bands"].get(b) for b in bands],
                            (c.get("scale", {}).get("mean_norm"), c.get("scale", {}).get("log_variance")))
                           for c in rows]


def _band_lines(dev: dict[str, Any], shown: set[str]) -> list[str]:
    """The table of :func:`band_rows`."""
    bands, scaled, rows = band_rows(dev, shown)
    if not rows:
        return []
    return ["", "Mean entropy term of the words of each frequency-rank band (rank 1: the most frequent word), "
            "`best/` model of each run; a variance that learned specificity falls from left to right "
            "(`reproduction.experiments.model_readings.term_by_rank_band`)"
            + ("; then where the run put the scale of its similarities, on the STS 2017 sentences: the mean "
               "norm of the means and the mean log-variance per dimension (0: the prior's; "
               "`reproduction.experiments.model_readings.sentence_scale`)" if scaled else "") + ":", "",
            "| Run | " + " | ".join(f"ranks {b}" for b in bands) + (" | ‖mean‖ | log-variance" if scaled else "")
            + " |", "|---|" + "---|" * (len(bands) + 2 * scaled),
            *("| " + " | ".join([f"`{name}`", *(_fmt(v, 2) for v in terms),
                                 *((_fmt(scale[0], 2), _fmt(scale[1], 3)) if scaled else ())]) + " |"
              for name, terms, scale in rows)]


def across_rounds(dev: dict[str, Any]) -> dict[str, float]:
    """Spearman correlations, over every distinct candidate of the rounds (one seed each), of the
    frequent-word term with the active-hinge share ("hinge"), the news-train accuracy ("news") and
    STS 2017 ("sts"); "distinct" candidates, and "repeats" of another's numbers (counted once)."""
    seen, runs = set(), []
    for c in dev["candidates"]:  # a run that repeats another's numbers (r12-dense-adam) counts once
        key = tuple(round(v, 6) for v in (c["sts17"], c["news_dev"], *c["diagnostics"].values()))
        if key not in seen:
            seen.add(key)
            runs.append(c)
    column = {"frequent": [c["diagnostics"]["frequent_term"] for c in runs],
              "hinge": [c["diagnostics"]["active_hinge"] for c in runs],
              "news": [c["news_dev"] for c in runs], "sts": [c["sts17"] for c in runs]}
    rho = lambda other: float(stats.spearmanr(column["frequent"], column[other]).statistic)  # noqa: E731
    return {"distinct": len(runs), "repeats": len(dev["candidates"]) - len(runs),
            "hinge": rho("hinge"), "news": rho("news"), "sts": rho("sts")}


def _across_rounds_lines(dev: dict[str, Any]) -> list[str]:
    """The correlations of :func:`across_rounds`, in words."""
    found = across_rounds(dev)
    moves = lambda r: "rises" if r > 0 else "falls"  # noqa: E731
    hinge, news, sts, duplicates = found["hinge"], found["news"], found["sts"], found["repeats"]
    return ["", "### Across the rounds (development numbers, one seed per candidate)", "",
            f"Over the {found['distinct']} distinct candidates of every round"
            + (f" ({duplicates} {'repeats' if duplicates == 1 else 'repeat'} another's numbers and "
               f"{'counts' if duplicates == 1 else 'count'} once)" if duplicates else "")
            + f", the mean term of the 20 most frequent words {moves(hinge)} with the share of active hinge "
            f"terms (Spearman ρ = {hinge:+.2f}) and {moves(news)} with the news-train accuracy (ρ = {news:+.2f}; "
            f"with STS 2017 r: ρ = {sts:+.2f}). A positive frequent-word term is what the shorter-specific pairs "
            f"need (function words make a sentence more general)"
            + (": the changes that raised the development accuracy made frequent words more specific, so "
               "selecting on it works against those pairs." if news < 0 else ".")]


def _family_lines(round_: RecipeRound, dev: dict[str, Any]) -> list[str]:
    """Per family of changes: its members' development accuracy and word-term diagnostics
    against the reference's (what each change moved inside the model)."""
    by_name = {c["name"]: c for c in dev["candidates"]}
    ref = by_name[round_.reference.name]

    def described(c: dict[str, Any]) -> str:
        d = c["diagnostics"]
        return (f"`{c['name']}` {c['news_dev']:.1f} (Spearman {d.get('term_count_spearman', float('nan')):+.2f}, "
                f"frequent-word term {d.get('frequent_term', float('nan')):+.2f}, STS17 {c['sts17']:.3f})")

    lines = ["", "### What each change moved (development numbers and diagnostics)", "",
             f"Reference: {described(ref)}. News-train accuracy (dev) of each change, with the Spearman "
             f"correlation of word terms with log counts and the mean term of the 20 most frequent words "
             f"at the end of training. One seed each: these numbers choose (rules 2 and 3), they "
             f"do not show that one setting beats another.", ""]
    shown = new_in_round(round_)
    for family, members in round_.families.items():
        found = [by_name[run.name] for run in members if run.name in by_name and run.name in shown]
        if not found:
            continue
        gain = max(c["news_dev"] for c in found) - ref["news_dev"]
        lines.append(f"- {family.replace('_', ' ')}: " + "; ".join(described(c) for c in found)
                     + f". Best gain over the reference: {gain:+.1f} points.")
    return lines


# (label, how to read it from a run record, digits) of the seed checks' table
SEED_CHECK_COLUMNS = (
    ("STS17 r (dev)", lambda c: c["sts17"], 3),
    ("News-train acc (dev)", lambda c: c["news_dev"], 1),
    ("Spearman(term, log count)", lambda c: c["diagnostics"].get("term_count_spearman"), 2),
    ("frequent-word term", lambda c: c["diagnostics"].get("frequent_term"), 2),
    ("active hinge", lambda c: c["diagnostics"].get("active_hinge"), 3),
    ("‖mean‖", lambda c: c["scale"]["mean_norm"], 2),
    ("log-variance", lambda c: c["scale"]["log_variance"], 3),
)


def seed_check_values(round_: RecipeRound, checks: dict[str, list[dict[str, Any]]]) -> dict[str, list[list[float]]]:
    """Per run of ``round_.seed_checks`` (in the round's order): per column of
    :data:`SEED_CHECK_COLUMNS`, its seeds' values."""
    return {name: [[read(c) for c in checks[name]] for _, read, _ in SEED_CHECK_COLUMNS]
            for name in round_.seed_checks}


def seed_check_contrasts(values: dict[str, list[list[float]]]) -> dict[str, dict[str, tuple[float, bool]]]:
    """Each run against the first one: per column label, (difference of the means, whether it is
    larger than either run's sd)."""
    base, *others = values
    contrasts = {}
    for name in others:
        contrasts[name] = {}
        for (label, _, _), ours, theirs in zip(SEED_CHECK_COLUMNS, values[name], values[base]):
            gap = statistics.mean(ours) - statistics.mean(theirs)
            clear = len(ours) > 1 and len(theirs) > 1 and abs(gap) > max(statistics.stdev(ours),
                                                                           statistics.stdev(theirs))
            contrasts[name][label] = (gap, clear)
    return contrasts


def _seed_check_lines(round_: RecipeRound, checks: dict[str, list[dict[str, Any]]] | None) -> list[str]:
    """The seed checks (development numbers of seeds 1-3, mean ± sd), and each run against
    the first of ``round_.seed_checks``: the columns where the means differ by more than
    either run's sd."""
    if not checks:
        return []
    values = seed_check_values(round_, checks)
    lines = ["", "### Seed checks (development numbers, mean ± sd over seeds 1-3)", "",
             "Seeds 2 and 3 of the runs whose one-seed contrast this round's discussion rests on (see the "
             f"amendment in [docs/EXPERIMENTS.md](EXPERIMENTS.md); `{_command(round_, 'seed-checks')}`); they choose nothing. "
             "Diagnostics as above (the last validation; scale on the STS 2017 sentences, `best/`).", "",
             "| Run | " + " | ".join(label for label, _, _ in SEED_CHECK_COLUMNS) + " |",
             "|---|" + "---|" * len(SEED_CHECK_COLUMNS)]
    for name, columns in values.items():
        lines.append("| " + " | ".join([f"`{name}` ({len(columns[0])} seeds)",
                                         *(mean_sd(v, digits) for v, (_, _, digits) in zip(columns, SEED_CHECK_COLUMNS))])
                     + " |")
    base = next(iter(values))
    lines.append("")
    digits = {label: d for label, _, d in SEED_CHECK_COLUMNS}
    for name, contrast in seed_check_contrasts(values).items():
        parts = [f"{label} {gap:+.{digits[label]}f}" for label, (gap, _) in contrast.items()]
        clear = [label for label, (_, larger) in contrast.items() if larger]
        lines.append(f"- `{name}` against `{base}`: " + ", ".join(parts) + "; larger than either run's sd: "
                     + (", ".join(clear) if clear else "none") + ".")
    return lines


def _after_lines(round_: RecipeRound, dev: dict[str, Any]) -> list[str]:
    """The runs trained after the round's test numbers, outside its selection (after.json)."""
    after = load_json(round_.results_dir / "after.json")
    if not after:
        return []
    ref = next(c for c in dev["candidates"] if c["name"] == round_.reference.name)
    lines = ["", "### After the round (outside the selection)", "",
             "Trained after this round's test numbers were seen (see the erratum in [docs/EXPERIMENTS.md](EXPERIMENTS.md)); "
             "they choose nothing. Development numbers and final diagnostics, against the reference's "
             f"{ref['news_dev']:.1f} news-train accuracy:", ""]
    by_name = {x["name"]: x for x in dev["candidates"]}
    paper, ours = (by_name[dev["selection"][rule]] for rule in ("paper", "ours"))
    for c in after:
        d = c["diagnostics"]
        lines.append(f"- `{c['name']}` ({c['note']}): news-train accuracy {c['news_dev']:.1f} "
                     f"({c['news_dev'] - ref['news_dev']:+.1f}), STS17 r {c['sts17']:.3f}, Spearman(term, log count) "
                     f"{d.get('term_count_spearman', float('nan')):+.2f}, frequent-word term "
                     f"{d.get('frequent_term', float('nan')):+.2f}, active hinge {d.get('active_hinge', float('nan')):.3f}.")
        joins = c["news_dev"] - ref["news_dev"] >= dev["combine_margin"]
        changes = [what for what, hit in (("the combination", joins),
                                          ("the paper's-rule selection", c["sts17"] > paper["sts17"]),
                                          ("our-rule selection", c["news_dev"] > ours["news_dev"])) if hit]
        lines.append(f"  Had it competed, it would have changed {' and '.join(changes)}." if changes else
                     f"  Had it competed, it would have changed neither the combination (gain "
                     f"{c['news_dev'] - ref['news_dev']:+.1f} < {dev['combine_margin']}) nor either selection "
                     f"(STS17 r {c['sts17']:.3f} against `{paper['name']}`'s {paper['sts17']:.3f}; news-train "
                     f"{c['news_dev']:.1f} against `{ours['name']}`'s {ours['news_dev']:.1f}).")
    return lines


def _test_lines(round_: RecipeRound, selection: dict[str, str]) -> list[str]:
    groups = seed_runs(round_, selection)
    entries = {key: [_model_entry(evaluation_dir(round_, n) / "evaluation.json") for n in names]
               for key, names in groups.items()}
    paper_entries, ours_entries = entries[selection["paper"]], entries[selection["ours"]]
    ablation_entries = entries["ablation"]
    if not any(paper_entries):
        return ["", f"(test sets not evaluated yet: `{_command(round_, 'evaluate')}`)"]
    # for the paper's rule, the best/ model of each run (the evaluation holds only that one for it)
    wordsum = [_model_entry(RESULTS_DIR / n / "evaluation.json") for n in WORDSUM]
    baselines = load_json(BASELINES) or {}
    paper, ours, ablation, words = (seed_numbers(e) for e in (paper_entries, ours_entries, ablation_entries, wordsum))
    length = [[v] if v is not None else [] for v in baselines.get("Length", [None] * len(COLUMNS))]
    rarity = [[v] if v is not None else [] for v in baselines.get("Word Freq (sum)", [None] * len(COLUMNS))]
    shipped = [[v] if v is not None else [] for v in baselines.get("shipped before issue 11", [None] * len(COLUMNS))]
    lines = ["", "### Test sets (evaluated once, after the selection)", "",
             "Mean ± sd over seeds 1, " + ", ".join(map(str, SEEDS)) + " (×100)."
             + "".join(f" `{selection[rule]}` is round {r.number}'s run: these are that round's numbers, not "
                       "evaluated again." for rule in ("paper", "ours")
                       for r in [earlier_round_of(round_, selection[rule])] if r is not None), "",
             "| System | " + " | ".join(COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS),
             _row(f"WLO, paper's rule: `{selection['paper']}` (best/)", paper),
             _row(f"WLO, our rule: `{selection['ours']}` (best-news/)", ours),
             _row("the same without the prior (λ = 0; best-news/)", ablation),
             _row("Wordsum `wordsum-minibatch-long` (best/)", words),
             _row("Length", length), _row("Word rarity (wordfreq ranks, sum)", rarity),
             _row("shipped model before the recipe study", shipped),
             _paper_row("WLO"), _paper_row("Wordsum")]
    lines += ["", f"Table 7 at this budget (our rule's recipe, 3 seeds each): News accuracy "
              f"{mean_sd(ours[0])} with the prior against {mean_sd(ablation[0])} without it (λ = 0)."]
    lines += ["", "### Goals of the study, checked on these numbers", ""]
    lines += _goal_lines(paper, words, length, ours)
    return lines


@dataclass(frozen=True)
class Check:
    """One goal checked on the numbers: whether it is met (None: not measured), and the values compared."""

    met: bool | None
    values: tuple[float | None, ...]


def _at_least(a: list[float], b: list[float]) -> Check:
    return Check(None if not a or not b else _mean(a) >= _mean(b), (_mean(a), _mean(b)))


def goals(paper: list[list[float]], wordsum: list[list[float]], length: list[list[float]],
          ours: list[list[float]]) -> dict[str, Any]:
    """The goals of the study on the seed values of each column (:data:`COLUMNS`): per one of the
    four specificity columns, the paper's-rule WLO at least Wordsum and at least Length; its STS-B
    r of concat(mean, var) at least its means' and 60; our-rule WLO above Length on all four by
    more than its seed sd (values: the margins, then the sds); and the shorter-specific pairs."""
    concat, means = paper[4], paper[5]
    spread = [statistics.stdev(c) if len(c) > 1 else None for c in ours[:4]]
    margins = [None if not o or not l_ else _mean(o) - _mean(l_) for o, l_ in zip(ours[:4], length[:4])]
    short = ours[6]
    return {"wordsum": [_at_least(paper[k], wordsum[k]) for k in range(4)],
            "length": [_at_least(paper[k], length[k]) for k in range(4)],
            "stsb": Check(None if not concat else _mean(concat) >= max(60.0, _mean(means) or 0.0),
                          (_mean(concat), _mean(means))),
            "beats_length": Check(all(m is not None and s is not None and m > s for m, s in zip(margins, spread)),
                                  (*margins, *spread)),
            "shorter_specific": Check(None if not short else _mean(short) >= 90.0, (_mean(short),))}


def _goal_lines(paper: list[list[float]], wordsum: list[list[float]], length: list[list[float]],
                ours: list[list[float]]) -> list[str]:
    def verdict(ok: bool | None) -> str:
        return "not measured" if ok is None else ("**yes**" if ok else "**no**")

    checked = goals(paper, wordsum, length, ours)
    lines = []
    for name, words, short in zip(COLUMNS[:4], checked["wordsum"], checked["length"]):
        lines.append(f"- Paper's-rule WLO ≥ Wordsum on {name}: {verdict(words.met)} "
                     f"({_fmt(words.values[0])} vs {_fmt(words.values[1])}); ≥ Length: "
                     f"{verdict(short.met)} ({_fmt(short.values[0])} vs {_fmt(short.values[1])}).")
    stsb = checked["stsb"]
    lines.append(f"- Its STS-B r of concat(mean, var) ≥ its means alone and ≥ 60: {verdict(stsb.met)} "
                 f"({_fmt(stsb.values[0])} vs {_fmt(stsb.values[1])}).")
    beats = checked["beats_length"]
    margins, spread = beats.values[:4], beats.values[4:]
    lines.append(f"- Our-rule WLO beats Length on all four by more than its seed spread: {verdict(beats.met)} "
                 f"(margins {' / '.join(_fmt(m) for m in margins)}, sd {' / '.join(_fmt(s) for s in spread)}).")
    short = checked["shorter_specific"]
    lines.append(f"- Our-rule WLO ranks the specific (shorter) sentence higher in ≥ 90% of the pairs: "
                 f"{verdict(short.met)} ({_fmt(short.values[0])}%).")
    return lines
