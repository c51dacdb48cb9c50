"""Scoring by per-word entropy terms, without torch: tokenize, look up, add.

A model with per-word entropy terms (WLO) gives a sentence the entropy of the prior N(0, I),
k/2 log(2 pi e), plus one float64 term per token (WLO: sum_d log|A_w,d|). That is a table of
numbers: :class:`WordTermTable` holds it (the vocabulary, the terms, the prior's entropy, the
translation norms for ``explain``) and scores batches of sentences with
:class:`probsent.text.token_ids.TokenIds` and NumPy, with no Python loop over sentences:

1. the batch becomes one flat array of vocabulary ids: by the piece tokenizer (a piece is a
   whitespace-separated chunk in its context, cached, each with its ids), or for large
   batches and UTF-8 input (:class:`probsent.text.utf8_texts.Utf8Texts`) by the compiled one
   (:mod:`probsent.text.compiled_tokenize`);
2. each sentence's terms are summed in NumPy's own order (:func:`probsent.text.segment_sums`, or its
   compiled twin for large batches), so a score equals the reference's
   ``prior + terms[ids].sum()`` bit for bit, given the terms.

:meth:`WordTermTable.text_scores` is corpus scoring's hot path: a whole chunk at once, NaN
where a text holds no sentence.

:class:`probsent.readouts.scoring_engine.ScoringEngine`, the one engine every caller scores
through, builds such a table from a WLO model's encoder and scores with it.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from probsent.data.vocab import Vocabulary, WordEstimates, open_index
from probsent.inference.arrays import gaussian_entropy, vector_norms
from probsent.inference.closed_form import wlo_word_terms
from probsent.readouts.explanation import Attribution, Explanation, TermScale
from probsent.readouts.withheld import notes, withheld
from probsent.text.segment_sums import term_sums
from probsent.text.token_ids import TokenIds, known_shares
from probsent.text.token_spans import typed_tokens
from probsent.text.utf8_texts import Utf8Texts

__all__ = ["MAX_TOKENS", "WordTermTable", "prior_entropy", "wlo_word_terms"]

# A sentence counts its first MAX_TOKENS tokens (encoding's memory per sentence stays bounded).
MAX_TOKENS = 10_000


def prior_entropy(dim: int, start_variance: float = 1.0) -> float:
    """The entropy of z_0 ~ N(0, s_0 I) in ``dim`` dimensions, 1/2 sum_d (log 2 pi + 1 + log s_0)
    (s_0 = ``start_variance``; the paper's N(0, I): 1)."""
    return float(gaussian_entropy(np.full(dim, math.log(start_variance))))


class WordTermTable:
    """Entropy, specificity, coverage, note and explain of a model with per-word entropy terms:
    a table of numbers, no model (the readings of its scores, percentile and P(specific), are
    the scoring engine's: :mod:`probsent.readouts.scoring_engine`).

    Thread-safe; results never depend on the batch or on the other sentences in it.
    ``token_ids(sentences)`` gives the (ids, offsets) that the scores sum. With ``estimates``
    (the model's open vocabulary, :mod:`probsent.data.vocab`), a word without an entry
    reads as its class: the classes' terms and translation norms follow the vocabulary's, and
    ``token_ids`` gives their ids (``len(vocab) + class``); without, it reads as ``<unk>``.
    """

    probabilistic = True

    def __init__(self, vocab: Vocabulary, terms: np.ndarray, prior: float,
                 shift_norms: np.ndarray | None = None, token_ids: TokenIds | None = None,
                 estimates: WordEstimates | None = None) -> None:
        self.vocab = vocab
        self.estimates = estimates
        if estimates is not None:
            terms = np.concatenate([np.asarray(terms, dtype=np.float64), wlo_word_terms(estimates.scale)])
            if shift_norms is not None:
                shift_norms = np.concatenate([shift_norms, vector_norms(estimates.shift)])
        self.terms = np.ascontiguousarray(terms, dtype=np.float64)
        self.prior_entropy = prior
        self.shift_norms = shift_norms
        self.token_ids = TokenIds(open_index(vocab, estimates), MAX_TOKENS) if token_ids is None else token_ids  # may be shared
        self._scale: TermScale | None = None

    def __getstate__(self) -> dict[str, Any]:
        """A frozen copy for another process (corpus scoring's workers): the tables, without the
        tokenizer's caches and lock, which the copy builds again."""
        return {**self.__dict__, "token_ids": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.token_ids = TokenIds(open_index(self.vocab, self.estimates), MAX_TOKENS)

    # -- scores ------------------------------------------------------------------------------

    def entropy(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Each sentence's entropy in float64: the prior's plus its tokens' terms.
        (``batch_size`` is accepted for the API's signature; it changes nothing.)"""
        ids, offsets = self.token_ids(sentences)
        return self.prior_entropy + term_sums(self.terms, ids, offsets)

    def specificity(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Minus the entropy: higher = more specific."""
        return -self.entropy(sentences, batch_size)

    def text_scores(self, texts: Sequence[str | None] | Utf8Texts) -> np.ndarray:
        """The specificity of each text, NaN where there is no sentence (None, or only
        whitespace: the texts without tokens), the whole batch at once."""
        return self.text_scores_and_coverage(texts)[0]

    def text_scores_and_coverage(self, texts: Sequence[str | None] | Utf8Texts
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(specificity, coverage, model coverage) of each text from one tokenization, NaN where
        there is no sentence: corpus scoring's hot path
        (:func:`probsent.corpus_scoring.workers.sentence_scores`)."""
        if not isinstance(texts, Utf8Texts):
            texts = [text if text is not None else "" for text in texts]
        ids, offsets = self.token_ids(texts)
        scores = -(self.prior_entropy + term_sums(self.terms, ids, offsets))
        scores[offsets[1:] == offsets[:-1]] = np.nan
        return (scores, *known_shares(ids, offsets, self.token_ids.coverage_codes))

    def coverage(self, sentences: Sequence[str | None] | Utf8Texts) -> np.ndarray:
        """Each sentence's share of tokens the model or English knows (NaN without tokens):
        :func:`probsent.text.token_ids.known_share`."""
        return self.token_ids.coverage(sentences)

    def ids_of(self, tokens: Sequence[str]) -> np.ndarray:
        """The ids of tokens (int64), as every scoring path reads them: an entry, else (with the
        open vocabulary) its class's row, else 0 (``<unk>``)."""
        index = self.token_ids.index
        if hasattr(index, "ids_of"):  # the open vocabulary's (probsent.data.vocab.EstimatingIndex)
            return np.array(index.ids_of(list(tokens)), dtype=np.int64)
        get = index.get
        return np.fromiter((get(t, 0) for t in tokens), dtype=np.int64, count=len(tokens))

    def estimate_of(self, row: int) -> str | None:
        """The class a token of id ``row`` was estimated as (``number: year``), None for an entry."""
        return self.estimates.name_of(row) if self.estimates is not None and row >= len(self.vocab) else None

    def note(self, sentences: Sequence[str | None] | Utf8Texts) -> list[str]:
        """Why each sentence's percentile and P(specific) are withheld ("" where they are given;
        :mod:`probsent.readouts.withheld`)."""
        return notes(withheld(self.token_ids, sentences)[0])

    @property
    def scale(self) -> TermScale:
        """The model's own term distribution, on which ``explain`` colours words (made once)."""
        if self._scale is None:
            self._scale = TermScale(self.terms[:len(self.vocab)], self.vocab.words)  # the model's own entries
        return self._scale

    def explain(self, sentence: str) -> Explanation:
        """Each token's exact additive share of the sentence's entropy (its first MAX_TOKENS), as
        typed, with its place on the model's scale and its note (its percentile and P(specific):
        :meth:`probsent.readouts.scoring_engine.ScoringEngine.explain`)."""
        if not isinstance(sentence, str):
            raise TypeError(f"explain needs a str, not {type(sentence).__name__}")
        tokens = self.token_ids.tokens(sentence)
        ids = self.ids_of(tokens)
        norms = self.shift_norms[ids] if self.shift_norms is not None else np.full(len(ids), math.nan)
        scale, size = self.scale, len(self.vocab)
        words = [Attribution(t, self.vocab.words[i] if 0 < i < size else None, float(h), float(n), typed,
                             scale.rank(float(h)), self.estimate_of(i),
                             bool(self.estimates.known[i - size]) if i >= size else i > 0)
                 for t, typed, i, h, n in zip(tokens, typed_tokens(sentence, tokens), ids.tolist(), self.terms[ids],
                                              norms)]
        return Explanation(sentence, self.prior_entropy, words, scale, note=self.note([sentence])[0])
