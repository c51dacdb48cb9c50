"""One scoring engine (issue 51): a model scores through one engine object, which the command
line, the workers, Spark and spaCy get from ``probsent.api.scoring_engine``; it holds the
model's calibration and percentile table itself (no copy that misses a later change), and a
frozen copy for a worker process scores as the original."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import probsent
from probsent.api import scoring_engine
from probsent.errors import ProbsentError

SENTENCES = ["Einstein published relativity in 1905.", "It is good.", "The Dow fell 2.3 % on Tuesday."]


def test_a_model_has_one_engine_that_sees_its_calibration_change() -> None:
    model = probsent.load()
    engine = scoring_engine(model)
    assert scoring_engine(model) is engine
    scores = engine.specificity(SENTENCES)
    np.testing.assert_array_equal(scores, model.specificity(SENTENCES))
    np.testing.assert_array_equal(engine.probability_of_scores(scores, SENTENCES), model.probability(SENTENCES))
    model.calibration, model.percentiles = None, None  # as a model before probsent calibrate
    assert engine.calibration is None and engine.percentiles is None
    with pytest.raises(ProbsentError, match="probsent calibrate"):
        engine.probability_of_scores(scores, SENTENCES)
    with pytest.raises(ProbsentError, match="probsent calibrate"):
        model.percentile(SENTENCES)


def test_a_frozen_engine_carries_the_readings_and_scores_as_the_original() -> None:
    model = probsent.load()
    engine = scoring_engine(model)
    copy = pickle.loads(pickle.dumps(engine))
    assert copy.has_word_terms and copy.calibration == engine.calibration
    texts = SENTENCES + [None, " "]
    np.testing.assert_array_equal(copy.scores_and_coverage(texts), engine.scores_and_coverage(texts))
    scores = engine.specificity(SENTENCES)
    np.testing.assert_array_equal(copy.percentile_of_scores(scores, SENTENCES),
                                  model.percentile(SENTENCES))
    assert copy.explain(SENTENCES[0]).to_dict() == model.explain(SENTENCES[0]).to_dict()
