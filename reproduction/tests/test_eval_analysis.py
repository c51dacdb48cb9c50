"""Lexical and sentential analyses on a hand-made WLO, and the report's ablation table (no data needed)."""
import math

import numpy as np
import pytest
import torch

from probsent.api import SentenceModel
from probsent.errors import ProbsentError
from probsent.training import MappedPairs
from probsent.api import Vocabulary
from reproduction.evaluation import lexical, paper, report, sentential
from reproduction.evaluation.model_scorer import encode_ids
from probsent.gaussian import entropy as gaussian_entropy
from reproduction.evaluation.results import Ablation, AblationEntry, EvaluationRun, Extreme, Results
from probsent.models import build_model

LOG_2PI_E = math.log(2 * math.pi * math.e)

# word: (A_w, B_w), dimension 2. Entropy of "w" = log(2 pi e) + sum_d log|A_w,d| (k/2 = 1).
HAND = {
    "the": ((1.0, 1.0), (0.0, 0.1)),      # norm 0.1, H = 2.84
    "a": ((-1.0, 0.9), (0.2, 0.0)),       # norm 0.2, H = 2.73 (a negative scale: |A| counts)
    "dog": ((0.1, 0.1), (3.0, 4.0)),      # norm 5,   H = -1.77
    "cat": ((0.5, 0.5), (0.0, 6.0)),      # norm 6,   H = 1.45
    "zebra": ((0.01, 0.01), (0.3, 0.4)),  # norm 0.5, H = -6.37
    "rare": ((0.2, 0.2), (8.0, 6.0)),     # norm 10, but seen too rarely to count
}
COUNTS = {"the": 500, "a": 400, "dog": 150, "cat": 120, "zebra": 100, "rare": 3}


def hand_made_wlo() -> SentenceModel:
    words = ["<unk>", *HAND]
    encoder = build_model({"type": "wlo", "vocab_size": len(words), "dim": 2})
    with torch.no_grad():
        encoder.scale.weight[0] = torch.tensor([0.3, 0.3])  # <unk>: never listed
        encoder.shift.weight[0] = torch.tensor([9.0, 9.0])
        for i, (scale, shift) in enumerate(HAND.values(), start=1):
            encoder.scale.weight[i] = torch.tensor(scale)
            encoder.shift.weight[i] = torch.tensor(shift)
    return SentenceModel(encoder, Vocabulary(words))


def expected_entropy(word: str) -> float:
    return LOG_2PI_E + sum(math.log(abs(a)) for a in HAND[word][0])


def test_word_table_norms_and_entropies():
    table = lexical.word_table(hand_made_wlo(), COUNTS, min_count=100)
    assert table.words == ["the", "a", "dog", "cat", "zebra"]  # <unk> and "rare" left out
    assert table.counts.tolist() == [500, 400, 150, 120, 100]
    assert table.norms == pytest.approx([0.1, 0.2, 5.0, 6.0, 0.5])
    assert table.entropies == pytest.approx([expected_entropy(w) for w in table.words], abs=1e-5)


def test_entropy_is_the_sum_of_word_terms():
    model = hand_made_wlo()
    _, logvar = encode_ids(model.encoder, [np.array([3])])  # "dog"
    terms = model.encoder.word_entropy_terms()[3].item()
    assert gaussian_entropy(logvar)[0] == pytest.approx(model.encoder.dim / 2 * LOG_2PI_E + terms)


def test_top_lists_follow_norm_and_entropy():
    table = lexical.word_table(hand_made_wlo(), COUNTS, min_count=100)
    lists = lexical.top_lists(table, top_k=2, norm_fraction=0.5)  # pools of 3 words at each end
    words = {name: [item.word for item in items] for name, items in lists.items()}
    # Small-norm pool: the (0.1), a (0.2), zebra (0.5); large-norm pool: cat (6), dog (5), zebra (0.5).
    assert words["small_norm_small_abs_entropy"] == ["a", "the"]     # |H| 2.73, 2.84, 6.37
    assert words["small_norm_small_entropy"] == ["zebra", "a"]       # H -6.37, 2.73, 2.84
    assert words["large_norm_small_abs_entropy"] == ["cat", "dog"]   # |H| 1.45, 1.77, 6.37
    assert words["large_norm_small_entropy"] == ["zebra", "dog"]     # H -6.37, -1.77, 1.45
    first = lists["small_norm_small_entropy"][0]
    assert first.count == 100 and first.norm == pytest.approx(0.5)


