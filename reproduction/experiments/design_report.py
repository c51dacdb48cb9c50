"""The ship rule's section of docs/RESULTS.md, computed from the design rounds' records.

    python -m reproduction.experiments.design_report    # prints the section (reproduction.experiments.summarize includes it)

Reads results/design/round<N>.json (development numbers, written by ``reproduction.experiments.ship_rule``),
results/design/round<N>-test.json (the test sets, evaluated once after the choice) and the
records of the model shipped before the rule (results/shipped-before-rule/).
"""
from __future__ import annotations

from typing import Any

import numpy as np


from reproduction.experiments.design_rounds import DESIGN_ROUNDS, UNTESTED
from reproduction.experiments.ship_rule import (DIAGNOSTIC_RECORDS, MEASURES, PREVIOUSLY_SHIPPED, RECORDS, SHIPPED_ROWS,
                                   SIMILARITY_DIAGNOSTIC, STS17_FLOOR, STSB_DEV_FLOOR)
from reproduction.experiments.recipe_summary import mean_sd
from reproduction.experiments.selection import load_json
from reproduction.experiments.stage_helpers import SEEDS, seed_name
from reproduction.evaluation.paper import CITATION, TABLE2, TABLE8_STSB

DOMAINS = ("news", "twitter", "yelp", "movie")


def dev_table(runs: dict[str, dict[str, Any]], shipped: dict[str, Any]) -> list[str]:
    """One row per run (and the model shipped before): every development number of the rule."""
    lines = ["| run | STS17 | STS-B dev concat (means) | news length groups | equal-length | one-word explain "
             "| score | shorter-specific | frequent-word term | Spearman(term, log count) | active hinge "
             "| `<unk>` term (median word) | floors missed |", "|" + "---|" * 13]
    rows = [("shipped before the rule", shipped)] + list(runs.items())
    for name, r in rows:
        d = r.get("diagnostics", {})
        diag = [f"{d[k]:.2f}" if k in d else "–" for k in ("frequent_term", "term_count_spearman", "active_hinge")]
        sts17 = f"{r['sts17']:.3f}" if r.get("sts17") == r.get("sts17") else "–"
        missed = "; ".join(r.get("missed", [])) or ("none" if "missed" in r else "–")
        lines.append(f"| `{name}` | {sts17} | {r['stsb_dev_concat']:.1f} ({r['stsb_dev_means']:.1f}) | "
                     f"{r['news_length_groups']:.1f} | {r['equal_length']:.1f} | {r['one_word_explain']:.1f} | "
                     f"{r['score']:.1f} | {r['shorter_specific']:.1f} | {' | '.join(diag)} | {_terms(r)} | {missed} |")
    return lines


def _terms(record: dict[str, Any]) -> str:
    if "unk_term" not in record:
        return "–"
    return f"{record['unk_term']:.2f} ({record['median_term']:.2f})"


def seed_table(record: dict[str, Any]) -> list[str]:
    """Each finalist's development numbers as mean ± sd over its three seeds."""
    lines = ["| finalist | " + " | ".join(MEASURES) + " | score | STS17 | STS-B dev concat | all seeds pass |",
             "|" + "---|" * (len(MEASURES) + 5)]
    for name in record.get("finalists", []):
        runs = [record["runs"].get(n) for n in [name, *(seed_name(name, s) for s in SEEDS)]]
        if any(r is None for r in runs):
            continue
        cells = [mean_sd([r[m] for r in runs]) for m in (*MEASURES, "score")]
        cells += [mean_sd([r["sts17"] for r in runs], 3), mean_sd([r["stsb_dev_concat"] for r in runs])]
        lines.append(f"| `{name}` | " + " | ".join(cells) + f" | {'yes' if all(not r['missed'] for r in runs) else 'no'} |")
    return lines


