"""Issue 49's open vocabulary on the development sets, round 2: the model read with its table
(``estimated_words.safetensors``: a word without an entry read by its class) against the same
model read without it (such a word read as ``<unk>``), each a copy calibrated by ``probsent
calibrate``, in one run, under the rule committed in reproduction/docs/EXPERIMENTS.md ("Issue 49:
the open vocabulary, round 2"). Development sets only; no test set is read.

    cp -r probsent/pretrained/wlo /tmp/v2/wlo && probsent calibrate --model /tmp/v2/wlo
    python -m reproduction.experiments.open_vocabulary_dev --model /tmp/v2/wlo --without DIR

(``--without``: a copy of the shipped model calibrated by the same command with the table not
written; the shipped model as it is on main is one.) Prints (and writes to ``--out``) round 1's
rows (the port check), the round-2 news clause (P's out-of-fold log-loss and AUC on the 3,403
clean news training rows, ``probability_report``'s folds and functions, with the paired standard
error), the diagnostics round 1 printed, every clause with whether it holds, and the timings.
"""
from __future__ import annotations

import argparse
import gzip
import os
import pickle
import time
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr

import probsent
from probsent.api import scoring_engine, tokenize
from probsent.integrations.research_facade import feature_matrix
from reproduction.evaluation import datasets as ds
from reproduction.evaluation import tables
from reproduction.evaluation.length_controlled import (OOV_EXPLAIN, equal_length_accuracy, news_length_groups_accuracy,
                                                       one_word_explain_accuracy)
from reproduction.evaluation.probability_metrics import auc
from reproduction.experiments.paths import RESULTS_DIR
from reproduction.experiments.probability_report import BASE, fold_of_rows, news_training_rows, out_of_fold, row_losses

OUT = RESULTS_DIR / "open_vocabulary_dev.md"
ROUND_1 = ("oov_explain", "one_word_explain", "shorter_specific", "equal_length", "news_train_length_groups",
           "stsb_dev_cosine_pearson", "snli_dev_entailment", "snli_dev_neutral", "snli_dev_contradiction")
BOOTSTRAP = 1000  # resamples of the news rows for the AUC difference's standard error (seed 0)


def within_length_auc(scores: np.ndarray, lengths: np.ndarray, specific: np.ndarray) -> float:
    """The chance that a specific sentence scores higher than a general one of the same token
    count (ties half), over every such pair, pooled across lengths (round 1's diagnostic)."""
    wins = pairs = 0.0
    for length in np.unique(lengths):
        group = lengths == length
        yes, no = np.sort(scores[group & specific]), np.sort(scores[group & ~specific])
        if len(yes) and len(no):
            wins += (np.searchsorted(no, yes, side="left") + np.searchsorted(no, yes, side="right")).sum() / 2.0
            pairs += len(yes) * len(no)
    return float(wins / pairs)


def news_probability(model, data_dir) -> dict:
    """Clause (4): P's out-of-fold probabilities under the shipped features on the clean news
    training rows (every row but the 939 equal to news-test sentences), the P rule's folds."""
    news = news_training_rows(data_dir)
    scores = np.asarray(model.specificity(news.sentences), dtype=np.float64)
    counts = scoring_engine(model).token_counts(news.sentences)
    p = out_of_fold(feature_matrix(BASE, scores, counts), news.specific, fold_of_rows(len(news.specific)))
    return {"p": p, "labels": news.specific, "losses": row_losses(p, news.specific)}


def measures(model, data: ds.DataDir) -> dict:
    """Every development number of ``model`` as it reads words (round 1's rows, clause 4, the diagnostics)."""
    sts = ds.load_sts_benchmark(data, "dev")
    cosine = tables.sts_similarities(model, sts, True)["cosine"]
    snli = tables.snli_entailment(model, data, split="dev")
    pdtb = ds.load_news_train(data)
    out = {"oov_explain": one_word_explain_accuracy(model, OOV_EXPLAIN),
           "one_word_explain": one_word_explain_accuracy(model),
           "shorter_specific": tables.shorter_specific_experiment(model).accuracy,
           "equal_length": equal_length_accuracy(model),
           "news_train_length_groups": news_length_groups_accuracy(model, data),
           "stsb_dev_cosine_pearson": 100.0 * float(pearsonr(cosine, sts.scores)[0]),
           "snli_dev_entailment": snli.entailment, "snli_dev_neutral": snli.neutral,
           "snli_dev_contradiction": snli.contradiction,
           "within_length_auc": within_length_auc(np.asarray(model.specificity(pdtb.sentences), dtype=np.float64),
                                                  np.array([len(tokenize(s)) for s in pdtb.sentences]),
                                                  np.asarray(pdtb.specific, dtype=bool))}
    news = news_probability(model, data.root)
    out.update(news=news, news_log_loss=float(news["losses"].mean()), news_auc=auc(news["p"], news["labels"]))
    return out


