"""P(specific) as a probability of the news label (issue 49 item 2): the pre-registered choice of
its features, the one reading of the test sets, and the report (docs/EXPERIMENTS.md, "P(specific)
as a probability of the news label").

    python -m reproduction.experiments.probability_report --stage choose   # development rows only
    python -m reproduction.experiments.probability_report --stage test     # the test sets, once, after the choice
    python -m reproduction.experiments.probability_report --stage markdown # prints the report from the records

``choose`` cross-validates the candidate feature sets on the cleaned news training rows and
writes ``results/probability/choice.json``; ``test`` reads that choice, checks that the model's
calibration uses it, and writes ``results/probability/test.json`` and the reliability diagram
``docs/results/plots/probability-reliability.png``. RESULTS.md and the model card print
:func:`report_lines` of those records.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from reproduction.experiments.paths import REPO, WING, REPORT_DIR, RESULTS_DIR, SHIPPED
from probsent.files.atomic_writes import write_json

RECORDS = RESULTS_DIR / "probability"
CHOICE = RECORDS / "choice.json"
TEST = RECORDS / "test.json"
PLOT = REPORT_DIR / "plots" / "probability-reliability.png"
BASE = ("score", "log_tokens")
EXTRAS = ("tokens", "score_per_token", "score_x_log_tokens")
FOLDS = 10
SEED = 0
MAX_TOKENS_CHECKED = 512  # the chosen P must rise with the score at every length 1..this
GOALS = {"auc": 0.82, "log_loss": 0.54, "ece": 0.08, "min": 0.1, "max": 0.9, "spearman_points": 3.0}
COMMANDS = {stage: f"python -m reproduction.experiments.probability_report --stage {stage}" for stage in ("choose", "test")}


def fold_of_rows(n: int, folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """Each row's fold: a permutation of the rows drawn with ``seed``, its i-th row in fold i mod ``folds``."""
    fold = np.empty(n, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    return fold


def out_of_fold(x: np.ndarray, labels: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Each row's P(label) from the logistic fit on the other folds."""
    from probsent.integrations.research_facade import expit as _expit, fit_logistic_features

    p = np.empty(len(labels))
    for k in np.unique(fold):
        held = fold == k
        w, b = fit_logistic_features(x[~held], labels[~held])
        p[held] = _expit(x[held] @ w + b)
    return p


def row_losses(p: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each row's -log P(its label), natural log (the probabilities kept off 0 and 1 by 1e-15)."""
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return -np.where(labels, np.log(p), np.log1p(-p))


def rises_with_score(names, coefficients, max_tokens: int = MAX_TOKENS_CHECKED) -> bool:
    """Whether the logit's derivative in the score is positive at every length 1..max_tokens."""
    n = np.arange(1, max_tokens + 1, dtype=np.float64)
    slope = np.zeros_like(n)
    for name, c in zip(names, coefficients):
        slope += c * {"score": 1.0, "score_per_token": 1.0 / n, "score_x_log_tokens": np.log(n)}.get(name, 0.0)
    return bool(np.all(slope > 0))


def choose(scores: np.ndarray, counts: np.ndarray, labels: np.ndarray) -> dict:
    """The pre-registered forward selection (docs/EXPERIMENTS.md) on these rows: every set tried,
    its out-of-fold log-loss and the paired comparison with the set it would extend."""
    from probsent.integrations.research_facade import feature_matrix, fit_logistic_features

    fold = fold_of_rows(len(labels))
    losses: dict[tuple, np.ndarray] = {}

    def loss_of(names: tuple) -> np.ndarray:
        if names not in losses:
            losses[names] = row_losses(out_of_fold(feature_matrix(names, scores, counts), labels, fold), labels)
        return losses[names]

    current, steps = BASE, []
    while True:
        tried = []
        for extra in (e for e in EXTRAS if e not in current):
            names = current + (extra,)
            difference = loss_of(current) - loss_of(names)  # > 0: the extra helps
            coefficients, _ = fit_logistic_features(feature_matrix(names, scores, counts), labels)
            tried.append({"features": list(names), "log_loss": float(loss_of(names).mean()),
                          "gain": float(difference.mean()),
                          "standard_error": float(difference.std(ddof=1) / np.sqrt(len(difference))),
                          "rises_with_score": rises_with_score(names, coefficients)})
        eligible = [t for t in tried if t["rises_with_score"]]
        best = min(eligible, key=lambda t: t["log_loss"]) if eligible else None
        taken = best is not None and best["gain"] > 2 * best["standard_error"]
        steps.append({"from": list(current), "log_loss": float(loss_of(current).mean()), "tried": tried,
                      "taken": best["features"][-1] if taken else None})
        if not taken:
            break
        current = tuple(best["features"])
    coefficients, intercept = fit_logistic_features(feature_matrix(current, scores, counts), labels)
    return {"rows": int(len(labels)), "specific": int(labels.sum()), "folds": FOLDS, "seed": SEED,
            "steps": steps, "chosen": list(current), "rises_with_score": rises_with_score(current, coefficients),
            "command": COMMANDS["choose"]}


def news_training_rows(data_dir):
    """The rows ``probsent calibrate`` fits P on: every news-train row but those equal to a
    news-test sentence (the product's loader, all rows, not only PDTB's)."""
    from probsent.data.development_sets import DataDir, load_news_train

    return load_news_train(DataDir(data_dir), pdtb_only=False)


def stage_choose(model_dir: Path, data_dir) -> dict:
    """Score the cleaned news training rows with the model and run :func:`choose`; write its record."""
    import probsent
    from probsent.api import scoring_engine

    model = probsent.load(model_dir)
    news = news_training_rows(data_dir)
    scores = np.asarray(model.specificity(news.sentences), dtype=np.float64)
    record = choose(scores, scoring_engine(model).token_counts(news.sentences), news.specific)
    write_json(CHOICE, record)
    return record


def stage_test(model_dir: Path, data_dir) -> dict:
    """The test sets, read once: P, the Length baseline and SPECITELLER on news test; Spearman of
    P and of the score on Ko et al.'s sets; the reliability diagram."""
    import probsent
    from reproduction.evaluation.datasets import DataDir, load_ko2019, load_news_test
    from reproduction.evaluation.model_scorer import ProbabilityScorer
    from reproduction.evaluation.metrics import spearman
    from reproduction.evaluation.probability_metrics import probability_measures, reliability
    from probsent.integrations.research_facade import expit as _expit, feature_matrix, fit_logistic_features
    from probsent.api import scoring_engine

    choice = json.loads(CHOICE.read_text(encoding="utf-8"))
    model = probsent.load(model_dir)
    if list(model.calibration.features) != choice["chosen"]:  # probsent calibrate's default: tests/test_calibration.py
        raise SystemExit(f"the model's calibration ({model.calibration.features}) is not the recorded choice "
                         f"({choice['chosen']}); run probsent calibrate")
    data = DataDir(data_dir)
    train = news_training_rows(data_dir)
    w, b = fit_logistic_features(feature_matrix(("log_tokens",), np.zeros(len(train.sentences)),
                                                scoring_engine(model).token_counts(train.sentences)), train.specific)
    test = load_news_test(data)
    probability = ProbabilityScorer(model).specificity(test.sentences)
    length = _expit(feature_matrix(("log_tokens",), np.zeros(len(test.sentences)),
                                   scoring_engine(model).token_counts(test.sentences)) @ w + b)
    systems = {"P(specific)": probability, "Length (logistic of log tokens)": length,
               "SPECITELLER (ref.probs)": test.speciteller_probs}
    news = {name: probability_measures(p, test.specific) for name, p in systems.items()}
    ko = {}
    for domain in ("twitter", "yelp", "movie"):
        rated = load_ko2019(data, domain)
        ko[domain] = {"probability": 100 * spearman(ProbabilityScorer(model).specificity(rated.sentences), rated.ratings),
                      "score": 100 * spearman(model.specificity(rated.sentences), rated.ratings)}
    _plot({name: reliability(p, test.specific) for name, p in systems.items()})
    record = {"news": news, "ko2019": ko, "features": list(model.calibration.features),
              "coefficients": list(model.calibration.coefficients), "intercept": model.calibration.intercept,
              "training_rows": model.calibration.sentences,
              "reliability": {name: [vars(b) for b in reliability(p, test.specific)] for name, p in systems.items()},
              "plot": PLOT.relative_to(WING).as_posix(), "command": COMMANDS["test"]}
    write_json(TEST, record)
    return record


def _plot(tables: dict) -> None:
    """The reliability diagram: each system's mean probability against its share specific, per bin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(5, 5))
    axes.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfectly calibrated")
    for name, table in tables.items():
        used = [b for b in table if b.count]
        axes.plot([b.mean_probability for b in used], [b.share_positive for b in used], marker="o", label=name)
    axes.set_xlabel("mean predicted P(specific) in the bin")
    axes.set_ylabel("share the annotators called specific")
    axes.set_title("News test: reliability (10 equal-width bins)")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(PLOT, dpi=100, metadata={"Software": None})  # no version stamp: same inputs, same bytes
    plt.close(figure)


def _met(value: float, goal: float, at_least: bool) -> str:
    return "met" if (value >= goal if at_least else value <= goal) else "**missed**"


def report_lines(heading: str = "##", brief: bool = False) -> list[str]:
    """The report from the records (no model, no data): the choice, the news test table, the Ko et
    al. Spearman and the goals; each with the command that wrote it. ``brief`` (the model card,
    which must keep the model directory under 10 MiB) leaves out the choice's table and the formula."""
    choice = json.loads(CHOICE.read_text(encoding="utf-8")) if CHOICE.is_file() else None
    test = json.loads(TEST.read_text(encoding="utf-8")) if TEST.is_file() else None
    if brief and test is not None:
        return _test_lines(test, brief=True)
    out = [f"{heading} P(specific): the chance that a news annotator calls the sentence specific", "",
           "Issue 49's rule (docs/EXPERIMENTS.md, \"P(specific) as a probability of the news label\"), committed "
           "before any of these numbers: the features chosen by 10-fold cross-validated log-loss on the cleaned "
           "news training rows, the test sets read once after the choice.", ""]
    if choice is None:
        return out + ["No choice recorded yet.", ""]
    out += [f"Choice (`{choice['command']}`, {choice['rows']:,} rows, {choice['specific']:,} specific): "
            "out-of-fold log-loss of each set; an extra feature is taken if its gain exceeds two standard errors "
            "of the paired per-sentence differences.", "",
            "| features | out-of-fold log-loss | gain over the set it extends | 2 SE | rises with the score |",
            "|---|---|---|---|---|"]
    for step in choice["steps"]:
        out.append(f"| {' + '.join(step['from'])} | {step['log_loss']:.4f} | | | |")
        for tried in step["tried"]:
            out.append(f"| {' + '.join(tried['features'])} | {tried['log_loss']:.4f} | {tried['gain']:+.4f} | "
                       f"{2 * tried['standard_error']:.4f} | {'yes' if tried['rises_with_score'] else 'no'} |")
    out += ["", f"Chosen: **{' + '.join(choice['chosen'])}**.", ""]
    if test is None:
        return out + ["The test sets have not been read yet.", ""]
    terms = " ".join(f"{'-' if c < 0 else '+'} {abs(c):.4g} x {name}"
                     for name, c in zip(test["features"], test["coefficients"]))
    out += [f"Shipped: P(specific) = sigmoid({test['intercept']:.4g} {terms}) (score = minus the entropy, "
            f"log_tokens = log of the token count), fitted on {test['training_rows']:,} rows by `probsent calibrate`.",
            ""]
    return out + _test_lines(test)


def _test_lines(test: dict, brief: bool = False) -> list[str]:
    """The news test table, the Ko et al. Spearman and the goals (``brief``: shorter captions)."""
    out = [f"News test ({next(iter(test['news'].values()))['n']:,} sentences; `{test['command']}`; P read for "
            "every sentence, none withheld):", "",
            "| | accuracy at 0.5 | AUC | log-loss | Brier | ECE (10 bins) | range |", "|---|---|---|---|---|---|---|"]
    for name in sorted(test["news"], key=lambda name: name != "P(specific)"):  # P first, then the baselines
        m = test["news"][name]
        out.append(f"| {name} | {m['accuracy']:.1f} | {m['auc']:.3f} | {m['log_loss']:.3f} | {m['brier']:.3f} | "
                   f"{m['ece']:.3f} | {m['min']:.2f}-{m['max']:.2f} |")
    out += ["", f"Reliability diagram: `{test['plot']}`." + ("" if brief else " The Length row is the same logistic "
            "fit on log tokens alone, on the same training rows; SPECITELLER's are its own probabilities."), "",
            "Spearman ρ ×100 with the human ratings (Ko et al. 2019):", "",
            "| | Twitter | Yelp | Movie |", "|---|---|---|---|",
            "| P(specific) | " + " | ".join(f"{test['ko2019'][d]['probability']:.1f}" for d in ("twitter", "yelp", "movie")) + " |",
            "| the score | " + " | ".join(f"{test['ko2019'][d]['score']:.1f}" for d in ("twitter", "yelp", "movie")) + " |", ""]
    p = test["news"]["P(specific)"]
    worst = min(test["ko2019"][d]["probability"] - test["ko2019"][d]["score"] for d in test["ko2019"])
    out += [f"Goals (issue 49): AUC >= {GOALS['auc']} ({p['auc']:.3f}, {_met(p['auc'], GOALS['auc'], True)}); "
            f"log-loss <= {GOALS['log_loss']} ({p['log_loss']:.3f}, {_met(p['log_loss'], GOALS['log_loss'], False)}); "
            f"ECE <= {GOALS['ece']} ({p['ece']:.3f}, {_met(p['ece'], GOALS['ece'], False)}); values spanning "
            f"{GOALS['min']}-{GOALS['max']} ({p['min']:.2f}-{p['max']:.2f}, "
            f"{'met' if p['min'] <= GOALS['min'] and p['max'] >= GOALS['max'] else '**missed**'}); Ko et al. within "
            f"{GOALS['spearman_points']:g} points of the score's Spearman (worst {worst:+.1f}, "
            f"{_met(worst, -GOALS['spearman_points'], True)}).", ""]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=["choose", "test", "markdown"], required=True)
    parser.add_argument("--model", type=Path, default=SHIPPED)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    if args.stage == "choose":
        stage_choose(args.model, args.data_dir)
    elif args.stage == "test":
        stage_test(args.model, args.data_dir)
    print("\n".join(report_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