def test_table(tested: dict[str, Any], shipped_evaluation: dict[str, Any] | None) -> list[str]:
    """The four test sets: Length, the model shipped before, the winner's entropy and its
    calibrated probability (mean ± sd over seeds), and the paper's WLO."""
    runs = list(tested["runs"].values())
    lines = ["| system | News acc. | Twitter ρ | Yelp ρ | Movie ρ | STS-B test concat (means) |", "|---|---|---|---|---|---|"]
    length = tested["length"]
    lines.append("| Length | " + " | ".join(f"{length[d]:.1f}" for d in DOMAINS) + " | – |")
    if shipped_evaluation is not None:
        lines.append(shipped_evaluation_row(shipped_evaluation))
    for row, label in (("entropy", "entropy"), ("probability", "calibrated P(specific), with length")):
        cells = [mean_sd([r[row][d] for r in runs]) for d in DOMAINS]
        sts = (f"{mean_sd([r['stsb_test_concat'] for r in runs])} ({mean_sd([r['stsb_test_means'] for r in runs])})"
               if row == "entropy" else "–")
        lines.append(f"| `{tested['winner']}`, {label} | " + " | ".join(cells) + f" | {sts} |")
    paper = next(row.numbers for row in TABLE2 if row.label == "WLO")
    lines.append(f"| WLO, {CITATION} (the paper's numbers) | " + " | ".join(
        f"{paper[d]:.1f}" if paper.get(d) is not None else "–" for d in DOMAINS) + f" | {TABLE8_STSB['WLO']:.1f} |")
    return lines


ABLATION_COLUMNS = (*MEASURES, "score", "shorter_specific", "stsb_dev_concat")


def ablation_lines(record: dict[str, Any], every_run: dict[str, dict[str, Any]], ablation: str | None) -> list[str]:
    """The winner against the run without the round's change, both over seeds 1-3 (mean ± sd)."""
    winner, seeds = record.get("winner"), record.get("ablation", {})
    if not winner or ablation is None or ablation not in every_run:
        return []
    without = [every_run[ablation], *(seeds.get(seed_name(ablation, s)) for s in SEEDS)]
    if any(r is None for r in without):
        return []
    with_change = [record["runs"][n] for n in [winner, *(seed_name(winner, s) for s in SEEDS)]]
    lines = ["The winner against the same recipe without the round's change, seeds 1-3 (mean ± sd; "
             "`--stage ablation`; development sets):", "",
             "| run | " + " | ".join(ABLATION_COLUMNS) + " | Spearman(term, log count) |",
             "|" + "---|" * (len(ABLATION_COLUMNS) + 2)]
    for name, runs in ((winner, with_change), (ablation, without)):
        cells = [mean_sd([r[c] for r in runs]) for c in ABLATION_COLUMNS]
        cells.append(mean_sd([r["diagnostics"]["term_count_spearman"] for r in runs], 2))
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return lines + [""]


def test_sentence(tested: dict[str, Any]) -> str:
    """Where the winner's entropy stands against Length on each test set, and its STS-B test
    similarity against the development floor (mean over its seeds)."""
    runs = list(tested["runs"].values())
    entropy = {d: float(np.mean([r["entropy"][d] for r in runs])) for d in DOMAINS}
    above = [d for d in DOMAINS if entropy[d] > tested["length"][d]]
    concat = float(np.mean([r["stsb_test_concat"] for r in runs]))
    means = float(np.mean([r["stsb_test_means"] for r in runs]))
    where = ("on all four test sets" if len(above) == len(DOMAINS) else
             f"on {len(above)} of the four test sets ({', '.join(above) or 'none'})")
    return (f"The winner's entropy alone is above Length {where}. On the STS Benchmark test split its cosine of "
            f"concat(mean, var) is {concat:.1f} ({'at or above' if concat >= STSB_DEV_FLOOR else 'below'} the "
            f"{STSB_DEV_FLOOR:.0f} the rule asked of the development split) and its means alone give {means:.1f}.")


def shipped_evaluation_row(evaluation: dict[str, Any]) -> str:
    """The test row of the model shipped before the rule, from its ``probsent eval`` record."""
    system = next(s for s in evaluation["results"]["systems"].values() if s.get("kind") == "model")
    table2 = system["specificity"]
    cells = [f"{table2['news']['accuracy']:.1f}"] + [f"{table2[d]['spearman']:.1f}" for d in DOMAINS[1:]]
    sts = system.get("sts", {}).get("pearson", {})
    concat = sts.get("cosine", {}).get("STSB-test")
    means = sts.get("cosine_mean", {}).get("STSB-test")
    return ("| shipped before the rule, entropy | " + " | ".join(cells) +
            (f" | {concat:.1f} ({means:.1f}) |" if concat is not None else " | – |"))


