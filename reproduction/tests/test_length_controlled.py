"""The length-controlled development measures and their two hand-written sets."""
from types import SimpleNamespace

import numpy as np
import pytest

from probsent.errors import ProbsentError
from reproduction.evaluation import datasets as ds
from reproduction.evaluation import length_controlled as lc
from reproduction.evaluation import metrics
from reproduction.evaluation.baselines import LengthScorer
from probsent.api import tokenize


def test_equal_length_pairs_have_equal_token_counts():
    specific, general = lc.load_equal_length()
    assert len(specific) >= 60 and len(set(specific)) == len(specific)
    for a, b in zip(specific, general):
        assert len(tokenize(a)) == len(tokenize(b)), (a, b)


def test_one_word_sentences_contain_their_word():
    sentences, words = lc.load_one_word()
    assert len(sentences) >= 60 and len(set(sentences)) == len(sentences)
    for sentence, word in zip(sentences, words):
        assert tokenize(sentence).count(word) == 1, (sentence, word)


def test_no_development_sentence_is_from_an_evaluation_set(eval_data):
    evaluation = set(ds.load_news_test(eval_data).sentences)
    for domain in ds.KO2019_DOMAINS:
        evaluation |= set(ds.load_ko2019(eval_data, domain).sentences)
    for pairs in (ds.load_sts17(eval_data), *(ds.load_sts_benchmark(eval_data, s) for s in ("dev", "test"))):
        evaluation |= set(pairs.first) | set(pairs.second)
    evaluation = {" ".join(tokenize(s)) for s in evaluation}
    ours = [*sum(lc.load_equal_length(), []), *lc.load_one_word()[0]]
    assert not [s for s in ours if " ".join(tokenize(s)) in evaluation]


def test_length_ranks_no_equal_length_pair():
    # ties are not wins: a word counter scores 0 on pairs of equal length
    assert lc.equal_length_accuracy(LengthScorer()) == 0.0


def test_pair_accuracy_counts_strict_wins():
    model = SimpleNamespace(specificity=lambda sentences: np.array([float(s) for s in sentences]))
    assert lc.pair_accuracy(model, ["3", "1", "2", "5"], ["1", "2", "2", "4"]) == 50.0


def test_most_specific_word_is_the_most_negative_share_and_unk_names_nothing():
    word = lambda token, known, h: SimpleNamespace(token=token, word=token if known else None, entropy=h)  # noqa: E731
    assert lc.most_specific_word(SimpleNamespace(words=[word("the", True, -0.1), word("oslo", True, -2.0)])) == "oslo"
    assert lc.most_specific_word(SimpleNamespace(words=[word("the", True, -0.1), word("oslo", False, -2.0)])) is None


def test_one_word_explain_with_a_hand_made_explainer(tmp_path):
    path = tmp_path / "set.tsv"
    path.write_text("# comment\nsentence\tword\nHe met Ada.\tada\nShe saw Bob.\tbob\n", encoding="utf-8")
    # the explainer finds the capitalised word specific in the first sentence only
    def explain(sentence):
        tokens = tokenize(sentence)
        return SimpleNamespace(words=[SimpleNamespace(word=t, entropy=-1.0 if t == "ada" else 0.0) for t in tokens])
    assert lc.one_word_explain_accuracy(SimpleNamespace(explain=explain), path) == 50.0


def test_a_malformed_set_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("specific\tgeneral\nonly one field\n", encoding="utf-8")
    with pytest.raises(ProbsentError, match=r"bad.tsv:2: "):
        lc.load_equal_length(path)


def test_news_length_groups_of_a_word_counter_is_the_majority_floor(eval_data):
    # within a length group a word counter's scores tie, so it can only predict a constant:
    # the protocol's majority floor, computed independently from the labels
    news = ds.load_news_train(eval_data)
    lengths = [len(tokenize(s)) for s in news.sentences]
    floor = metrics.length_normalized_accuracy(lengths, np.zeros(len(lengths)), news.specific).majority_floor
    assert lc.news_length_groups_accuracy(LengthScorer(), eval_data) == pytest.approx(100 * floor)