def paired(before: dict, after: dict) -> dict[str, float]:
    """The news clause's differences (after - before), paired by sentence, with standard errors:
    the log-loss's from the per-sentence differences, the AUC's from BOOTSTRAP resamples of the rows."""
    difference = after["news"]["losses"] - before["news"]["losses"]
    labels = before["news"]["labels"]
    rng = np.random.default_rng(0)
    gaps = []
    for _ in range(BOOTSTRAP):
        rows = rng.integers(0, len(labels), len(labels))
        gaps.append(auc(after["news"]["p"][rows], labels[rows]) - auc(before["news"]["p"][rows], labels[rows]))
    return {"log_loss": float(difference.mean()), "log_loss_se": float(difference.std(ddof=1) / np.sqrt(len(difference))),
            "auc": after["news_auc"] - before["news_auc"], "auc_se": float(np.std(gaps, ddof=1))}


def verdict(before: dict, after: dict, seconds: dict[str, float]) -> list[tuple[str, bool]]:
    """Each clause of the round-2 rule, and whether it holds."""
    return [("(1) OOV explain >= 90 %", after["oov_explain"] >= 90.0),
            ("(2) one-word explain no lower", after["one_word_explain"] >= before["one_word_explain"]),
            ("(3) shorter-specific no lower", after["shorter_specific"] >= before["shorter_specific"]),
            ("(3) equal-length no lower", after["equal_length"] >= before["equal_length"]),
            ("(4) news P out-of-fold log-loss no higher", after["news_log_loss"] <= before["news_log_loss"]),
            ("(4) news P out-of-fold AUC no lower", after["news_auc"] >= before["news_auc"]),
            ("(5) STS-B dev no lower than without less 0.5 points",
             after["stsb_dev_cosine_pearson"] >= before["stsb_dev_cosine_pearson"] - 0.5),
            ("(6) SNLI dev entailment no lower than without less 1 point",
             after["snli_dev_entailment"] >= before["snli_dev_entailment"] - 1.0),
            ("speed: corpus path within 10 %", seconds["after_corpus"] <= 1.1 * seconds["before_corpus"]),
            ("speed: specificity in batches of 32 within 10 %", seconds["after_small"] <= 1.1 * seconds["before_small"])]