def render() -> str:
    """The section, every number read from the records."""
    shipped = load_json(PREVIOUSLY_SHIPPED)
    out = ["## The ship rule and its design rounds", "",
           "Generated by `python -m reproduction.experiments.design_report` from `results/design/`.", "",
           "The shipped model is chosen by `experiments/ship_rule.py`, whose rule was committed with the "
           "development sets it reads before any candidate was trained. Floors: the model's own full "
           f"vocabulary, STS 2017 Pearson >= {STS17_FLOOR}, STS Benchmark dev cosine of concat(mean, var) >= "
           f"{STSB_DEV_FLOOR:.0f}, and the equal-length pairs at least the model shipped before. Among the models "
           "that pass, the highest mean of three measures that counting words cannot raise: accuracy within "
           "length groups on the cleaned news training rows, the equal-length pairs and the one-word explain set "
           "(`evaluation/length_controlled.py`, sets in `evaluation/data/`).", ""]
    every_run = {name: run for number in DESIGN_ROUNDS for name, run in
                 ((load_json(RECORDS / f"round{number}.json") or {}).get("runs", {})).items()}
    for number, round_ in DESIGN_ROUNDS.items():
        record = load_json(RECORDS / f"round{number}.json")
        if record is None or shipped is None:
            continue
        out += [f"### Design round {number}", "", f"Protocol commit `{round_.protocol_commit}` (rule, sets and "
                f"candidates, before any run). Hypothesis: {round_.hypothesis}", "",
                *[f"- `{r.name}`: {r.note}" for r in round_.candidates], "",
                *[f"Note: {note}" for note in round_.record_notes], *([""] if round_.record_notes else []),
                *diagnostic_lines(load_json(DIAGNOSTIC_RECORDS[round_.diagnostic]) if round_.diagnostic else None),
                "Development numbers (seed 1; the rule's measures in %):", "", *dev_table(record["runs"], shipped), ""]
        out += contrast_lines(every_run, round_.compared()) + [""]
        if record.get("finalists"):
            out += ["Finalists over seeds 1-3 (mean ± sd):", "", *seed_table(record), ""]
        if "winner" in record:
            out += [winner_sentence(record, round_.choose_by), ""]
        out += ablation_lines(record, every_run, round_.ablation)
        tested = load_json(RECORDS / f"round{number}-test.json")
        if tested is not None:
            shipped_eval = load_json(PREVIOUSLY_SHIPPED.parent / "shipped-evaluation.json")
            out += ["Test sets, evaluated once after the choice (winner: mean ± sd over its three seeds):", "",
                    *test_table(tested, shipped_eval), "", test_sentence(tested), ""]
    out += similarity_lines(load_json(SIMILARITY_DIAGNOSTIC))
    out += ["### Still untested", "", *[f"- {item}" for item in UNTESTED], ""]
    out += shipped_rows_lines(load_json(SHIPPED_ROWS))
    return "\n".join(out).rstrip() + "\n"


def diagnostic_command(stage: str) -> str:
    """The command that writes a diagnostic stage's record: with the last design round whose data
    file names runs for that stage."""
    number = max(n for n, round_ in DESIGN_ROUNDS.items() if stage in round_.diagnostic_runs)
    return f"python -m reproduction.experiments.ship_rule --round {number} --stage {stage}"


def similarity_lines(record: dict[str, Any] | None) -> list[str]:
    """What the paper's similarity read-out, the cosine of concat(mean, var), is made of, per run
    (STS Benchmark dev, development only)."""
    if record is None:
        return []
    lines = ["### What concat(mean, var) is made of", "",
             f"`{diagnostic_command('similarity')}` (STS Benchmark dev, Pearson x100; the "
             "variance share is the median share of the variance half in the norm of concat(mean, var); the last "
             "columns are the model's own similarity, log N(0; mu1 - mu2, S1 + S2) (what `similarity()` returned then; "
             "now `measure=\"expected_inner_product\"`), and "
             "its two parts: the distance -1/2 sum_d (mu1 - mu2)^2 / (S1 + S2) and -1/2 log|S1 + S2|):", "",
             "| run | concat(mean, var) | means alone | variances alone | variance share | own similarity "
             "| its distance part | its log-determinant part |", "|---|---|---|---|---|---|---|---|"]
    for run, r in record.items():
        own = [f"{r[k]:.1f}" if k in r else "–"
               for k in ("expected_inner_product", "own_distance_part", "own_log_determinant_part")]
        lines.append(f"| `{run}` | {r['concat']:.1f} | {r['means']:.1f} | {r['variances']:.1f} | "
                     f"{r['variance_share']:.2f} | " + " | ".join(own) + " |")
    heavy = [run for run, r in record.items() if r["variance_share"] > 0.5]
    below = [run for run, r in record.items() if r["variances"] < r["means"]]
    return lines + ["", f"The variance half outweighs the means in {len(heavy)} of the {len(record)} runs' "
                    f"concatenations; in {len(below)} of them the variances alone score below the means alone: "
                    "where both hold, the read-out mostly measures the variances' similarity.", ""]


