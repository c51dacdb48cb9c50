"""Issue 49's open vocabulary on the development sets, before (words without an entry read as
``<unk>``) and after (read through ``estimated_words.safetensors``), in one run on one model,
under the rule committed in docs/EXPERIMENTS.md ("Issue 49: the open vocabulary's rule").
Development sets only; no test set is read.

    python -m experiments.open_vocabulary_dev --model DIR [--data-dir DIR] [--out results/open_vocabulary_dev.md]

(DIR: a copy of the shipped model after ``probsent calibrate --model DIR``, which writes the table.)

Prints (and writes to ``--out``) a Markdown table, the rule's verdict, and a timing ratio of
scoring (the corpus hot path, ``WordTermTable.text_scores_and_coverage``, and ``specificity``
on small batches) with and without the table, interleaved in the same run.
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
from probsent.evaluation import datasets as ds
from probsent.evaluation import tables
from probsent.evaluation.length_controlled import (OOV_EXPLAIN, equal_length_accuracy, news_length_groups_accuracy,
                                                   one_word_explain_accuracy)
from probsent.readouts.scoring_model import scoring_model


def measures(model, data: ds.DataDir) -> dict[str, float]:
    """The rule's development numbers of ``model`` as it reads words now."""
    sts = ds.load_sts_benchmark(data, "dev")
    cosine = tables.sts_similarities(model, sts, True)["cosine"]
    snli = tables.snli_entailment(model, data, split="dev")
    return {"oov_explain": one_word_explain_accuracy(model, OOV_EXPLAIN),
            "one_word_explain": one_word_explain_accuracy(model),
            "shorter_specific": tables.shorter_specific_experiment(model).accuracy,
            "equal_length": equal_length_accuracy(model),
            "news_train_length_groups": news_length_groups_accuracy(model, data),
            "stsb_dev_cosine_pearson": 100.0 * float(pearsonr(cosine, sts.scores)[0]),
            "snli_dev_entailment": snli.entailment, "snli_dev_neutral": snli.neutral,
            "snli_dev_contradiction": snli.contradiction}


def verdict(before: dict[str, float], after: dict[str, float]) -> list[tuple[str, bool]]:
    """Each clause of the committed rule, and whether it holds."""
    return [("OOV explain >= 90 %", after["oov_explain"] >= 90.0),
            ("one-word explain no lower", after["one_word_explain"] >= before["one_word_explain"]),
            ("shorter-specific no lower", after["shorter_specific"] >= before["shorter_specific"]),
            ("equal-length no lower", after["equal_length"] >= before["equal_length"]),
            ("news-train length groups no lower", after["news_train_length_groups"] >= before["news_train_length_groups"]),
            ("STS-B dev no lower than before less 0.5 points",
             after["stsb_dev_cosine_pearson"] >= before["stsb_dev_cosine_pearson"] - 0.5),
            ("SNLI dev entailment no lower than before less 1 point",
             after["snli_dev_entailment"] >= before["snli_dev_entailment"] - 1.0)]


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


def timing(model, texts: list[str], repeats: int, chunk: int = 10_000) -> dict[str, float]:
    """Best-of-``repeats`` seconds of corpus scoring (``text_scores_and_coverage``, chunks of
    ``chunk`` texts, each new to the tokenizer's cache: a fresh copy of the scoring table each
    time, as a worker process gets) and of ``specificity`` in batches of 32 on the first 2,000,
    with and without the table, interleaved; ``*_setup``: the copy's first call (its compiled
    table, and with the open vocabulary its English words), once per process."""
    estimates = model.word_estimates
    scorers = {}
    for label, table in (("before", None), ("after", estimates)):
        model._set_word_estimates(table)
        scorers[label] = scoring_model(model)
        scorers[label].text_scores_and_coverage(texts[:2000])  # the kernels compiled or loaded
    model._set_word_estimates(estimates)
    out: dict[str, float] = {}
    best = lambda key, value: out.__setitem__(key, min(out.get(key, np.inf), value))  # noqa: E731
    small = [texts[k:k + 32] for k in range(0, 2000, 32)]
    for _ in range(repeats):
        for label, scorer in scorers.items():
            fresh = pickle.loads(pickle.dumps(scorer))
            start = time.perf_counter()
            fresh.text_scores_and_coverage(["Warm up, qzxv's warfarin."] * 1024)
            best(f"{label}_setup", time.perf_counter() - start)
            start = time.perf_counter()
            for first in range(0, len(texts), chunk):
                fresh.text_scores_and_coverage(texts[first:first + chunk])
            best(f"{label}_corpus", time.perf_counter() - start)
            start = time.perf_counter()
            for batch in small:
                fresh.specificity(batch)
            best(f"{label}_small", time.perf_counter() - start)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model directory with estimated_words.safetensors "
                                                      "(default: the shipped model)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default="results/open_vocabulary_dev.md")
    parser.add_argument("--timing-texts", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=9, help="timing repeats (the best of them counts)")
    args = parser.parse_args(argv)
    data = ds.as_data_dir(args.data_dir)
    model = probsent.load(args.model)
    if model.word_estimates is None:
        parser.error(f"{model.path} has no estimated_words.safetensors (write it with probsent calibrate)")
    estimates = model.word_estimates
    model._set_word_estimates(None)
    before = measures(model, data)
    model._set_word_estimates(estimates)
    after = measures(model, data)
    texts = reference_texts(data, args.timing_texts)
    seconds = timing(model, texts, args.repeats)
    lines = ["| development set | `<unk>` (before) | open vocabulary (after) |", "|---|---|---|"]
    lines += [f"| {name} | {before[name]:.2f} | {after[name]:.2f} |" for name in before]
    lines += ["", "| rule clause | holds |", "|---|---|"]
    clauses = verdict(before, after)
    lines += [f"| {clause} | {'yes' if holds else 'NO'} |" for clause, holds in clauses]
    lines += ["", f"Ships: {'yes' if all(h for _, h in clauses) else 'no'}.", "",
              f"Scoring time, best of {args.repeats}, interleaved, same run: {len(texts):,} training sentences "
              f"through the corpus path in chunks of 10,000 (each new to the tokenizer), a fresh copy of the table "
              f"each time: {seconds['before_corpus']:.3f} s before, {seconds['after_corpus']:.3f} s after "
              f"(ratio {seconds['after_corpus'] / seconds['before_corpus']:.3f}), plus the copy's first call "
              f"(once per process) {seconds['before_setup']:.3f} s before, {seconds['after_setup']:.3f} s after; "
              f"their first 2,000 in batches of 32 through `specificity` {seconds['before_small']:.3f} s before, "
              f"{seconds['after_small']:.3f} s after (ratio {seconds['after_small'] / seconds['before_small']:.3f}). "
              f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores."]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
