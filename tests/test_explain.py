"""`explain`: WLO's entropy split exactly into one share per word."""
from __future__ import annotations

import math

import pytest

from probsent import ProbsentError
from probsent.cli import main
from probsent.text.tokenize import tokenize


def test_shares_sum_to_the_sentence_entropy(make_model) -> None:
    model = make_model("wlo", seed=4)
    for sentence in ["The cat sat on the mat.", "zebras sat", "3 apples , 3 apples"]:
        explanation = model.explain(sentence)
        assert explanation.entropy == pytest.approx(model.entropy(sentence), abs=1e-3)
        assert [w.token for w in explanation.words] == tokenize(sentence)
    # a blank sentence has no words: its entropy is NaN, as its score (issue 50, item 10)
    assert model.explain("").words == [] and math.isnan(model.explain("").entropy) and math.isnan(model.entropy(""))
    unknown = model.explain("zebras sat").words[0]
    assert unknown.word is None and unknown.entropy == pytest.approx(model.explain("giraffes").words[0].entropy)


def test_explain_needs_wlo(make_model) -> None:
    with pytest.raises(ProbsentError, match="needs a WLO model"):
        make_model("wordsum").explain("a cat")


def test_cli_lists_words_most_specific_first_without_color_when_piped(tmp_path, capsys, make_model) -> None:
    model = make_model("wlo", seed=2)
    model.save(tmp_path / "m")
    assert main(["explain", "--model", str(tmp_path / "m"), "the cat sat on the mat"]) == 0
    out = capsys.readouterr().out
    assert "\033[" not in out
    assert out.splitlines()[1] == ("coverage 1.00: the share of its words the model or English knows "
                                  "(1.00 with an entry of their own)")
    assert out.splitlines()[2].startswith("specificity ")  # then the score, percentile, P(specific)
    rows = out.splitlines()[4:]
    terms = [float(row.split()[-2]) for row in rows]
    assert terms == sorted(terms) and len(rows) == 6
    header = out.splitlines()[0].split()
    assert float(header[1]) == pytest.approx(model.entropy("the cat sat on the mat"), abs=1e-2)