def test_lexical_analysis_summary_and_tsv():
    result, table = lexical.lexical_analysis(hand_made_wlo(), COUNTS, min_count=1, top_k=20)
    assert result.n_words == 6 and result.pool_size == 6  # at least top_k, at most all words
    assert all(len(items) == 6 for items in result.lists.values())
    assert result.norm_range == pytest.approx([0.1, 10.0])
    header, first, *_ = table.to_tsv().splitlines()
    assert header == "word\tcount\tnorm\tentropy" and first.startswith("the\t500\t0.1\t")


def test_lexical_analysis_needs_wlo():
    encoder = build_model({"type": "wordsum", "vocab_size": 3, "dim": 2})
    model = SentenceModel(encoder, Vocabulary(["<unk>", "x", "y"]))
    with pytest.raises(ProbsentError, match="needs a WLO model, not wordsum"):
        lexical.word_table(model, {"x": 5}, 1)


def toy_pairs(sentences: list[list[str]]) -> MappedPairs:
    words = sorted({w for s in sentences for w in s})
    rank = {w: i for i, w in enumerate(words)}
    offsets = np.cumsum([0] + [len(s) for s in sentences]).astype(np.int64)
    tokens = np.array([rank[w] for s in sentences for w in s], dtype=np.int32)
    counts = np.array([sum(s.count(w) for s in sentences) for w in words], dtype=np.int64)
    return MappedPairs(tokens, offsets, words, counts, {})


def test_sentential_extremes_per_length():
    pairs = toy_pairs([
        ["the", "dog"], ["a", "cat"], ["the", "zebra"], ["the", "dog"],  # "the dog" twice: once
        ["the", "dog", "a"], ["zebra", "dog", "cat"], ["a", "the", "a"],
        ["the", "okapi", "dog"],  # an out-of-vocabulary word: left out
        ["dog"],  # too short for lengths (2, 3)
    ])
    result = sentential.sentential_analysis(hand_made_wlo(), pairs, sample_size=100, lengths=(2, 3))
    assert result.measure == "entropy"
    assert result.n_drawn == 9 and result.n_kept == 6
    two, three = result.by_length["2"], result.by_length["3"]
    assert two.n == 3 and three.n == 3
    assert two.most_specific.sentence == "the zebra"  # log|A| sum -9.21
    assert two.most_general.sentence == "a cat"  # -1.49 (vs "the dog" -4.61)
    assert three.most_specific.sentence == "zebra dog cat"
    assert three.most_general.sentence == "a the a"
    assert three.most_specific.value == pytest.approx(
        LOG_2PI_E + sum(math.log(abs(a)) for w in ("zebra", "dog", "cat") for a in HAND[w][0]), abs=1e-4)


def test_sentential_uses_the_norm_for_deterministic_models():
    encoder = build_model({"type": "wordsum", "vocab_size": 3, "dim": 2})
    with torch.no_grad():
        encoder.embedding.weight[:] = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]])
    model = SentenceModel(encoder, Vocabulary(["<unk>", "x", "y"]))
    pairs = toy_pairs([["x", "x"], ["y", "y"], ["x", "y"]])
    result = sentential.sentential_analysis(model, pairs, lengths=(1, 5))
    group = result.by_length["2"]
    assert result.measure == "norm"
    assert group.most_general == Extreme("x x", pytest.approx(2.0))
    assert group.most_specific == Extreme("y y", pytest.approx(6.0))


def test_report_ablation_table_beside_the_paper():
    evaluation = EvaluationRun(Results(ablation=Ablation(
        with_prior=AblationEntry(system="WLO", prior_weight=1e-4, accuracy=71.25, f1=72.0),
        without_prior=AblationEntry(system="WLO (no prior)", prior_weight=0.0, accuracy=65.0, f1=60.04))))
    text = report.render_report(evaluation)
    section = text[text.index("## Table 7"):text.index("## Table 8")]
    rows = [line for line in section.splitlines() if line.startswith("| WLO")]
    assert rows[0] == "| WLO with the prior | WLO | 0.0001 | 71.2 | 77.4 | 72.0 | 78.4 |"
    assert rows[1] == "| WLO without the prior | WLO (no prior) | 0 | 65.0 | 67.9 | 60.0 | 68.2 |"
    assert "Accuracy paper" in section


def test_report_without_ablation_says_how_to_run_it():
    text = report.render_report(EvaluationRun(Results()))
    assert "--ablation-model" in text[text.index("## Table 7"):]
    # Every paper row of Table 2 is listed, the unrunnable ones as not run.
    for row in paper.TABLE2:
        assert f"| {row.label} |" in text
    assert "| BERT-base [CLS] | not run | 64.5 |" in text
