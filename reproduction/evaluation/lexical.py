"""Lexical analysis of WLO (paper Table 5): translation norms against single-word entropies.

It applies to any model with per-word entropy terms (``has_word_entropy_terms``), whose
``word_shifts`` are WLO's translations B_w.

For every vocabulary word w seen at least ``min_count`` times in training, two numbers:

- ``norm``: ||B_w||, the length of the word's translation vector;
- ``entropy``: the differential entropy of the one-word sentence "w", i.e. of
  N(A_w B_w, diag(A_w^2)) = k/2 log(2 pi e) + sum_d log|A_w,d|.

Four top lists: among the words with the smallest (largest) norms -- the ``norm_fraction``
of eligible words at that end, at least ``top_k`` words -- those with the smallest absolute
entropy |H| (operators that barely change the spread) and those with the smallest entropy H
(operators that shrink it most, i.e. make a sentence most specific).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from probsent.api import SentenceModel
from reproduction.evaluation import metrics
from reproduction.evaluation.model_scorer import encode_ids
from probsent.gaussian import entropy as gaussian_entropy
from reproduction.evaluation.results import Lexical, LexicalWord
from probsent.models import with_word_entropy_terms

LISTS = {
    "small_norm_small_abs_entropy": ("small", "abs"),
    "small_norm_small_entropy": ("small", "signed"),
    "large_norm_small_abs_entropy": ("large", "abs"),
    "large_norm_small_entropy": ("large", "signed"),
}
"""Name of each top list: (which end of the norm ranking, entropy criterion)."""


@dataclass
class WordTable:
    """Per eligible word: its training count, ||B_w|| and single-word sentence entropy."""

    words: list[str]
    counts: np.ndarray
    norms: np.ndarray
    entropies: np.ndarray

    def to_tsv(self) -> str:
        """``word<TAB>count<TAB>norm<TAB>entropy`` lines with a header, by decreasing count."""
        lines = ["word\tcount\tnorm\tentropy"]
        for i in np.argsort(-self.counts, kind="stable"):
            lines.append(f"{self.words[i]}\t{int(self.counts[i])}\t{self.norms[i]:.6g}\t{self.entropies[i]:.6g}")
        return "\n".join(lines) + "\n"


def word_table(model: SentenceModel, counts: Mapping[str, int], min_count: int) -> WordTable:
    """The eligible words of a model with per-word entropy terms (WLO; ``<unk>`` excluded) with
    their norm and entropy."""
    encoder = model.encoder
    terms = with_word_entropy_terms(encoder, "the lexical analysis")
    ids = [i for i, w in enumerate(model.vocab.words) if i > 0 and counts.get(w, 0) >= min_count]
    _, logvar = encode_ids(encoder, [np.array([i]) for i in ids])
    shift = terms.word_shifts().detach().double().numpy()
    return WordTable(
        words=[model.vocab.words[i] for i in ids],
        counts=np.array([counts[model.vocab.words[i]] for i in ids], dtype=np.int64),
        norms=np.linalg.norm(shift[ids], axis=1) if ids else np.zeros(0),
        entropies=gaussian_entropy(logvar) if ids else np.zeros(0),
    )


def top_lists(table: WordTable, top_k: int = 20, norm_fraction: float = 0.1) -> dict[str, list[LexicalWord]]:
    """The four lists of :data:`LISTS`, each of up to ``top_k`` words, best first.

    Ties are broken by the word itself so the lists never depend on vocabulary order.
    """
    n = len(table.words)
    pool_size = min(n, max(top_k, math.ceil(norm_fraction * n)))
    by_norm = np.array(sorted(range(n), key=lambda i: (table.norms[i], table.words[i])), dtype=np.int64)
    pools = {"small": by_norm[:pool_size], "large": by_norm[n - pool_size:][::-1]}
    lists: dict[str, list[LexicalWord]] = {}
    for name, (end, criterion) in LISTS.items():
        pool = pools[end]
        key = np.abs(table.entropies[pool]) if criterion == "abs" else table.entropies[pool]
        chosen = pool[sorted(range(len(pool)), key=lambda j: (key[j], table.words[pool[j]]))[:top_k]]
        lists[name] = [LexicalWord(table.words[i], int(table.counts[i]), float(table.norms[i]),
                                   float(table.entropies[i])) for i in chosen]
    return lists


def lexical_analysis(model: SentenceModel, counts: Mapping[str, int], min_count: int = 100,
                     top_k: int = 20, norm_fraction: float = 0.1) -> tuple[Lexical, WordTable]:
    """The four top lists and summary figures, and the full word table."""
    table = word_table(model, counts, min_count)
    n = len(table.words)
    result = Lexical(min_count=min_count, top_k=top_k, norm_fraction=norm_fraction, n_words=n,
                     pool_size=min(n, max(top_k, math.ceil(norm_fraction * n))),
                     lists=top_lists(table, top_k, norm_fraction))
    if n >= 2:
        result.spearman_norm_entropy = 100.0 * metrics.spearman(table.norms, table.entropies)
        result.norm_range = [float(table.norms.min()), float(table.norms.max())]
        result.entropy_range = [float(table.entropies.min()), float(table.entropies.max())]
    return result, table
