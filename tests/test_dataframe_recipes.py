"""The pandas and Hugging Face datasets recipes of docs/USE_WITH.md: a DataFrame column scored
in one call, and Dataset.map(batched=True), each against the scores of the plain strings."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import probsent

TEXTS = ["The Dow fell 2.3 % to 10,421.67 on Tuesday.", None, "Things happen.", "", float("nan"),
         "A man is playing a guitar.", "zebras unknown entirely"]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


def one_by_one(model, texts: list) -> list[float]:
    """Each present text scored alone; NaN for a null."""
    return [math.nan if t is None or t != t else model.specificity(t) for t in texts]


def test_dataframe_column_in_one_call(model) -> None:
    frame = pd.DataFrame({"text": TEXTS}, index=[f"row{i}" for i in range(len(TEXTS))]).iloc[::-1]
    frame["specificity"] = model.specificity(frame["text"])
    expected = pd.Series(one_by_one(model, TEXTS), index=[f"row{i}" for i in range(len(TEXTS))])
    pd.testing.assert_series_equal(frame["specificity"].sort_index(), expected.sort_index(),
                                   check_names=False, rtol=1e-12)


def test_datasets_map_batched(model, monkeypatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    from datasets import Dataset

    dataset = Dataset.from_dict({"text": [t if isinstance(t, str) else None for t in TEXTS]})
    mapped = dataset.map(lambda batch: {"specificity": model.specificity(batch["text"])},
                         batched=True, batch_size=3)  # several batches, one with two nulls
    expected = one_by_one(model, TEXTS)
    np.testing.assert_allclose(np.array(mapped["specificity"], dtype=float), expected, rtol=1e-12)
    np.testing.assert_allclose(model.specificity(mapped["text"]), expected, rtol=1e-12)  # a column
