"""Development measures of specificity that counting words cannot raise.

The News, Twitter, Yelp and Movie sets reward length: the specific sentences are longer, so a
score that counts words does well on them. These measures are built so that length carries
no information, and they choose the shipped model (``experiments/ship_rule.py``):

- **equal-length pairs** (``data/equal_length_pairs.tsv``): a specific and a general sentence
  of the same token count; the % of pairs whose specific sentence scores higher;
- **one-word explain** (``data/one_word_explain.tsv``): a short sentence made specific by one
  word; the % of sentences whose most specific word in ``explain`` (the most negative share)
  is that word, with an entry of its own in the model's vocabulary (an ``<unk>`` names no word);
- **news length groups**: the paper's length-normalized protocol (Table 3: tune a threshold
  on the sentences of k + 1 tokens, test on those of k) applied to the cleaned news training
  rows alone, a development set.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from probsent.errors import ProbsentError
from reproduction.evaluation import datasets as ds
from reproduction.evaluation import metrics
from probsent.api import tokenize

DATA = Path(__file__).with_name("data")
EQUAL_LENGTH = DATA / "equal_length_pairs.tsv"
ONE_WORD = DATA / "one_word_explain.tsv"
OOV_EXPLAIN = DATA / "oov_explain.tsv"  # one-word sentences whose word has no entry in the shipped model (issue 49)


def read_two_columns(path: str | os.PathLike[str], header: str) -> tuple[list[str], list[str]]:
    """The two tab-separated columns of a small set file (``#`` lines and the ``header`` line
    skipped); a malformed line is a one-line error naming the file and line."""
    first, second = [], []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#") or line == header:
                continue
            cells = line.split("\t")
            if len(cells) != 2 or not all(cells):
                raise ProbsentError(f"{path}:{number}: expected two tab-separated fields")
            first.append(cells[0])
            second.append(cells[1])
    return first, second


def load_equal_length(path: str | os.PathLike[str] = EQUAL_LENGTH) -> tuple[list[str], list[str]]:
    """(specific, general) sentences of the equal-length pairs."""
    return read_two_columns(path, "specific\tgeneral")


def load_one_word(path: str | os.PathLike[str] = ONE_WORD) -> tuple[list[str], list[str]]:
    """(sentence, the word that makes it specific) of the one-word explain set."""
    return read_two_columns(path, "sentence\tword")


def pair_accuracy(model: Any, specific: Sequence[str], general: Sequence[str]) -> float:
    """% of pairs whose specific sentence has the strictly higher specificity."""
    higher = np.asarray(model.specificity(list(specific))) > np.asarray(model.specificity(list(general)))
    return float(100.0 * np.mean(higher))


def equal_length_accuracy(model: Any, path: str | os.PathLike[str] = EQUAL_LENGTH) -> float:
    """% of the equal-length pairs ranked right by ``model.specificity``."""
    return pair_accuracy(model, *load_equal_length(path))


def most_specific_word(explanation: Any) -> str | None:
    """The vocabulary word of the most negative share of an ``explain`` result: its entry, or
    the token itself where the open vocabulary estimated its term (None when it is read as
    ``<unk>``, which points at no word)."""
    lowest = min(explanation.words, key=lambda attribution: attribution.entropy)
    return lowest.token if lowest.word is None and getattr(lowest, "estimate", None) is not None else lowest.word


def one_word_explain_accuracy(model: Any, path: str | os.PathLike[str] = ONE_WORD) -> float:
    """% of the one-word set whose marked word is the one ``model.explain`` finds most specific."""
    sentences, words = load_one_word(path)
    hits = [most_specific_word(model.explain(sentence)) == word for sentence, word in zip(sentences, words)]
    return float(100.0 * np.mean(hits))


def news_length_groups_accuracy(model: Any, data: ds.DataDir | None = None) -> float:
    """Accuracy (%) of the paper's length-normalized protocol on the cleaned news training rows."""
    news = ds.load_news_train(ds.as_data_dir(data))
    lengths = [len(tokenize(sentence)) for sentence in news.sentences]
    outcome = metrics.length_normalized_accuracy(lengths, model.specificity(news.sentences), news.specific)
    return 100.0 * outcome.accuracy
