"""A run scores with one model from start to end (issue 43, finding 4): the worker processes of
``--workers N`` score with the parent's model, handed to them, never with the directory's files
read again; and one load reads one version of the directory's files."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import probsent
from probsent.corpus_scoring.workers import score_chunks
from probsent.errors import InvalidValueError
from probsent.model_directory import read_consistently
from probsent.api import scoring_engine as scorer_of

SENTENCES = ["The Dow fell 2.3 % on Tuesday.", "It is good.", "A man plays a guitar.", "   ", None] * 40


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wlo", "wordavg"])
def test_workers_score_with_the_parents_model_after_the_directory_is_replaced(tmp_path: Path, make_model,
                                                                              kind: str) -> None:
    path = tmp_path / "model"
    make_model(kind, seed=1).save(path)
    scorer = scorer_of(probsent.load(path))
    chunks = [(k, SENTENCES[k * 50:(k + 1) * 50]) for k in range(4)]
    expected = np.concatenate([values[0] for _, values in score_chunks(scorer, chunks, workers=1)])
    make_model(kind, seed=2).save(path)  # replaced after the run's load, before its workers start
    got = np.concatenate([values[0] for _, values in score_chunks(scorer, chunks, workers=2)])
    np.testing.assert_array_equal(got, expected)
    replaced = scorer_of(probsent.load(path))
    assert not np.allclose(np.nan_to_num(got), np.nan_to_num(
        np.concatenate([values[0] for _, values in score_chunks(replaced, chunks, workers=1)])))


def test_a_frozen_copy_scores_as_the_original(tmp_path: Path) -> None:
    for model in (scorer_of(probsent.load()), probsent.load()):
        copy = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(copy.specificity(SENTENCES[:3]), model.specificity(SENTENCES[:3]))
        assert copy.explain(SENTENCES[0]).entropy == model.explain(SENTENCES[0]).entropy


def test_one_load_reads_one_version_of_the_files(tmp_path: Path, make_model) -> None:
    path = tmp_path / "model"
    make_model("wlo", seed=1).save(path)
    reads = []

    def replaced_during_the_first_read():
        reads.append(probsent.api._read_model(path, "cpu"))
        if len(reads) == 1:
            make_model("wlo", seed=2).save(path)
        return reads[-1]

    model, _ = read_consistently(path, replaced_during_the_first_read)
    assert len(reads) == 2 and model is reads[1]
    assert model.specificity("a cat") == make_model("wlo", seed=2).specificity("a cat")

    def always_replaced():
        make_model("wlo", seed=len(reads)).save(path)
        reads.append(None)

    with pytest.raises(InvalidValueError, match="kept changing while it was read"):
        read_consistently(path, always_replaced)
