"""Training's model selection: the two development scores ``probsent train`` keeps a checkpoint
by, read from the product's own loaders (:mod:`probsent.data.development_sets`) and scored through the public
read-outs (:meth:`probsent.api.SentenceModel.similarity_pairwise` and ``specificity``).

- ``best/``: Pearson r on STS 2017 track 5 (how the paper tuned lambda) of ``cosine_concat``
  (the cosine of concat(mean, variance), the paper's STS read-out) for a probabilistic model,
  of ``cosine`` (the vectors') for a deterministic one. The selection has always used the concat
  cosine (named "cosine" in the research harness before issue 51); it stays, so that an existing
  configuration picks the checkpoint it picked before.
- ``best-news/``: the accuracy (%) on the cleaned news training rows with the threshold tuned
  on those same rows (the news test set is never read).

The measures (:func:`pearson`, :func:`tune_threshold`, :func:`accuracy_at_tuned_threshold`)
are written here once; the research wing's metrics use these.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from probsent.api import SentenceModel
from probsent.data.development_sets import LabelledSentences, StsPairs, as_data_dir, load_news_train, load_sts17

if TYPE_CHECKING:
    from probsent.data.vocab import Vocabulary
    from probsent.models import SentenceEncoder

STS_MEASURE_PROBABILISTIC = "cosine_concat"  # the read-out best/ is selected by (see above)
STS_MEASURE_DETERMINISTIC = "cosine"


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson correlation coefficient (``scipy.stats.pearsonr``); NaN if either input is
    constant (the coefficient is undefined there, and scipy would warn)."""
    a, b = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"length mismatch: {a.size} vs {b.size}")
    if a.size < 2:
        raise ValueError("a correlation needs at least two values")
    if np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    return float(stats.pearsonr(a, b).statistic)


def tune_threshold(scores: ArrayLike, specific: ArrayLike) -> float:
    """Threshold with the best training accuracy for "specific iff score > threshold".

    Candidates are the midpoints between consecutive distinct scores, plus ``-inf`` (everything
    specific) and ``+inf`` (everything general). Ties in accuracy go to the lowest threshold.
    """
    s = np.asarray(scores, dtype=np.float64).ravel()
    y = np.asarray(specific, dtype=bool).ravel()
    if s.shape != y.shape or s.size == 0:
        raise ValueError("threshold tuning needs non-empty scores and labels of equal length")
    if not np.all(np.isfinite(s)):
        raise ValueError("threshold tuning needs finite scores")
    distinct, inverse = np.unique(s, return_inverse=True)
    general_at = np.bincount(inverse, weights=~y, minlength=distinct.size)
    specific_at = np.bincount(inverse, weights=y, minlength=distinct.size)
    # Candidate j (0..m) puts the first j distinct values on the general side.
    general_below = np.concatenate([[0.0], np.cumsum(general_at)])
    specific_above = specific_at.sum() - np.concatenate([[0.0], np.cumsum(specific_at)])
    correct = general_below + specific_above
    best = int(np.argmax(correct))  # argmax returns the first, i.e. lowest, maximum
    if best == 0:
        return float("-inf")
    if best == distinct.size:
        return float("inf")
    return float((distinct[best - 1] + distinct[best]) / 2.0)


def predict_specific(scores: ArrayLike, threshold: float) -> np.ndarray:
    """Boolean predictions: specific iff score > threshold."""
    return np.asarray(scores, dtype=np.float64) > threshold


def accuracy_at_tuned_threshold(scores: ArrayLike, specific: ArrayLike) -> float:
    """Accuracy (a fraction) of "specific iff score > t" with t tuned on these same rows, as a
    development score is read."""
    gold = np.asarray(specific).ravel()
    predicted = predict_specific(scores, tune_threshold(scores, specific)).ravel()
    if predicted.shape != gold.shape or predicted.size == 0:
        raise ValueError("accuracy needs two non-empty arrays of equal length")
    return float(np.mean(predicted == gold))


# The two validators share a shape (vocabulary, data, a from_data_dir reader, a call on
# an encoder) and nothing else: different data, different measures.
class StsValidator:
    """Callable scoring an encoder by Pearson r on STS 2017: of ``cosine_concat`` for a
    probabilistic model, of ``cosine`` (the vectors') for a deterministic one."""

    def __init__(self, vocab: "Vocabulary", pairs: StsPairs) -> None:
        self.vocab = vocab
        self.pairs = pairs

    @classmethod
    def from_data_dir(cls, vocab: "Vocabulary", data_dir: str | None = None) -> "StsValidator":
        """Read STS 2017 from ``data_dir`` (or the default data directory)."""
        return cls(vocab, load_sts17(as_data_dir(data_dir)))

    def __call__(self, encoder: "SentenceEncoder") -> float:
        model = SentenceModel(encoder, self.vocab)
        measure = STS_MEASURE_PROBABILISTIC if model.probabilistic else STS_MEASURE_DETERMINISTIC
        similarity = model.similarity_pairwise(self.pairs.first, self.pairs.second, measure=measure)
        return pearson(similarity, self.pairs.scores)


class NewsValidator:
    """Callable giving an encoder's accuracy (%) on the cleaned news training rows, with the
    threshold tuned on those same rows: a development score for the second model selection
    (the news test set is never looked at)."""

    def __init__(self, vocab: "Vocabulary", news: LabelledSentences) -> None:
        self.vocab = vocab
        self.news = news

    @classmethod
    def from_data_dir(cls, vocab: "Vocabulary", data_dir: str | None = None) -> "NewsValidator":
        """Read the news training rows from ``data_dir`` (or the default data directory)."""
        return cls(vocab, load_news_train(as_data_dir(data_dir)))

    def __call__(self, encoder: "SentenceEncoder") -> float:
        scores = SentenceModel(encoder, self.vocab).specificity(self.news.sentences)
        return 100.0 * accuracy_at_tuned_threshold(scores, self.news.specific)
