"""Write probsent/pretrained/wlo/MODEL_CARD.md for the shipped model.

    python -m reproduction.experiments.model_card [--data-dir ../shared/data]

Every number comes from the shipped model itself (its config, calibration and the example
scores computed here) or from results/shipped/evaluation.json (``probsent eval`` of it);
the licences are read from the paraphrase data's PROVENANCE files. tests/test_shipped_model.py
checks that the example scores in the card are what the model gives.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path


import probsent
from reproduction.experiments.paths import REPO, WING, RESULTS_DIR
from reproduction.experiments import similarity_limits
from reproduction.experiments.probability_report import report_lines
from reproduction.experiments.ship_rule import SHIPPED_ROWS
from probsent.api import DEFAULT_MODEL, scoring_engine
from reproduction.evaluation.results import load_evaluation
from probsent.files.atomic_writes import write_text
from probsent.training import SCRAMBLE

CARD = DEFAULT_MODEL / "MODEL_CARD.md"
EXAMPLES = REPO / "examples" / "sentences.txt"
EVALUATION = RESULTS_DIR / "shipped" / "evaluation.json"
CHOICE = RESULTS_DIR / "shipped" / "choice.json"


def _choice_sentence() -> str:
    """How the shipped run was chosen, from results/shipped/choice.json (the ship rule's)."""
    choice = json.loads(CHOICE.read_text(encoding="utf-8")) if CHOICE.is_file() else {}
    if not choice.get("rule"):
        return f"No ship rule record (`{CHOICE.relative_to(WING).as_posix()}`) says how this model was chosen."
    return (f"The run (`{choice['run']}`) was chosen by the ship rule (`{choice['rule']}`, committed with "
            f"its development sets before any candidate was trained): floors on the vocabulary, STS 2017, "
            f"STS Benchmark dev and equal-length pairs, then the best mean of three development measures "
            f"that counting words cannot raise; `{choice['record']}` holds every number.")


def _other_words(model: probsent.SentenceModel) -> str:
    """How the model reads a word without an entry of its own."""
    estimates = model.word_estimates
    if estimates is None:
        return "other words are `<unk>`"
    return (f"other words get the term of one of {len(estimates.names)} classes (`estimated_words.safetensors`, "
            f"fitted on these entries by `probsent calibrate`) by number shape, English frequency (wordfreq, "
            f"{len(estimates.english_bands):,} words) or form, marked `(estimated)` by `explain`")


def _vocabulary_sentence(model: probsent.SentenceModel, export: dict, config: dict) -> str:
    """What the shipped vocabulary holds."""
    words, before = len(model.vocab) - 1, export.get("vocab_size_before", len(model.vocab)) - 1
    if export.get("max_words") is None:
        return (f"- Shipped as {export.get('dtype', 'float32')} with every one of the {words:,} words training "
                f"kept (the most frequent words of the mixture, at most {config['vocab_size']:,}, seen at least "
                f"{config['min_count']:,} time(s)); {_other_words(model)}.")
    return (f"- Shipped as {export.get('dtype', 'float32')} with the {words:,} most frequent training words "
            f"(of {before:,}); {_other_words(model)}.")


# the named options beyond the paper's recipe (docs/TRAINING.md), each off by default
# (the study's others, which the shipped model left at the paper's, train at commit 2d16e26)
BEYOND_THE_PAPER = ("min_count", "rarity_init", "rarity_anchor", "hardness_cap")


def _options_sentence(config: dict) -> str:
    """The options beyond the paper's recipe the shipped model was trained with."""
    from probsent.training import TrainConfig

    default = TrainConfig()
    used = [f"`--{name.replace('_', '-')} {config[name]}`" for name in BEYOND_THE_PAPER
            if name in config and config[name] != getattr(default, name)]
    return ("- Beyond the paper's recipe (named options, docs/TRAINING.md): " + ", ".join(used) + "."
            if used else "- The paper's recipe, no option beyond it.")


def licences(data_dir: Path) -> list[tuple[str, str]]:
    """(source, licence line) for every source of the shared paraphrase pairs."""
    found = []
    for path in sorted((data_dir / "paraphrase" / "sources").glob("*.PROVENANCE.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        match = re.search(r"^LICEN[SC]E:\s*(.+)$", text, flags=re.MULTILINE)
        found.append((path.name.removesuffix(".PROVENANCE.txt"), match.group(1).strip() if match else "not stated"))
    return found


def unknown_words(model: probsent.SentenceModel) -> tuple[list[str], list[str]]:
    """(words, unknown): the distinct words of the example sentences (tokens with a letter or digit,
    as coverage counts them: a known token is its own vocabulary entry) and those without an entry
    of their own (``explain`` marks them ``(estimated)``, or ``<unk>`` without the open vocabulary),
    each sorted."""
    explained = [w for s in EXAMPLES.read_text(encoding="utf-8").splitlines() if s.strip()
                 for w in model.explain(s).words]
    words = sorted({w.token for w in explained if any(c.isalnum() for c in w.token)})
    return words, sorted({w.token for w in explained if w.word is None})


def _unknown_words_line(model: probsent.SentenceModel) -> str:
    """How many distinct words of the example sentences the model has no entry for, and how it
    reads them (their estimated classes, or the shared <unk>)."""
    words, unknown = unknown_words(model)
    if model.word_estimates is not None:
        classes = {w.token: w.estimate for s in EXAMPLES.read_text(encoding="utf-8").splitlines() if s.strip()
                   for w in model.explain(s).words if w.word is None}
        shown = f" ({'; '.join(f'`{w}`: {classes[w]}' for w in unknown)})" if 0 < len(unknown) <= 8 else ""
        return (f"- Words of `examples/sentences.txt` with no entry of their own, each read by its class's "
                f"estimated term (words of one class read alike, in `similarity` too): {len(unknown)} of its "
                f"{len(words)} distinct words, numbers included{shown}.")
    shown = f" ({', '.join(f'`{w}`' for w in unknown)})" if 0 < len(unknown) <= 8 else ""
    return (f"- Words of `examples/sentences.txt` with no entry of their own, which share the `<unk>` term (so "
            f"`explain` cannot point at them and `similarity` cannot tell them apart): {len(unknown)} of its "
            f"{len(words)} distinct words, numbers included{shown}.")


def _linear(calibration) -> str:
    """The calibration's logit, written out: ``-5.595 + 0.07691 x score + 0.57 x log_tokens``."""
    return f"{calibration.intercept:.4g} " + " ".join(
        f"{'-' if c < 0 else '+'} {abs(c):.4g} x {name}" for name, c in zip(calibration.features, calibration.coefficients))


def _calibration_label(rows: dict) -> str:
    """How the shipped rows' P(specific) was fitted: of the score and the log token count (now), of
    the percentile for the length, of the score alone, or with the token count (records written before)."""
    return {"score_and_length": "of the score and the length", "percentile": "for the sentence's length",
            "score": "a logistic fit of the score"}.get(rows.get("calibration"), "calibrated with length")


def _information_content(systems) -> tuple[str, object] | None:
    """(row name, specificity) of the information-content baseline, where the evaluation has it."""
    name = next((n for n in systems if n.startswith("Information content")), None)
    return (name, systems[name].specificity) if name else None


def _information_content_lines(spec, information) -> list[str]:
    """What the entropy adds to the words' rarity alone: its margin over information content."""
    if not information:
        return []
    name, counted = information
    gaps = [spec.news.accuracy - counted.news.accuracy] + [
        spec.domain(d).spearman - counted.domain(d).spearman for d in ("twitter", "yelp", "movie")]
    source = ("the word counts of the data this model was trained on (add-one smoothed)"
              if "training counts" in name else "wordfreq's English word frequencies (its training file was not found)")
    return ["", f"The information-content baseline (`probsent eval --baseline information-content`) scores a sentence "
                f"by the sum over its tokens of -log p(w), p from {source}: what word rarity alone reaches. This model's entropy minus it, News / Twitter / Yelp / Movie: "
                + " / ".join(f"{gap:+.1f}" for gap in gaps) + " points."]


def _similarity_lines(evaluation) -> list[str]:
    """The STS Benchmark test Pearson of the model's three similarity read-outs, beside the paper's."""
    sts = evaluation.results.first_model().sts
    if sts is None:
        return []
    pearson = {kind: table.stsb_test for kind, table in sts.pearson.items()}
    if not {"cosine", "cosine_mean", "expected_inner_product"} <= pearson.keys():
        return []
    paper = evaluation.paper.get("table8_stsb", {}).get("WLO")
    return ["", f"Similarity (STS Benchmark test, Pearson ×100): cosine of concat(mean, variance) "
                f"{pearson['cosine']:.1f}" + (f" (the paper's WLO: {paper})" if paper is not None else "")
            + f", cosine of the means (what `similarity()` returns by default, in [-1, 1]; chosen on development "
              f"sets, docs/RESULTS.md) {pearson['cosine_mean']:.1f}, log expected inner product of the two Gaussians "
              f"(the training similarity: `similarity(a, b, measure=\"expected_inner_product\")`) "
              f"{pearson['expected_inner_product']:.1f}."]


def generality_lines(evaluation) -> list[str]:
    """The lexical generality rows of the model (WordNet hypernym pairs, with the baselines on the
    same pairs), from its ``probsent eval`` record; nothing if it has none."""
    from reproduction.evaluation.report import GENERALITY_HEADER, generality_rows
    from reproduction.evaluation.results import Generality

    entry = evaluation.results.first_model()
    if not isinstance(entry.generality, Generality):
        return []
    rows = generality_rows("this model", entry.generality)
    return ["", "Lexical generality (not in the paper): % of WordNet 3.0's direct hypernym pairs of single-word nouns "
                "and verbs (arm/limb, Africa/continent) in which the word scores more specific than its hypernym, each "
                "scored alone; pairs split by synset into a development and a test half, each also over the pairs whose "
                "general word is the rarer in English (wordfreq), where word rarity points the wrong way. "
                f"{entry.generality.vocabulary[:1].upper()}{entry.generality.vocabulary[1:]}.", "",
            "| " + " | ".join(GENERALITY_HEADER) + " |", "|" + "---|" * len(GENERALITY_HEADER),
            *("| " + " | ".join(row) + " |" for row in rows)]


def _unit_sentence(model: probsent.SentenceModel, export: dict) -> str:
    """The unit the shipped model writes its means and variances in, where it is not the paper's
    (and the trained model it was rewritten from, where the export record says)."""
    start = model.encoder.start_variance
    if start == 1.0:
        return ""
    source = export.get("source_export", {}).get("from")
    return (f" It is {f'`{source}`' if source else 'the trained model'} written in the unit where a sentence "
            f"starts as N(0, {start:g} I) instead of the paper's N(0, I) "
            f"(`probsent export --start-variance {start:g}`: means x {start ** 0.5:g}, variances x {start:g}, "
            "every entropy moved by one constant; no score ranking, `explain` share or similarity ranking "
            "changes), the unit chosen on STS Benchmark dev for the cosine of concat(mean, variance).")


ESTIMATED_EXAMPLE = "The surgeon prescribed tamoxifen after the biopsy."  # two words without an entry


def _estimated_terms_line(model: probsent.SentenceModel) -> list[str]:
    """How far apart the open vocabulary's classes are (none without one): fitted on the
    model's rarest entries, their terms say how specific a rare word is, and their spread how
    well two words without an entry are ordered by their rarity."""
    if model.word_estimates is None:
        return []
    import numpy as np

    names, size = model.word_estimates.names, len(model.vocab)
    terms = scoring_engine(model).term_table("model card").terms
    classes, entries = terms[size:], terms[1:size]
    english = classes[[name.startswith("english") for name in names]]
    shown = ", ".join(f'"{w.typed}" {w.entropy:+.3f}' for w in model.explain(ESTIMATED_EXAMPLE).words
                      if w.estimate is not None)
    return [f"- Words without an entry are told apart only by their class (terms {classes.min():+.2f} to "
            f"{classes.max():+.2f}, more specific than {100 * np.mean(entries > classes.max()):.0f} % of the entries); "
            f"the English bands span {english.min():+.2f} to {english.max():+.2f} only, so such words are not "
            f"ordered by their rarity ({shown})."]


def _rarity_line(model: probsent.SentenceModel) -> str:
    """How closely the words' entropy terms follow their rarity (the vocabulary is ordered by
    training frequency, so a word's row is its frequency rank)."""
    import torch
    from scipy.stats import spearmanr

    with torch.no_grad():
        terms = model.encoder.word_entropy_terms(dtype=torch.float64).numpy()[1:]
    rho = spearmanr(terms, range(len(terms))).statistic
    return (f"- How far the words' entropy terms follow their rarity: Spearman ρ {-rho:.2f} between minus a word's "
            "term and its frequency rank (1: the terms ordered by rarity alone). Near 1, the entropy behaves like a "
            "rarity-weighted word count: a sentence made specific by common words scores general.")


def example_rows(model: probsent.SentenceModel) -> list[str]:
    sentences = [s for s in EXAMPLES.read_text(encoding="utf-8").splitlines() if s.strip()]
    entropy, percentile = model.entropy(sentences), model.percentile(sentences)
    probability, notes = model.probability(sentences), model.note(sentences)
    rows = sorted(zip(sentences, entropy, percentile, probability, notes), key=lambda r: r[1])
    return [f"| {s} | {h:.3f} | " + (f"{c:.0f} | {p:.3f} |" if not note else f"– ({note}) | – |")
            for s, h, c, p, note in rows]


def render(data_dir: Path) -> str:
    model = probsent.load()
    training = model.config["training"]
    config = training["config"]
    export = training.get("export", {})
    mixture = training.get("data_report", {}).get("mixture", {})
    evaluation = load_evaluation(EVALUATION)
    systems = evaluation.results.systems
    spec = evaluation.results.first_model().specificity
    length = systems["Length"].specificity if "Length" in systems else None
    paper = evaluation.paper
    calibration = scoring_engine(model).require_calibration()
    lines = [
        "# probsent WLO (shipped model)", "",
        "Generated by `python -m reproduction.experiments.model_card`; every number below is computed from this "
        "model or from `results/shipped/evaluation.json`.", "",
        "A Word Linear Operator model (Chen & Gimpel, ACL 2020): every word w has a scale A_w and a "
        "translation B_w in R^50; a sentence is the Gaussian N(mu, diag(sigma^2)) reached from "
        "N(0, I) by applying z -> A_w (z + B_w) word by word. Its entropy is the prior's plus one "
        "exact term per word, sum_d log|A_w,d|: low entropy = specific.", "",
        "```python", "import probsent", "model = probsent.load()           # this model",
        "model.specificity(\"The Dow fell 2.3 % on Tuesday.\")   # -entropy: higher = more specific",
        "model.probability(\"It is good.\")  # P(specific): the chance a news annotator calls it specific",
        "model.note(\"lol ok\")  # why a percentile and P(specific) are withheld: 'too short'", "```", "",
        "## Intended use and licence", "",
        "Research on sentence specificity and sentence representations. **Not for commercial use**: "
        "the model is derived from paraphrase corpora of which several are licensed for "
        "non-commercial research only (below); it inherits those terms. The probsent code itself is "
        "MIT-licensed.", "",
        "| Training source | Licence (from its PROVENANCE.txt) |", "|---|---|",
    ]
    lines += [f"| {name} | {text} |" for name, text in licences(data_dir)] or ["| (data directory not found) | see ../shared/data/paraphrase/PROVENANCE.txt |"]
    lines += ["", "## Training", "",
              f"- Data: `{Path(config['data']).name}` (the shared paraphrase pairs: 12 public English corpora, "
              f"no ParaNMT), mixture: {mixture.get('pairs', 0):,} pairs "
              f"(per-source cap: {mixture.get('max_per_source') or 'none'}; single-source caps: "
              f"{mixture.get('source_caps') or 'none'} (0 = left out); sides of at least "
              f"{mixture.get('min_tokens', 1)} token(s); word overlap between "
              f"{mixture.get('min_overlap', 0.0)} and {mixture.get('max_overlap', 1.0)}).",
              f"- Settings: lambda (KL prior) {config['prior_weight']:g}, margin "
              f"{config['margin'] if config['margin'] is not None else 1.0}, negatives mined in mega-batches of "
              f"{config['megabatch']} x {config['batch_size']} pairs, word-order scrambling {SCRAMBLE}, "
              f"Adam lr {config['lr']:g}, A ~ N({config.get('scale_init_mean', 1.0)}, "
              f"{config['scale_init_std']}^2), B ~ N(0, {config['shift_init_std']}^2), seed {config['seed']}.",
              _options_sentence(config),
              f"- Checkpoint: step {training['step']:,} of training, "
              + (f"chosen by accuracy on the news training rows ({training['news_train_accuracy']:.1f} %)"
                 if "news_train_accuracy" in training else
                 f"chosen by STS 2017 Pearson ({training.get('sts17_pearson', float('nan')):.3f})")
              + ", "
              f"{training.get('seconds', 0) / 60:.1f} minutes of training on a 2-core CPU.",
              _vocabulary_sentence(model, export, config) + " " + _choice_sentence() + _unit_sentence(model, export), "",
              "## Results (test sets; from `probsent eval`)", "",
              f"Computed by `{evaluation.command}` (`results/shipped/`).", "",
              "| | News acc | Twitter ρ | Yelp ρ | Movie ρ |", "|---|---|---|---|---|",
              f"| this model | {spec.news.accuracy:.1f} | {spec.twitter.spearman:.1f} | "
              f"{spec.yelp.spearman:.1f} | {spec.movie.spearman:.1f} |"]
    rows = json.loads(SHIPPED_ROWS.read_text(encoding="utf-8")) if SHIPPED_ROWS.is_file() else None
    probability = rows["measures"]["probability"] if rows else None
    if probability:
        lines.append(f"| this model, P(specific) ({_calibration_label(rows)}) | " + " | ".join(
            f"{probability[d]:.1f}" for d in ("news", "twitter", "yelp", "movie")) + " |")
    if rows and "news_probability" in rows["measures"]:
        lines.append("| this model, news-threshold probability | " + " | ".join(
            f"{rows['measures']['news_probability'][d]:.1f}" for d in ("news", "twitter", "yelp", "movie")) + " |")
    if length:
        lines.append(f"| Length baseline (computed) | {length.news.accuracy:.1f} | "
                     f"{length.twitter.spearman:.1f} | {length.yelp.spearman:.1f} | "
                     f"{length.movie.spearman:.1f} |")
    information = _information_content(systems)
    if information:
        name, counted = information
        source = name.removeprefix("Information content").strip(" ()")
        lines.append(f"| Information content baseline, {source} (computed) | {counted.news.accuracy:.1f} | {counted.twitter.spearman:.1f} | "
                     f"{counted.yelp.spearman:.1f} | {counted.movie.spearman:.1f} |")
    wlo_paper = paper.get("table2_specificity", {}).get("WLO")
    if wlo_paper:
        lines.append("| WLO, the paper's numbers (ParaNMT) | " + " | ".join(
            str(wlo_paper.get(k, "—")) for k in ("news", "twitter", "yelp", "movie")) + " |")
    if length:
        gap = spec.news.accuracy - length.news.accuracy
        where = ("ties" if abs(gap) < 1e-9 else
                 f"is {abs(gap):.1f} points {'above' if gap > 0 else 'below'}")
        combined = ""
        if probability:
            both = probability["news"] - length.news.accuracy
            combined = (f" Its P(specific), fit on the news training rows ({_calibration_label(rows)}), "
                        + ("ties it" if abs(both) < 1e-9 else f"is {abs(both):.1f} points {'above' if both > 0 else 'below'} it")
                        + " (`python -m reproduction.experiments.ship_rule --round 1 --stage shipped-rows`).")
        lines += ["", f"On News accuracy this model's entropy {where} the Length baseline.{combined} "
                      f"SPECITELLER, a supervised scorer, reaches "
                      f"{systems['SPECITELLER'].specificity.news.accuracy:.1f} on News."]
    lines += _information_content_lines(spec, information)
    lines += _similarity_lines(evaluation)
    lines += generality_lines(evaluation)
    lines += ["", f"News: accuracy (%) on the {spec.news.n_test:,} test sentences of Li & Nenkova (2015), threshold tuned on the "
              "news training rows. Others: Spearman ρ ×100 with human ratings (Ko et al. 2019).", "",
              "## Probability of \"specific\"", "",
              f"`probsent specificity --probability` and `model.probability()` give P(specific), the chance that "
              f"a news annotator calls the sentence specific: 1 / (1 + exp(-({_linear(calibration)}))), score = "
              f"-entropy, log_tokens = log of the token count, fitted on the {calibration.sentences:,} cleaned "
              f"news training rows (`probsent calibrate`; the features chosen by a pre-registered rule, "
              f"docs/RESULTS.md). Annotators reward length, and so does P: a short precise sentence gets a "
              f"middling P and a high percentile for its length (below). P is withheld (NaN) with the "
              f"percentile; `model.note()` says why.", "",
              *report_lines(brief=True),
              "## Percentile for the sentence's length", "",
              f"`probsent specificity --percentile` and `model.percentile()` give the share (0-100) of "
              f"{sum(map(len, model.percentiles.scores)):,} reference sentences with the same number of tokens "
              f"({len(model.percentiles.starts)} length bins; sentences of {model.percentiles.starts[-1]} tokens "
              f"or more share the last) that score lower: {model.percentiles.reference}. "
              f"\"It is good.\" is at {model.percentile('It is good.'):.0f}, "
              f"\"Einstein published relativity in 1905.\" at "
              f"{model.percentile('Einstein published relativity in 1905.'):.0f}.", "",
              "## Example scores", "",
              "`examples/sentences.txt`, lowest entropy (most specific) first:", "",
              "| Sentence | Entropy | Percentile | P(specific) |", "|---|---|---|---|"]
    lines += example_rows(model)
    lines += ["", "## What similarity cannot do", "",
              "Measured with this model's default similarity, the cosine of the means "
              "(`python -m reproduction.experiments.similarity_limits`; also in docs/USE_WITH.md):", ""]
    lines += similarity_limits.render(model)
    lines += ["", "## Limitations", "", _unknown_words_line(model), *_estimated_terms_line(model), _rarity_line(model),
              "- Trained on far less and different data than the paper (no ParaNMT; three fifths of the "
              "shared pairs are Bible verse versions, a quarter image captions) and for a CPU budget; see "
              "docs/RESULTS.md for the full comparison and ablations.",
              "- English only; lowercased Penn Treebank tokens. Entropy grows with the number of words "
              "only through each word's learned term; very long inputs are fine numerically.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    args = parser.parse_args()
    text = render(Path(args.data_dir))
    write_text(CARD, text)
    print(f"wrote {CARD.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
