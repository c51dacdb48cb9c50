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
    """The first ``count`` first sides of the training pairs (what corpus scoring reads)."""
    texts = []
    with gzip.open(data.path("paraphrase/pairs.tsv.gz"), "rt", encoding="utf-8") as handle:
        for line in handle:
            texts.append(line.split("\t", 1)[0])
            if len(texts) == count:
                break
    return texts


def timing(model, texts: list[str], repeats: int = 5) -> dict[str, float]:
    """Best-of-``repeats`` seconds of scoring ``texts`` (the corpus path, one batch) and of
    their first 2,000 in batches of 32 (the API's small batches), with and without the table,
    interleaved; each table is made fresh and warmed once."""
    estimates = model.word_estimates
    out: dict[str, float] = {}
    runs = {}
    for label, table in (("before", None), ("after", estimates)):
        model._set_word_estimates(table)
        scorer = scoring_model(model)
        scorer.text_scores_and_coverage(texts)  # the tokenizer's cache and the kernels, warm
        runs[label] = scorer
    small = [texts[i:i + 32] for i in range(0, 2000, 32)]
    for _ in range(repeats):
        for label, scorer in runs.items():
            start = time.perf_counter()
            scorer.text_scores_and_coverage(texts)
            corpus = time.perf_counter() - start
            start = time.perf_counter()
            for batch in small:
                scorer.specificity(batch)
            batches = time.perf_counter() - start
            out[f"{label}_corpus"] = min(out.get(f"{label}_corpus", np.inf), corpus)
            out[f"{label}_small"] = min(out.get(f"{label}_small", np.inf), batches)
    model._set_word_estimates(estimates)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model directory with estimated_words.safetensors "
                                                      "(default: the shipped model)")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default="results/open_vocabulary_dev.md")
    parser.add_argument("--timing-texts", type=int, default=100_000)
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
    seconds = timing(model, reference_texts(data, args.timing_texts), args.repeats)
    lines = ["| development set | `<unk>` (before) | open vocabulary (after) |", "|---|---|---|"]
    lines += [f"| {name} | {before[name]:.2f} | {after[name]:.2f} |" for name in before]
    lines += ["", "| rule clause | holds |", "|---|---|"]
    clauses = verdict(before, after)
    lines += [f"| {clause} | {'yes' if holds else 'NO'} |" for clause, holds in clauses]
    lines += ["", f"Ships: {'yes' if all(h for _, h in clauses) else 'no'}.", "",
              f"Scoring time, best of {args.repeats}, interleaved, same run: {args.timing_texts:,} training sentences through the corpus "
              f"path {seconds['before_corpus']:.3f} s before, {seconds['after_corpus']:.3f} s after "
              f"(ratio {seconds['after_corpus'] / seconds['before_corpus']:.3f}); their first 2,000 in batches of "
              f"32 through `specificity` {seconds['before_small']:.3f} s before, {seconds['after_small']:.3f} s "
              f"after (ratio {seconds['after_small'] / seconds['before_small']:.3f})."]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
