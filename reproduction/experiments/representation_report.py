"""RESULTS' section on issue 34's rounds: every number read from ``results/design/representation-*.json``,
the rule's constants (experiments/representation_rule.py) and, for the goals, the shipped model's test
records (``results/design/shipped-rows.json``, ``results/shipped/evaluation.json``).

    python -m reproduction.experiments.summarize   # writes docs/RESULTS.md, this section included
"""
from __future__ import annotations

import json
from typing import Any

from reproduction.experiments.design_rounds import REPRESENTATION_ROUNDS
from reproduction.experiments.representation_rule import (DIRECTION_DIAGNOSTIC, FINALISTS, GOALS, MOST_LOSS, PROTOCOL_COMMITS,
                                             REFERENCE, SHIP_MARGIN, SHIPPED_CHOICE, SPECIFICITY, direction_noise,
                                             noise_units)
from reproduction.experiments.paths import REPO, WING, RESULTS_DIR
from reproduction.experiments.ship_rule import RECORDS, STS17_FLOOR, STSB_DEV_FLOOR
from reproduction.experiments.selection import load_json
from reproduction.experiments.stage_helpers import SEEDS, seed_name

COLUMNS = (("news_length_groups", "News groups"), ("equal_length", "Equal-length"),
           ("one_word_explain", "One-word explain"), ("shorter_specific", "Shorter-specific"),
           ("stsb_dev_concat", "STS-B dev concat"), ("stsb_dev_means", "STS-B dev means"))


def number_cell(value: float | None, digits: int = 1) -> str:
    """A table cell: the number to ``digits`` places, or a dash where there is none."""
    return "—" if value is None else f"{value:.{digits}f}"


def _row(name: str, r: dict[str, Any]) -> str:
    snli = r["snli_dev"]
    cells = [number_cell(r[key]) for key, _ in COLUMNS]
    cells += [f"{number_cell(snli['entailment'])} / {number_cell(snli['neutral'])} / {number_cell(snli['contradiction'])}",
              f"{number_cell(r['news_train'])} vs {number_cell(r['information_content_news_train'])}", number_cell(r["sts17"], 3)]
    if "gains" in r:
        g = r["gains"]
        cells += [f"{g['stsb']:+.2f} / {g['entailment']:+.2f} / **{g['C']:+.2f}**",
                  "; ".join(r["missed"]) or "none"]
    else:
        cells += ["(reference)", "—"]
    return f"| `{name}` | " + " | ".join(cells) + " |"