def diagnostic_lines(record: dict[str, Any] | None) -> list[str]:
    """The rarity diagnostic a round's hypothesis quotes (development sets only): the rule's
    three measures with a model's own entropy terms, the words' rarity alone, and their sum."""
    if record is None:
        return []
    lines = [f"The diagnostic behind it (`{diagnostic_command('rarity')}`; development "
             f"sets only): the entropy terms of `{record['model']}` replaced by {record['rarity_weight']} x (log "
             "training count - the average token's):", "",
             "| entropy terms | " + " | ".join(MEASURES) + " |", "|" + "---|" * (len(MEASURES) + 1)]
    for label, measures in record["measures"].items():
        lines.append(f"| {label} | " + " | ".join(f"{measures[m]:.1f}" for m in MEASURES) + " |")
    return lines + [""]


def shipped_rows_lines(rows: dict[str, Any] | None) -> list[str]:
    """The shipped model's rows on the four test sets: its entropy, its P(specific) (of the score and
    the length; in earlier records, for the sentence's length and the news-threshold probability, or
    the one probability they hold), and the share of each set the API withholds a reading of."""
    if rows is None:
        return []
    measures, length = rows["measures"], rows["length"]
    gap = measures["probability"]["news"] - length["news"]  # P(specific) against Length on News
    table = ["| system | News acc. | Twitter ρ | Yelp ρ | Movie ρ |", "|---|---|---|---|---|",
             "| Length | " + " | ".join(f"{length[d]:.1f}" for d in DOMAINS) + " |"]
    by_length = rows.get("calibration") == "percentile"
    labels = ((("entropy", "entropy (the score)"), ("probability", "P(specific) for the sentence's length"),
               ("news_probability", "news-threshold probability (a logistic of the score)")) if by_length else
              (("entropy", "entropy (the score)"), ("probability", "P(specific), " + (
                  "a logistic fit of the score" if rows.get("calibration") == "score" else "calibrated with length"))))
    for row, label in labels:
        table.append(f"| shipped model, {label} | " + " | ".join(f"{measures[row][d]:.1f}" for d in DOMAINS) + " |")
    if rows.get("calibration") == "score_and_length":  # issue 49: a probability of the news label
        table[-1] = ("| shipped model, P(specific) (a logistic of the score and the log token count) | "
                     + " | ".join(f"{measures['probability'][d]:.1f}" for d in DOMAINS) + " |")
        table.append("| share withheld by `model.note` (%) | "
                     + " | ".join(f"{measures['withheld'][d]:.1f}" for d in DOMAINS) + " |")
        return ["### The shipped model's P(specific)", "",
                "`probsent calibrate` fits P(specific), the chance that a news annotator calls the sentence "
                "specific, on the cleaned news training rows (`python -m reproduction.experiments.ship_rule --round 1 --stage "
                "shipped-rows`; News: accuracy with the threshold tuned on the training rows; the ρ columns rank by "
                "P). Here every test sentence is read; the last row is the share the API withholds (fewer than "
                "three words, half unknown, or mostly repetition). Its calibration measures are in \"P(specific): "
                "the chance that a news annotator calls the sentence specific\" below.", "", *table, "",
                f"On News, P(specific) is {abs(gap):.1f} points {'above' if gap >= 0 else 'below'} Length.", ""]
    if not by_length:
        return ["### The shipped model's P(specific)", "", *table, "",
                f"On News the calibrated probability is {abs(gap):.1f} points {'above' if gap >= 0 else 'below'} "
                f"Length.", ""]
    withheld = measures["withheld"]
    table.append("| share withheld by `model.note` (%) | " + " | ".join(f"{withheld[d]:.1f}" for d in DOMAINS) + " |")
    return ["### The shipped model's P(specific)", "",
            "`probsent calibrate` fits two probabilities on the cleaned news training rows "
            "(`python -m reproduction.experiments.ship_rule --round 1 --stage shipped-rows`; the ρ columns rank by each): "
            "P(specific) for the sentence's length, a logistic function of the percentile among reference "
            "sentences of its length (what `model.probability` and `--probability` give: it agrees with the "
            "percentile, so a short precise sentence reads as specific), and the news-threshold probability, a "
            "logistic function of the raw score (`model.news_probability`: the score's order, so its columns "
            "equal the entropy's). Here every test sentence is read; the last row is the share the API "
            "withholds (fewer than three words, half unknown, or mostly repetition):", "", *table, "",
            f"On News, P(specific) for the length is {abs(gap):.1f} points {'above' if gap >= 0 else 'below'} "
            f"Length: with length factored out, the news labels are mostly not read (they follow length).", ""]


