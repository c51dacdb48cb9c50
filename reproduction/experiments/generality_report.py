"""RESULTS' section on the generality rounds: every number read from ``results/design/generality-*.json``,
``results/generality/fit.json`` and the rule's constants (experiments/generality_rule.py).

    python -m reproduction.experiments.summarize   # writes docs/RESULTS.md, this section included
"""
from __future__ import annotations

from typing import Any

from reproduction.experiments.design_rounds import GENERALITY_ROUNDS
from reproduction.experiments.generality_rule import (CHOICE, DIAGNOSTIC, FINALISTS, GOALS, MOST_LOSS, SHIP_MARGIN, units)
from reproduction.experiments.representation_rule import REFERENCE, SPECIFICITY
from reproduction.experiments.representation_report import number_cell
from reproduction.experiments.paths import GENERALITY_TARGETS_DIR
from reproduction.experiments.ship_rule import RECORDS
from reproduction.experiments.selection import load_json
from reproduction.experiments.stage_helpers import SEEDS

FIT_RECORD = GENERALITY_TARGETS_DIR / "fit.json"  # what the generality fit saw (written at commit 9701be6)
RAN_AT = "9701be6"  # the last commit with --rarity-from, where the rounds' training stages run

COLUMNS = (("wordnet_dev_unseen", "WordNet dev, unseen words"),
           ("wordnet_dev_unseen_general_rarer", "… general word rarer"),
           ("wordnet_dev", "WordNet dev, all words"), ("wordnet_dev_general_rarer", "… general word rarer"),
           ("news_length_groups", "News groups"), ("equal_length", "Equal-length"),
           ("one_word_explain", "One-word explain"), ("shorter_specific", "Shorter-specific"),
           ("stsb_dev_concat", "STS-B dev concat"))
CHOICE_LABELS = {"snli_dev_entailment": "SNLI dev entailment", "wordnet_dev_unseen": "WordNet dev (unseen words)",
                 "wordnet_dev_unseen_general_rarer": "WordNet dev (unseen words, general word rarer)"}


