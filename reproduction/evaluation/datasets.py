"""Loaders for the evaluation data sets, read in the formats their authors distribute.

Every loader takes a :class:`DataDir`, which resolves paths under the data root, raises a
one-line :class:`~probsent.errors.ProbsentError` naming any missing file, and records the
sha256 of each file it reads (``DataDir.sha256``) so a report can say exactly what it used.

Layout expected under the data root (the project's ``shared/data``)::

    specificity/news-train/{data.txt,label.txt,DERIVED_rows_overlapping_news_test.txt}
    specificity/news-test/{tknsents.txt,labels.txt,ref.probs}
    specificity/ko2019/{twitter,yelp,movie}{s,v}.txt
    sts/stsbenchmark/sts-{train,dev,test}.csv
    sts/sts17-track5-en-en/STS.{input,gs}.track5.en-en.txt
    sts/senteval-sts12-16/STS1{2..6}-en-test/STS.{input,gs}.<set>.txt
    snli/snli_1.0_{test,dev}.untok.tsv
    glove/glove.6B.50d.txt.gz
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

from probsent.data.development_sets import (DATA_DIR_ENV, NEWS_TRAIN_PDTB_ROWS, DataDir, LabelledSentences,  # noqa: F401
                               StsPairs, as_data_dir, check_aligned as _check_aligned, load_news_train,
                               load_sts17, load_sts_input_gold as _load_sts_input_gold,
                               parse_numbers as _parse_numbers, resolve_data_dir)
from probsent.errors import InvalidValueError


KO2019_DOMAINS = ("twitter", "yelp", "movie")

# The STS12-16 test sets SentEval evaluates (STS13 SMT is LDC-restricted, so absent).
SENTEVAL_STS_SETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}

SNLI_LABELS = ("entailment", "neutral", "contradiction")
"""SNLI label names, indexed by the integer label of the untokenized test file."""


# --- specificity -------------------------------------------------------------------------

@dataclass(frozen=True)
class NewsTest(LabelledSentences):
    """The Li & Nenkova (2015) news test set, with SPECITELLER's P(specific)."""

    speciteller_probs: np.ndarray


@dataclass(frozen=True)
class RatedSentences:
    """Sentences with a real-valued specificity rating (higher = more specific)."""

    sentences: list[str]
    ratings: np.ndarray


def load_news_test(data: DataDir) -> NewsTest:
    """News test sentences (labels 1 = general, -1 = specific) and SPECITELLER probabilities.

    One line of ``tknsents.txt`` holds a broken UTF-8 sequence; it is decoded with U+FFFD.
    """
    base = "specificity/news-test/"
    sentences = data.read_lines(base + "tknsents.txt", errors="replace")
    labels = data.read_lines(base + "labels.txt")
    probs = data.read_lines(base + "ref.probs")
    _check_aligned(data, {base + "tknsents.txt": sentences, base + "labels.txt": labels, base + "ref.probs": probs})
    codes = _parse_numbers(data, base + "labels.txt", labels, int)
    if not set(np.unique(codes)) <= {1, -1}:
        raise InvalidValueError(f"{data.root / base}labels.txt: labels must be 1 or -1")
    return NewsTest(
        sentences,
        codes == -1,
        np.arange(len(sentences)),
        _parse_numbers(data, base + "ref.probs", probs),
    )


def load_ko2019(data: DataDir, domain: str) -> RatedSentences:
    """Ko et al. (2019) test set for ``domain`` (twitter, yelp or movie): sentences and mean ratings."""
    if domain not in KO2019_DOMAINS:
        raise InvalidValueError(f"unknown ko2019 domain {domain!r}; expected one of {', '.join(KO2019_DOMAINS)}")
    base = f"specificity/ko2019/{domain}"
    sentences = data.read_lines(base + "s.txt")
    ratings = data.read_lines(base + "v.txt")
    _check_aligned(data, {base + "s.txt": sentences, base + "v.txt": ratings})
    return RatedSentences(sentences, _parse_numbers(data, base + "v.txt", ratings))


# --- STS ---------------------------------------------------------------------------------

def load_sts_benchmark(data: DataDir, split: str = "test") -> StsPairs:
    """STS Benchmark ``split`` (train, dev or test).

    Tab-separated without csv quoting; fields: genre, file, year, id, score, s1, s2, and on
    some rows extra source fields, which are ignored.
    """
    if split not in ("train", "dev", "test"):
        raise InvalidValueError(f"unknown STS Benchmark split {split!r}; expected train, dev or test")
    name = f"sts/stsbenchmark/sts-{split}.csv"
    first, second, scores = [], [], []
    for number, line in enumerate(data.read_lines(name), start=1):
        fields = line.split("\t")
        if len(fields) < 7:
            raise InvalidValueError(f"{data.root / name}:{number}: expected at least 7 tab-separated fields")
        try:
            scores.append(float(fields[4]))
        except ValueError:
            raise InvalidValueError(f"{data.root / name}:{number}: score is not a number: {fields[4]!r}") from None
        first.append(fields[5])
        second.append(fields[6])
    return StsPairs(f"STSB-{split}", first, second, np.asarray(scores))


def load_senteval_sts(data: DataDir, year: str) -> dict[str, StsPairs]:
    """The STS test sets of ``year`` (STS12 .. STS16) that SentEval uses, by set name."""
    if year not in SENTEVAL_STS_SETS:
        raise InvalidValueError(f"unknown STS year {year!r}; expected one of {', '.join(SENTEVAL_STS_SETS)}")
    base = f"sts/senteval-sts12-16/{year}-en-test/"
    return {
        name: _load_sts_input_gold(data, f"{base}STS.input.{name}.txt", f"{base}STS.gs.{name}.txt", f"{year}.{name}")
        for name in SENTEVAL_STS_SETS[year]
    }


# --- SNLI --------------------------------------------------------------------------------

@dataclass(frozen=True)
class NliPairs:
    """Premise/hypothesis pairs; ``labels`` index :data:`SNLI_LABELS`."""

    premises: list[str]
    hypotheses: list[str]
    labels: np.ndarray


SNLI_SPLITS = ("test", "dev")


def load_snli(data: DataDir, split: str = "test") -> NliPairs:
    """SNLI 1.0 pairs of ``split`` (test, or dev to choose with) that have a gold label
    (header premise, hypothesis, label; csv quoting)."""
    if split not in SNLI_SPLITS:
        raise InvalidValueError(f"unknown SNLI split {split!r}; expected test or dev")
    name = f"snli/snli_1.0_{split}.untok.tsv"
    reader = csv.reader(io.StringIO(data.read_text(name), newline=""), delimiter="\t", quotechar='"')
    header = next(reader, None)
    if header is None or [h.strip() for h in header[:3]] != ["premise", "hypothesis", "label"]:
        raise InvalidValueError(f"{data.root / name}: expected header 'premise<TAB>hypothesis<TAB>label'")
    premises, hypotheses, labels = [], [], []
    for row in reader:
        if len(row) < 3 or row[2].strip() not in ("0", "1", "2"):
            raise InvalidValueError(f"{data.root / name}:{reader.line_num}: expected premise, hypothesis and label 0/1/2")
        premises.append(row[0])
        hypotheses.append(row[1])
        labels.append(int(row[2]))
    return NliPairs(premises, hypotheses, np.asarray(labels))


def load_snli_test(data: DataDir) -> NliPairs:
    """SNLI 1.0 test pairs that have a gold label."""
    return load_snli(data, "test")


def load_snli_dev(data: DataDir) -> NliPairs:
    """SNLI 1.0 development pairs that have a gold label (the same format as the test split)."""
    return load_snli(data, "dev")
