"""Issue 50, items 10 and 21: a blank sentence is NaN in explain as everywhere; explain takes
many sentences; repr(Explanation) is the table ``probsent explain`` prints; a TSV header;
``probsent.util.cos_sim`` as sentence-transformers' ``util.cos_sim``."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import probsent
from probsent.cli import main
from probsent.util import cos_sim

BLANKS = ["", "   ", "\t\n", "\xa0\u3000"]  # no tokens (U+200B is a token: <unk>)


@pytest.fixture(scope="module")
def model():
    return probsent.load()


@pytest.mark.parametrize("blank", BLANKS)
def test_a_blank_sentence_is_nan_in_explain_as_everywhere(model, blank, capsys) -> None:
    explanation = model.explain(blank)
    assert math.isnan(model.specificity(blank)) and math.isnan(model.entropy(blank))
    assert math.isnan(explanation.specificity) and math.isnan(explanation.entropy)  # not the prior's 33.025
    row = explanation.to_dict()
    assert row["specificity"] is None and row["entropy"] is None and row["word_terms"] is None
    assert main(["explain", "--format", "json", blank or " "]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["specificity"] is None and written["entropy"] is None
    assert main(["explain", blank or " "]) == 0
    assert "specificity nan" in capsys.readouterr().out


def test_explain_takes_many_sentences(model) -> None:
    sentences = ["Einstein published relativity in 1905.", None, "It is good.", ""]
    many = model.explain(sentences)
    assert isinstance(many, list) and len(many) == 4
    for one, text in zip(many, sentences):
        alone = model.explain(text if text is not None else "")
        assert one.to_dict() == alone.to_dict()
    scores = [e.specificity for e in many]
    np.testing.assert_array_equal(scores, model.specificity(sentences))  # NaN where null or blank
    assert [e.sentence for e in model.explain(pd.Series(sentences[:1], index=[7]))] == sentences[:1]
    assert model.explain(s for s in sentences[:2])[0].words
    for wrong in (None, 3, b"bytes"):
        with pytest.raises(TypeError):
            model.explain(wrong)


def test_repr_of_an_explanation_is_the_command_line_table(model, capsys) -> None:
    sentence = "Einstein was born in Ulm in 1879."
    assert main(["explain", sentence]) == 0
    printed = capsys.readouterr().out
    text = repr(model.explain(sentence))
    assert text == sentence + "\n" + printed.rstrip("\n")
    assert "Explanation(" not in text and "Attribution(" not in text
    rows = text.splitlines()[5:]
    terms = [float(line.split()[-2]) for line in rows]
    assert terms == sorted(terms) and len(rows) == len(model.explain(sentence).words)


def test_tsv_header(model, tmp_path, capsys) -> None:
    assert main(["specificity", "--header", "--probability", "--coverage", "It is good.", ""]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["specificity", "probability", "coverage", "sentence"]
    assert lines[1].split("\t")[-1] == "It is good." and lines[2].startswith("nan\t")
    assert float(lines[1].split("\t")[0]) == pytest.approx(model.specificity("It is good."), abs=5e-5)  # 4 decimals
    assert main(["specificity", "It is good."]) == 0
    assert not capsys.readouterr().out.startswith("specificity")  # no header unless asked
    assert main(["specificity", "--header", "--format", "json", "x"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cos_sim_is_sentence_transformers_matrix(model) -> None:
    a = np.array([[1.0, 0.0, 0.0], [3.0, 4.0, 0.0]])
    b = np.array([[0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    expected = [[0.0, 1 / math.sqrt(2), -1.0], [0.8, 7 / (5 * math.sqrt(2)), -0.6]]  # by hand
    np.testing.assert_allclose(cos_sim(a, b), expected, rtol=0, atol=8 * np.finfo(float).eps)
    assert cos_sim(a[0], b).shape == (1, 3)  # a vector is one row
    mean, _ = model.encode(["It is good.", "A man plays a guitar.", None])
    matrix = cos_sim(model.encode(["It is good.", None]), mean)  # a (mean, variance) tuple: its means
    assert matrix.shape == (2, 3) and matrix[0, 0] == pytest.approx(1.0, abs=1e-6)
    assert not matrix[1].any()  # a null sentence (a zero mean): 0, as sentence-transformers for a zero vector
    with pytest.raises(ValueError):
        cos_sim(a, np.ones((2, 4)))