def _header() -> list[str]:
    names = [label for _, label in COLUMNS] + ["SNLI dev E / N / C", "News-train vs information content",
                                               "STS 2017", "Gains STS-B / E / C (noise units)", "Floors missed"]
    return ["| Run | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]


def reference_lines(reference: dict[str, Any]) -> list[str]:
    units = noise_units(reference)
    shipped = {**reference["shipped"], "snli_dev": reference["snli_dev"]}
    sd = reference["sd"]
    return ["Reference (`python -m reproduction.experiments.representation_rule --stage reference`): the shipped model's "
            "development numbers, and the sample sd over its recipe's three seeds in "
            f"`{json.loads(SHIPPED_CHOICE.read_text(encoding='utf-8'))['record']}` "
            f"(`{'`, `'.join(reference['recipe_seeds'])}`): "
            + ", ".join(f"{key.replace('_', ' ')} {number_cell(sd[key], 2)}" for key in [*SPECIFICITY, "stsb_dev_concat"])
            + f". Noise units: u_STS = {units['stsb']:.2f} (that sd of STS-B dev concat around its three-seed mean "
            f"{reference['mean']['stsb_dev_concat']:.1f}), u_E = {units['entailment']:.2f} (the binomial sd of the "
            f"shipped model's SNLI dev entailment share); the direction floor's noise is "
            f"{direction_noise(reference):.2f}.", "",
            *_header(), _row("shipped (probsent/pretrained/wlo)", shipped), "",
            f"The shipped model itself is below the information-content baseline on the news training rows "
            f"({reference['shipped']['news_train']:.1f} against "
            f"{reference['shipped']['information_content_news_train']:.1f}, threshold tuned on those rows): "
            "the rule's information-content floor asks every candidate for more than the model it would replace "
            "has."
            if reference["shipped"]["news_train"] <= reference["shipped"]["information_content_news_train"] else "",
            ""]


def round_lines(name: str, record: dict[str, Any]) -> list[str]:
    round_ = REPRESENTATION_ROUNDS[name]
    out = [f"### Round {name}", "",
           f"Entry committed in `{round_.protocol_commit}`, before any of its runs. Hypothesis: {round_.hypothesis}", "",
           *[f"- `{r.name}`: {r.note}" for r in round_.candidates], "",
           *[f"Note: {note}" for note in round_.record_notes], ""]
    diagnostic = record.get("diagnostic")
    if diagnostic:
        out += [f"Diagnostic (`--round {name} --stage diagnostic`, STS-B dev Pearson x100 on "
                f"`{diagnostic['model']}`): " + ", ".join(f"{k.replace('_', ' ')} {v:.1f}"
                                                          for k, v in diagnostic["measures"].items()) + ".", ""]
    runs = record.get("runs", {})
    first = [r.name for r in round_.candidates if r.name in runs]  # seed 1; the others are seeds 2-3
    if runs:
        out += ["Development numbers (seed 1; `--stage dev`):", "", *_header(),
                *[_row(run, runs[run]) for run in first], "",
                "Diagnostics of each run's last validation (`log.jsonl`): "
                + "; ".join(f"`{run}` Spearman(term, log count) "
                            f"{number_cell(runs[run]['diagnostics'].get('term_count_spearman'), 2)}, "
                            f"active hinge {number_cell(runs[run]['diagnostics'].get('active_hinge'), 2)}" for run in first)
                + ".", ""]
    parts = record.get("similarity_parts")
    if parts:
        out += [f"What each candidate did to the similarity it trained (`--round {name} --stage similarity-parts`, "
                "STS-B dev Pearson x100 of log N(0; mu1 - mu2, S1 + S2) with the variances the similarity compares, "
                "and of its distance and log-determinant parts): "
                + "; ".join(f"`{run}` {p['own_similarity']:.1f} ({p['own_distance_part']:.1f} and "
                            f"{p['own_log_determinant_part']:.1f})" for run, p in parts.items()) + ".", ""]
    unmeasured = [r.name for r in round_.candidates if r.name not in runs]
    if unmeasured:
        out += [f"Not measured yet: {', '.join(f'`{n}`' for n in unmeasured)} (in training or to train; the "
                "round's choice waits for every candidate).", ""]
    seeds = [run for run in runs if run not in first]
    if seeds:
        out += ["Seeds 2 and 3 of the finalists (`--stage seeds`):", "", *_header(), *[_row(r, runs[r]) for r in seeds], ""]
    if "finalists" in record:
        finalists = record["finalists"]
        out.append("Finalists (the two seed-1 candidates with the highest C among those that pass every floor): "
                   + (", ".join(f"`{n}`" for n in finalists) or "none") + ".")
        waiting = [seed_name(n, s) for n in finalists for s in SEEDS if seed_name(n, s) not in runs]
        if waiting:
            out.append(f"Not trained yet: {', '.join(f'`{w}`' for w in waiting)}; the round's choice waits for them.")
        if record.get("three_seed_C"):
            out.append("Three-seed mean C: " + ", ".join(f"`{n}` {c:+.2f}" for n, c in record["three_seed_C"].items())
                       + ".")
        if "winner" in record and not waiting:
            out.append(f"Winner: `{record['winner']}`; it ships only with a three-seed mean C of at least "
                       f"{SHIP_MARGIN}: {'it does' if record.get('ships') else 'the shipped model stays'}."
                       if record["winner"] else "No finalist passes every floor on all three seeds: the shipped "
                       "model stays.")
        out.append("")
    tested = load_json(RECORDS / f"representation-round{name}-test.json")
    if tested:
        out += ["Test sets, read once per finalist after the choice: " + "; ".join(
            f"`{run}` STS-B test concat {t['stsb_test_concat']:.1f}, means {t['stsb_test_means']:.1f}, News "
            f"{t['entropy']['news']:.1f}" for run, t in tested.items()) + ".", ""]
    return out


def _ordered_already(record: dict[str, Any] | None, reference: dict[str, Any], key: str) -> bool:
    """Whether the shipped model orders every simplification source (by ``key``'s share) at least
    as often as SNLI dev entailment: by the protocol, round B is then replaced."""
    sources = [r for r in (record or {}).values() if isinstance(r, dict)]
    return bool(sources) and all(r[key] is not None and r[key] >= reference["snli_dev"]["entailment"] for r in sources)


def direction_lines(record: dict[str, Any] | None, reference: dict[str, Any]) -> list[str]:
    """Round B's diagnostic and what the protocol does with it."""
    if record is None:
        return []
    entailment = reference["snli_dev"]["entailment"]
    out = ["### Round B's diagnostic: the direction the simplification pairs carry", "",
           f"`python -m reproduction.experiments.representation_rule --stage direction` (training pairs only; `{record['model']}`): "
           "in each simplification source, the original is the side that repeats across its simplifications.", "",
           "| Source | Pairs (directed) | Original has more tokens | Original more specific (lower entropy) | "
           "Same, at equal token counts (pairs) |", "|---|---|---|---|---|"]
    for source, r in record.items():
        if isinstance(r, dict):
            out.append(f"| {source} | {r['pairs']:,} ({r['directed']:,}) | {number_cell(r['original_longer'])} | "
                       f"{number_cell(r['original_more_specific'])} | {number_cell(r['original_more_specific_at_equal_length'])} "
                       f"({r['equal_length_pairs']:,}) |")
    at_equal_length = _ordered_already(record, reference, "original_more_specific_at_equal_length")
    out += ["", f"The shipped model's SNLI dev entailment share is {entailment:.1f}. "
            + ("The model already orders every simplification source at least as often"
               + (", at equal length too" if at_equal_length else "") + ", so by the protocol the direction hinge "
               "has little to teach: round B is replaced and its candidates are not trained."
               if _ordered_already(record, reference, "original_more_specific") else
               "Some source is ordered less often than SNLI entailment: the hinge has something to teach, and "
               "round B's entry may be committed."), ""]
    return out


def render() -> list[str]:
    """The section's lines (empty before the reference record exists)."""
    reference = load_json(REFERENCE)
    if reference is None:
        return []
    out = ["## Similarity and entailment from the same Gaussians", "",
           "Generated by `python -m reproduction.experiments.summarize` from `results/design/representation-*.json`, written "
           "by `python -m reproduction.experiments.representation_rule` (its docstring lists the stages). The rule, its floors "
           f"and the first candidates were committed before any run (`{PROTOCOL_COMMITS}`; docs/EXPERIMENTS.md, "
           f"section \"Similarity and entailment rounds\"). Floors, on every seed: the ship rule's (full vocabulary, STS 2017 >= {STS17_FLOOR:.2f}, "
           f"STS-B dev concat >= {STSB_DEV_FLOOR:g}); each specificity development measure at least the shipped model's "
           "value less its recipe's three-seed sd; news-train accuracy above the information-content baseline's "
           f"(the candidate's own training counts); neither gain below {MOST_LOSS:g} noise unit; SNLI dev's entailment-"
           "minus-neutral gap at least the shipped model's less its noise. Choice: C, the mean of the two gains in "
           f"noise units (STS-B dev concat, SNLI dev entailment); finalists are the best {FINALISTS} seed-1 candidates "
           "that pass, "
           f"their seeds 2-3 are trained, and a winner ships only with a three-seed mean C >= {SHIP_MARGIN}. "
           "SNLI columns: % of equal-length dev pairs whose hypothesis scores less specific, by label.", ""]
    out += reference_lines(reference)
    for name in REPRESENTATION_ROUNDS:
        record = load_json(RECORDS / f"representation-round{name}.json")
        if record is not None:
            out += round_lines(name, record)
    out += direction_lines(load_json(DIRECTION_DIAGNOSTIC), reference)
    out += outcome_lines(reference)
    return out


def _goal(value: float | None, goal: float) -> str:
    return "—" if value is None else f"{value:.1f} ({'met' if value >= goal else 'missed'}: goal >= {goal:g})"


def outcome_lines(reference: dict[str, Any]) -> list[str]:
    """What the rounds add up to, once every round's choice is recorded; every number from the records."""
    from reproduction.experiments.selection import load_run

    records = {name: load_json(RECORDS / f"representation-round{name}.json") for name in REPRESENTATION_ROUNDS}
    if not records or any(r is None or "winner" not in r for r in records.values()):
        return []
    winners = {name: r["winner"] for name, r in records.items() if r.get("ships")}
    out = ["### Outcome", ""]
    if winners:
        return out + [f"Round {', '.join(winners)} ships `{', '.join(winners.values())}`.", ""]
    runs = {run: r for record in records.values() for run, r in record["runs"].items()}
    below_information = [run for run, r in runs.items() if any("information content" in m for m in r["missed"])]
    parts = {run: p["own_similarity"] for record in records.values()
             for run, p in record.get("similarity_parts", {}).items()}
    rows_path, evaluation_path = RECORDS / "shipped-rows.json", RESULTS_DIR / "shipped" / "evaluation.json"
    stsb_test = ((load_json(rows_path) or {}).get("measures", {})).get("stsb_test_concat")
    evaluation = load_run(evaluation_path)
    model = next((e for e in evaluation.results.systems.values() if e.kind == "model"), None) if evaluation else None
    snli_test = model.snli.entailment if model is not None and model.snli else None
    standing = [name for name, r in records.items() if r.get("finalists")]
    replaced = _ordered_already(load_json(DIRECTION_DIAGNOSTIC), reference, "original_more_specific")
    return out + [
        "No round has a winner"
        + (f" (finalists only in round {', '.join(standing)})" if standing else " (no candidate passes the floors)")
        + ("; round B was replaced by its diagnostic" if replaced else "")
        + (", and round C, which the protocol runs only if round A or B leaves a candidate standing, was not run"
           if not standing else "") + ". The shipped model stays, unchanged. "
        f"{len(below_information)} of {len(runs)} candidates miss the information-content floor, which the shipped "
        f"model itself misses on the news training rows ({reference['shipped']['news_train']:.1f} against "
        f"{reference['shipped']['information_content_news_train']:.1f}). "
        + ("Own similarity on STS-B dev (similarity-parts above): "
           + ", ".join(f"`{run}` {value:.1f}" for run, value in parts.items()) + ". " if parts else "")
        + f"The issue's goals, on the model that stays: STS-B test concat {_goal(stsb_test, GOALS['stsb_test_concat'])} "
        f"(`{rows_path.relative_to(WING).as_posix()}`); SNLI test entailment "
        f"{_goal(snli_test, GOALS['snli_test_entailment'])} (`{evaluation_path.relative_to(WING).as_posix()}`). The losing options left `probsent train` and the model registry "
        "(the lean rule); they train at commit 0a6bcda.", ""]