def _header() -> list[str]:
    names = [label for _, label in COLUMNS] + ["SNLI dev E / N / C", "News-train vs information content",
                                               "STS 2017", "`<unk>` term", "Gains E / W / W-rarer: C (noise units)",
                                               "Floors missed"]
    return ["| Run | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]


def _row(name: str, r: dict[str, Any]) -> str:
    snli = r["snli_dev"]
    cells = [number_cell(r[key]) for key, _ in COLUMNS]
    cells += [f"{number_cell(snli['entailment'])} / {number_cell(snli['neutral'])} / {number_cell(snli['contradiction'])}",
              f"{number_cell(r['news_train'])} vs {number_cell(r['information_content_news_train'])}", number_cell(r["sts17"], 3),
              number_cell(r.get("unk_term"), 2)]
    if "gains" in r:
        g = r["gains"]
        cells += [" / ".join(f"{g[name]:+.2f}" for name in CHOICE) + f": **{g['C']:+.2f}**",
                  "; ".join(r["missed"]) or "none"]
    else:
        cells += ["(reference)", "—"]
    return f"| `{name}` | " + " | ".join(cells) + " |"


def diagnostic_lines(diagnostic: dict[str, Any], fit: dict[str, Any] | None) -> list[str]:
    shipped = diagnostic["shipped"]
    unit = units(diagnostic)
    n = shipped["wordnet_n"]
    lines = ["Diagnostic (`python -m reproduction.experiments.generality_rule --stage diagnostic`, development sets only): the "
             "shipped model's numbers, which the rule's gains are measured from. WordNet dev: the development "
             f"half's pairs with both words in the vocabulary ({n['dev']:,}; {n['dev_general_rarer']:,} with the "
             f"general word rarer in English), and of them the pairs of *unseen* words, both outside the half the "
             f"generality fit saw ({n['dev_unseen']:,}; {n['dev_unseen_general_rarer']:,}). Noise units (binomial "
             "sd of the shipped model's share): "
             + ", ".join(f"{CHOICE_LABELS[name]} {unit[name]:.2f}" for name in CHOICE) + ".", "",
             *_header(), _row("shipped (probsent/pretrained/wlo)", shipped), ""]
    baselines = shipped["wordnet_dev_unseen_baselines"]
    lines += ["On the same unseen words' pairs, information content from wordfreq ranks "
              f"{number_cell(baselines['all']['information_content_wordfreq'])} % right over all and "
              f"{number_cell(baselines['general_rarer']['information_content_wordfreq'])} % where the general word is "
              "rarer (right only by ties there, by construction)."]
    if fit:
        lines[-1] += (f" The generality score (`python -m reproduction.experiments.generality_targets` at commit `{RAN_AT}`, "
                      "`results/generality/fit.json`), "
                      f"fitted on {fit['fitted_pairs']:,} development pairs of the anchor half's words, ranks "
                      f"{fit['judged_held_out_dev_pairs']:,} development pairs of unseen words with GloVe vectors "
                      f"{number_cell(fit['score_on_held_out_dev_pairs'])} % right ("
                      f"{number_cell(fit['score_on_held_out_dev_general_rarer'])} % where the general word is rarer): the "
                      "signal a candidate can learn, before any training.")
    return lines + [""]


def round_lines(name: str, record: dict[str, Any] | None) -> list[str]:
    round_ = GENERALITY_ROUNDS[name]
    out = [f"### Round {name}", "",
           f"Entry committed in `{round_.protocol_commit}`, before any of its runs. Hypothesis: {round_.hypothesis}", ""]
    out += [f"- `{run.name}`: {run.note}" for run in round_.candidates] + [""]
    if not record or not record.get("runs"):
        return out + ["No run of this round has been measured yet.", ""]
    out += [f"Command: `python -m reproduction.experiments.generality_rule --round {name} --stage dev` (then `--stage seeds`, "
            f"`--stage select`) at commit `{RAN_AT}`, the last with `--rarity-from` (it left probsent in issue 49); "
            f"record `results/design/generality-round{name}.json`.", "", *_header()]
    out += [_row(run, r) for run, r in record["runs"].items()] + [""]
    if "finalists" in record:
        finalists = record["finalists"]
        out.append(f"Finalist (the best {FINALISTS} seed-1 candidate that passes the floors): "
                   + (", ".join(f"`{f}`" for f in finalists) if finalists else "none, so no test split was read")
                   + ".")
        for finalist, mean in record.get("three_seed_C", {}).items():
            out.append(f"`{finalist}`'s three seeds (1, {', '.join(str(s) for s in SEEDS)}) all pass; mean C "
                       f"{mean:+.2f}.")
        winner = record.get("winner")
        out.append(f"Winner: `{winner}`; it {'ships' if record.get('ships') else 'does not ship'} "
                   f"(the rule asks a three-seed mean C of at least {SHIP_MARGIN})." if winner else
                   "No winner: the shipped model stays.")
        out.append("")
    return out


def floor_against_seeds_lines(reference: dict[str, Any]) -> list[str]:
    """How each specificity floor compares with the shipped recipe's own seeds (their records in the
    record issue 34's reference names): a floor that the recipe's own seeds miss asks a candidate for
    more than the recipe it starts from gives."""
    from reproduction.experiments.paths import WING
    from reproduction.experiments.representation_rule import SHIPPED_CHOICE

    choice = load_json(SHIPPED_CHOICE) or {}
    seeds_record = load_json(WING / choice["record"]) if choice.get("record") else None
    if not seeds_record:
        return []
    lines = []
    for name in SPECIFICITY:
        floor = reference["shipped"][name] - reference["sd"][name]
        values = [seeds_record["runs"][run][name] for run in reference["recipe_seeds"]]
        below = [run for run, value in zip(reference["recipe_seeds"], values) if value < floor]
        if below:
            lines.append(f"{name.replace('_', ' ')}: floor {floor:.1f}, the recipe's seeds "
                         + " / ".join(f"{v:.1f}" for v in values)
                         + f" ({', '.join(f'`{run}`' for run in below)} below it)")
    if not lines:
        return []
    return ["What the floors ask, against the shipped recipe's own three seeds (development numbers, "
            f"`{choice['record']}`): " + "; ".join(lines) + ". A floor taken from the shipped model's seed-1 "
            "value less the seed sd is missed by the recipe's own seeds there: a candidate missing it by less than "
            "the seeds' spread is not shown to be worse than the recipe. The rule was committed so and is "
            "applied so; a later round may pre-register a floor at the recipe's three-seed mean less its sd.", ""]


def generality_section() -> list[str]:
    """RESULTS' section on the generality rounds, from the records."""
    diagnostic = load_json(DIAGNOSTIC)
    out = ["## Generality: an entropy that reads how specific English is", "",
           "Issue 41's rule (docs/EXPERIMENTS.md, \"Generality rounds\"; `experiments/generality_rule.py`), committed "
           "before any run: every specificity development measure of the shipped model kept within its recipe's "
           f"three-seed sd ({', '.join(name.replace('_', ' ') for name in SPECIFICITY)}), STS-B dev concat within "
           f"one sd, the SNLI dev direction floor and no gain below {MOST_LOSS:g} noise unit; the choice by C, the "
           "mean gain in noise units of "
           + ", ".join(CHOICE_LABELS[name] for name in CHOICE)
           + f". Issue 41's goals for a model that ships: WordNet test >= {GOALS['wordnet_test']:g} % over all pairs "
           f"and >= {GOALS['wordnet_test_general_rarer']:g} % where the general word is rarer; SNLI test entailment "
           f">= {GOALS['snli_test_entailment']:g} with neutral and contradiction within "
           f"{GOALS['snli_test_other'][0]:g}-{GOALS['snli_test_other'][1]:g}; News >= {GOALS['news']:g} (the "
           "paper's).", ""]
    if diagnostic is None:
        return out + ["No diagnostic record yet.", ""]
    out += diagnostic_lines(diagnostic, load_json(FIT_RECORD))
    for name in GENERALITY_ROUNDS:
        out += round_lines(name, load_json(RECORDS / f"generality-round{name}.json"))
    reference = load_json(REFERENCE)
    if reference:
        out += floor_against_seeds_lines(reference)
        out += [f"The recipe's three-seed sds behind the floors are issue 34's reference record "
                f"(`{REFERENCE.relative_to(REFERENCE.parents[2]).as_posix()}`).", ""]
    return out