def contrast_lines(runs: dict[str, dict[str, Any]], pairs: list[tuple[str, str]]) -> list[str]:
    """Each (candidate, reference) pair, measure by measure (seed 1: these choose nothing and
    claim nothing beyond one seed)."""
    lines = []
    for name, reference in pairs:
        run, base = runs.get(name), runs.get(reference)
        if base is None or run is None:
            continue
        moved = ", ".join(f"{label} {run[key] - base[key]:+.1f}" for key, label in (
            ("equal_length", "equal-length"), ("one_word_explain", "one-word explain"),
            ("news_length_groups", "news length groups"), ("shorter_specific", "shorter-specific"),
            ("stsb_dev_concat", "STS-B dev concat")))
        d, b = {**run.get("diagnostics", {}), **run}, {**base.get("diagnostics", {}), **base}
        show = lambda key, value: f"{value:,.0f}" if key == "vocabulary" else f"{value:.2f}"  # noqa: E731
        inside = ", ".join(f"{label} {show(key, b[key])} -> {show(key, d[key])}" for key, label in (
            ("frequent_term", "frequent-word term"), ("term_count_spearman", "Spearman(term, log count)"),
            ("active_hinge", "active hinge share"), ("unk_term", "`<unk>` term"), ("median_term", "median word's term"),
            ("vocabulary", "vocabulary")) if key in d and key in b)
        lines.append(f"- `{name}` against `{reference}` (points, one seed): {moved}; inside the model: {inside}.")
    return lines


CHOICE_LABELS = {"score": "score", "stsb_dev_concat": "STS-B dev concat"}


def winner_sentence(record: dict[str, Any], key: str = "score") -> str:
    """What the rule chose by ``key`` (the rule's score, or the number a round chooses by), in
    words computed from the record."""
    winner = record["winner"]
    if winner is None and not record.get("finalists"):
        return "No candidate passed every floor at seed 1, so none became a finalist: this round ships nothing."
    if winner is None:
        return "No finalist passed every floor on all three seeds: this round ships nothing."
    runs = record["runs"]
    seed_runs = {name: [runs[n] for n in [name, *(seed_name(name, s) for s in SEEDS)]]
                 for name in record["finalists"]}
    # the finalists the rule compared: those whose every seed passes the floors
    seed_scores = {name: [r[key] for r in found] for name, found in seed_runs.items()
                   if all(not r["missed"] for r in found)}
    scores = seed_scores[winner]
    sentence = (f"The rule chose `{winner}` ({CHOICE_LABELS[key]} {mean_sd(scores)} over three seeds); its seed-1 "
                f"`best/` model ships, every one of its {runs[winner]['vocabulary']:,} vocabulary entries kept.")
    for other, theirs in seed_scores.items():
        gap = float(np.mean(scores) - np.mean(theirs))
        spread = max(float(np.std(scores, ddof=1)), float(np.std(theirs, ddof=1)))
        if other != winner and gap < spread:
            sentence += (f" Its lead over `{other}` ({mean_sd(theirs)}) is {gap:.1f} points, within one standard "
                         f"deviation over the seeds: the rule had to pick one, and the two are not told apart.")
    return sentence


def main() -> int:
    print(render(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
