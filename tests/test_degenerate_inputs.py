"""Numbers a user can defend (issue 41, item 2; issue 44, item 2): text that is no sentence of
the reference's kind (mostly unknown words, mostly repetition, one or two words) gets no
percentile and no P(specific), with the reason; P(specific) for the length agrees with the
percentile on a development list of short specific and short vague sentences."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import probsent
from probsent.readouts.calibration import Calibration
from probsent.cli import main
from probsent.errors import InvalidValueError, ProbsentError
from probsent.readouts.withheld import MAX_REPEATED, MIN_WORDS, NOTES, repeated_trigram_share, stutter_share, withheld_codes
from probsent.text.token_ids import LOW_COVERAGE, coverage_codes

# a development list of my own making: short facts, and short sentences that say little
SHORT_SPECIFIC = ["Einstein published relativity in 1905.", "Mount Everest is 8,849 metres tall.",
                  "Tokyo had 37 million residents in 2020.", "The Titanic sank on 15 April 1912.",
                  "Apple sold 231 million iPhones in 2015.", "Shakespeare was born in Stratford in 1564.",
                  "The Dow fell 2.3 % on Tuesday.", "Marie Curie won two Nobel prizes.",
                  "The Nile flows 6,650 kilometres north.", "Neil Armstrong walked on the Moon in July 1969.",
                  "Water boils at 100 degrees Celsius at sea level."]
SHORT_VAGUE = ["It is good.", "Things happen sometimes.", "She said it was fine.", "Something happened there.",
               "This is a thing.", "People do stuff.", "It was okay, I guess.", "They went somewhere.",
               "Some things are like that.", "It happens a lot.", "That is how it is."]
# the degenerate inputs of issue 41 (and the reason each is withheld)
DEGENERATE = {"the " * 2000: "repetition", "Things happen. " * 6: "repetition", "lol ok": "too short",
              "https://www.example.com/path/to/page?id=42": "low coverage",
              "Der Hund läuft schnell über die Straße und bellt laut.": "looks German", "Stuff.": "too short",
              "xqzzy blorp flumph wibble grooble": "low coverage",
              "yes yes yes": "repetition", "no no no no , thanks": "repetition"}


@pytest.fixture(scope="module")
def shipped():
    return probsent.load()


def _naive_repeated_share(ids: list[int]) -> float:
    """The share of trigrams equal to an earlier one, by a plain loop."""
    trigrams = [tuple(ids[i:i + 3]) for i in range(len(ids) - 2)]
    if not trigrams:
        return 0.0
    return sum(t in trigrams[:i] for i, t in enumerate(trigrams)) / len(trigrams)


def test_repeated_trigram_share_by_hand() -> None:
    sentences = [[5, 5, 5, 5, 5], [1, 2, 3, 1, 2, 3, 1, 2], [1, 2], [], [4, 7, 9, 4, 7, 8], [0, 0, 0, 0]]
    offsets = np.cumsum([0] + [len(s) for s in sentences])
    got = repeated_trigram_share(np.concatenate([np.array(s, dtype=np.int64) for s in sentences]), offsets)
    assert got.tolist() == pytest.approx([2 / 3, 3 / 6, 0.0, 0.0, 0.0, 1 / 2])
    rng = np.random.default_rng(0)
    randoms = [rng.integers(0, 4, rng.integers(0, 12)).tolist() for _ in range(300)]
    offsets = np.cumsum([0] + [len(s) for s in randoms])
    got = repeated_trigram_share(np.array([i for s in randoms for i in s], dtype=np.int64), offsets)
    assert got.tolist() == pytest.approx([_naive_repeated_share(s) for s in randoms])


def test_stutter_share_by_hand() -> None:
    sentences = [[5, 5, 5], [1, 2, 2, 3], [], [7], [7, 7], [1, 2, 3, 4]]  # 7 then 7: a new sentence's first token
    offsets = np.cumsum([0] + [len(s) for s in sentences])
    got = stutter_share(np.array([i for s in sentences for i in s], dtype=np.int64), offsets)
    assert got.tolist() == pytest.approx([2 / 3, 1 / 4, 0.0, 0.0, 1 / 2, 0.0])


def test_withheld_codes_by_hand() -> None:
    index = {"<unk>": 0, "the": 1, "cat": 2, "sat": 3, ".": 4, "on": 5, "mat": 6}
    codes = coverage_codes(index)
    sentences = {"": "no tokens", "the cat sat .": "", "cat .": "too short", "xx the cat .": "",
                 "xx yy zz the .": "low coverage", "the cat the cat the cat the cat .": "repetition", ". . .": "repetition", "cat . !": "too short",
                 "the cat sat sat sat .": "", "the the the the cat .": "repetition"}
    ids = [[index.get(t, 0) for t in s.split()] for s in sentences]
    offsets = np.cumsum([0] + [len(i) for i in ids])
    got = withheld_codes(np.array([i for s in ids for i in s], dtype=np.int64), offsets, codes)
    assert [NOTES[c] for c in got] == list(sentences.values())
    assert (MIN_WORDS, MAX_REPEATED, LOW_COVERAGE) == (3, 0.5, 0.5)  # the documented thresholds


def test_degenerate_inputs_get_no_percentile_and_say_why(shipped) -> None:
    texts = list(DEGENERATE)
    assert shipped.note(texts) == list(DEGENERATE.values())
    assert np.isnan(shipped.percentile(texts)).all() and np.isnan(shipped.probability(texts)).all()
    assert np.isfinite(shipped.specificity(texts)).all()  # the score itself is always given
    einstein = "Einstein published relativity in 1905."
    assert shipped.note(einstein) == "" and 0 < shipped.probability(einstein) < 1


def test_the_command_line_prints_nan_and_warns(shipped, capsys) -> None:
    assert main(["specificity", "--probability", "--percentile", "the " * 300, "lol ok",
                 "Einstein published relativity in 1905."]) == 0
    captured = capsys.readouterr()
    rows = [line.split("\t") for line in captured.out.splitlines()]
    assert [r[1:3] for r in rows[:2]] == [["nan", "nan"], ["nan", "nan"]]
    assert 0 < float(rows[2][1]) < 1 and float(rows[2][2]) > 90
    assert "2 of 3 sentences have no percentile or P(specific)" in captured.err


def test_the_percentile_separates_the_development_list_and_p_is_the_fit_by_hand(shipped) -> None:
    """The length-relative reading (the percentile) puts every short precise sentence above every
    short vague one; P(specific) is the calibration's logistic of the score and the log token count
    (a probability of the news label, which rewards length), computed here by hand."""
    from probsent.api import scoring_engine

    sentences = SHORT_SPECIFIC + SHORT_VAGUE
    probability, percentile = shipped.probability(sentences), shipped.percentile(sentences)
    assert not np.isnan(probability).any()
    assert percentile[:len(SHORT_SPECIFIC)].min() > percentile[len(SHORT_SPECIFIC):].max()
    calibration = json.loads((shipped.path / "calibration.json").read_text())
    assert calibration["features"] == ["score", "log_tokens"]
    (a, b), c = calibration["coefficients"], calibration["intercept"]
    logit = a * shipped.specificity(sentences) + b * np.log(scoring_engine(shipped).token_counts(sentences)) + c
    np.testing.assert_allclose(probability, 1 / (1 + np.exp(-logit)), rtol=1e-12)


def test_a_calibration_without_the_length_fit_still_gives_its_probability(tmp_path, shipped) -> None:
    old = Calibration(("score",), (0.1,), -5.0, "x", 2)  # an earlier score-only file, as it loads
    assert old.probability(np.array([50.0]), np.array([12])) == pytest.approx([1 / (1 + math.exp(0.0))])
    (tmp_path / "calibration.json").write_text(json.dumps(
        {"slope": 0.5, "intercept": 1.0, "fitted_on": "x", "sentences": 2, "accuracy_at_half": 1.0,
         "percentile_slope": 0.01}))
    with pytest.raises(InvalidValueError, match="come together"):
        Calibration.load(tmp_path)
