"""Validation during training: Pearson correlation on STS 2017 (how the paper tuned lambda),
and accuracy on the news training rows (a development set for a second selection)."""
from __future__ import annotations

from probsent.api import SentenceModel
from probsent.data.vocab import Vocabulary
from reproduction.evaluation.datasets import (LabelledSentences, StsPairs, as_data_dir,
                                         load_news_train, load_sts17)
from reproduction.evaluation.tables import sts_similarities
from reproduction.evaluation.metrics import accuracy_at_tuned_threshold, pearson
from probsent.models import SentenceEncoder


# The two validators share a shape (vocabulary, data, a from_data_dir reader, a call on
# an encoder) and nothing else: different data, different measures.
class StsValidator:
    """Callable scoring an encoder by Pearson r on STS 2017, using cosine of concat(mean,
    variance) for probabilistic models and cosine of the vectors otherwise."""

    def __init__(self, vocab: Vocabulary, pairs: StsPairs) -> None:
        self.vocab = vocab
        self.pairs = pairs

    @classmethod
    def from_data_dir(cls, vocab: Vocabulary, data_dir: str | None = None) -> "StsValidator":
        """Read STS 2017 from ``data_dir`` (or the default data directory)."""
        return cls(vocab, load_sts17(as_data_dir(data_dir)))

    def __call__(self, encoder: SentenceEncoder) -> float:
        model = SentenceModel(encoder, self.vocab)
        similarity = sts_similarities(model, self.pairs, model.probabilistic)["cosine"]
        return pearson(similarity, self.pairs.scores)


class NewsValidator:
    """Callable giving an encoder's accuracy (%) on the cleaned news training rows, with the
    threshold tuned on those same rows: a development score for the second model selection
    (the news test set is never looked at)."""

    def __init__(self, vocab: Vocabulary, news: LabelledSentences) -> None:
        self.vocab = vocab
        self.news = news

    @classmethod
    def from_data_dir(cls, vocab: Vocabulary, data_dir: str | None = None) -> "NewsValidator":
        """Read the news training rows from ``data_dir`` (or the default data directory)."""
        return cls(vocab, load_news_train(as_data_dir(data_dir)))

    def __call__(self, encoder: SentenceEncoder) -> float:
        scores = SentenceModel(encoder, self.vocab).specificity(self.news.sentences)
        return 100.0 * accuracy_at_tuned_threshold(scores, self.news.specific)