def reference_texts(data: ds.DataDir, count: int) -> list[str]:
    """``count`` second sides of the training pairs, one pair in three (what corpus scoring reads:
    fresh text, chunk after chunk)."""
    texts = []
    with gzip.open(data.path("paraphrase/pairs.tsv.gz"), "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if number % 3 == 0:
                texts.append(line.split("\t", 2)[1])
            if len(texts) == count:
                break
    return texts


def timing(engines: dict, texts: list[str], repeats: int, chunk: int = 10_000) -> dict[str, float]:
    """Best-of-``repeats`` seconds of corpus scoring (``scores_and_coverage``, chunks of ``chunk``
    texts, each new to the tokenizer's cache: a fresh frozen copy of the engine each time, as a
    worker process gets) and of ``specificity`` in batches of 32 on the first 2,000, without
    ("before") and with ("after") the table, interleaved; ``*_setup``: the copy's first call."""
    for engine in engines.values():
        engine.scores_and_coverage(texts[:2000])  # the kernels compiled or loaded
    out: dict[str, float] = {}
    best = lambda key, value: out.__setitem__(key, min(out.get(key, np.inf), value))  # noqa: E731
    small = [texts[k:k + 32] for k in range(0, 2000, 32)]
    for _ in range(repeats):
        for label, engine in engines.items():
            fresh = pickle.loads(pickle.dumps(engine))
            start = time.perf_counter()
            fresh.scores_and_coverage(["Warm up, qzxv's warfarin."] * 1024)
            best(f"{label}_setup", time.perf_counter() - start)
            start = time.perf_counter()
            for first in range(0, len(texts), chunk):
                fresh.scores_and_coverage(texts[first:first + chunk])
            best(f"{label}_corpus", time.perf_counter() - start)
            start = time.perf_counter()
            for batch in small:
                fresh.specificity(batch)
            best(f"{label}_small", time.perf_counter() - start)
    return out


def report(before: dict, after: dict, seconds: dict[str, float], repeats: int, texts: int) -> str:
    """The record's Markdown."""
    gap = paired(before, after)
    lines = ["Round 1's rows (the port check: attempt 3's values reprinted):", "",
             "| development set | `<unk>` (without) | open vocabulary (with) |", "|---|---|---|"]
    lines += [f"| {name} | {before[name]:.2f} | {after[name]:.2f} |" for name in ROUND_1]
    lines += ["", f"Round 2's news clause (4): P = sigmoid(w . ({', '.join(BASE)}) + b) out of fold on the "
              f"{len(before['news']['labels']):,} clean news training rows (10 folds, seed 0), paired by sentence:", "",
              "| measure | without | with | with - without (standard error) |", "|---|---|---|---|",
              f"| out-of-fold log-loss | {before['news_log_loss']:.4f} | {after['news_log_loss']:.4f} | "
              f"{gap['log_loss']:+.4f} ({gap['log_loss_se']:.4f}) |",
              f"| out-of-fold AUC | {before['news_auc']:.4f} | {after['news_auc']:.4f} | "
              f"{gap['auc']:+.4f} ({gap['auc_se']:.4f}, bootstrap of {BOOTSTRAP:,}) |",
              "", "Diagnostics printed beside (deciding nothing): round 1's news-train length-group accuracy "
              f"{before['news_train_length_groups']:.2f} -> {after['news_train_length_groups']:.2f}; the within-length "
              f"AUC of the score on those rows {before['within_length_auc']:.3f} -> {after['within_length_auc']:.3f}.",
              "", "| rule clause (round 2) | holds |", "|---|---|"]
    clauses = verdict(before, after, seconds)
    lines += [f"| {clause} | {'yes' if holds else 'NO'} |" for clause, holds in clauses]
    lines += ["", f"Ships: {'yes' if all(h for _, h in clauses) else 'no'}.", "",
              f"Scoring time, best of {repeats}, interleaved, same run: {texts:,} training sentences "
              f"through the corpus path in chunks of 10,000 (each new to the tokenizer), a fresh copy of the engine "
              f"each time: {seconds['before_corpus']:.3f} s without, {seconds['after_corpus']:.3f} s with "
              f"(ratio {seconds['after_corpus'] / seconds['before_corpus']:.3f}), plus the copy's first call "
              f"(once per process) {seconds['before_setup']:.3f} s without, {seconds['after_setup']:.3f} s with; "
              f"their first 2,000 in batches of 32 through `specificity` {seconds['before_small']:.3f} s without, "
              f"{seconds['after_small']:.3f} s with (ratio {seconds['after_small'] / seconds['before_small']:.3f}). "
              f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a calibrated model directory with estimated_words.safetensors")
    parser.add_argument("--without", required=True, help="the same model calibrated without the table")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--timing-texts", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=9, help="timing repeats (the best of them counts)")
    args = parser.parse_args(argv)
    data = ds.as_data_dir(args.data_dir)
    with_table, without = probsent.load(args.model), probsent.load(args.without)
    if with_table.word_estimates is None:
        parser.error(f"{with_table.path} has no estimated_words.safetensors (write it with probsent calibrate)")
    if without.word_estimates is not None:
        parser.error(f"{without.path} has an estimated_words.safetensors: give a copy calibrated without it")
    before, after = measures(without, data), measures(with_table, data)
    texts = reference_texts(data, args.timing_texts)
    seconds = timing({"before": scoring_engine(without), "after": scoring_engine(with_table)}, texts, args.repeats)
    text = report(before, after, seconds, args.repeats, len(texts))
    print(text, end="")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
