"""Spark scores with one model (issue 43, finding 5): the driver reads the bytes the executors get
(never a model it cached earlier from a directory that has changed since), a loaded model whose
directory changed is a one-line error, threads of one session ship a model together, and a user's
column named like probsent's working column is kept."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

import probsent
from probsent.errors import ProbsentError
from probsent.model_directory import DEFAULT_MODEL
from tests.helpers import tiny_model as make_model
from tests.spark_support import require_spark

pytestmark = pytest.mark.slow

TEXTS = ["The cat sat on the mat.", "a man plays guitar", "Tuesday, the president spoke about the economy."]


@pytest.fixture(scope="module")
def spark():
    require_spark()
    from probsent.spark import local_session
    session = local_session(2)
    yield session
    session.stop()


def frame(spark, texts=TEXTS):
    return spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "id int, text string")


def _scores(rows) -> list[float]:
    return [r.specificity for r in sorted(rows, key=lambda r: r.id)]


def test_a_replaced_directory_is_read_again_on_the_driver_and_the_executors(spark, tmp_path: Path) -> None:
    from probsent.spark import add_encoding, add_specificity

    path = tmp_path / "model"
    make_model("wlo", seed=1).save(path)
    first = _scores(add_specificity(frame(spark), model=str(path)).collect())
    np.testing.assert_allclose(first, make_model("wlo", seed=1).specificity(TEXTS), atol=1e-6)
    shutil.rmtree(path)
    make_model("wlo", seed=2).save(path)
    np.testing.assert_allclose(_scores(add_specificity(frame(spark), model=str(path)).collect()),
                               make_model("wlo", seed=2).specificity(TEXTS), atol=1e-6)
    # a WLO replaced by a Wordavg: the columns are the Wordavg's vectors, not a WLO's nulls
    assert add_encoding(frame(spark), model=str(path)).columns[-2:] == ["mean", "variance"]
    shutil.rmtree(path)
    make_model("wordavg", seed=3).save(path)
    encoded = sorted(add_encoding(frame(spark), model=str(path)).collect(), key=lambda r: r.id)
    assert encoded[0].__fields__[-1] == "vector"
    np.testing.assert_allclose([r.vector for r in encoded], make_model("wordavg", seed=3).encode(TEXTS), atol=1e-6)


def test_a_replaced_directory_without_calibration_is_one_line_on_the_driver(spark, tmp_path: Path) -> None:
    from probsent.spark import add_specificity

    path = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL, path)
    assert all(r.probability is not None for r in add_specificity(frame(spark), model=path, probability=True).collect())
    shutil.rmtree(path)
    make_model("wlo", seed=1).save(path)  # no calibration.json
    with pytest.raises(ProbsentError, match="has no calibration.json"):
        add_specificity(frame(spark), model=path, probability=True)


def test_a_loaded_model_whose_directory_changed_is_one_line(spark, tmp_path: Path) -> None:
    from probsent.spark import add_specificity

    path = tmp_path / "model"
    make_model("wlo", seed=1).save(path)
    model = probsent.load(path)
    np.testing.assert_allclose(_scores(add_specificity(frame(spark), model=model).collect()),
                               model.specificity(TEXTS), atol=1e-6)
    make_model("wlo", seed=2).save(path)
    with pytest.raises(ProbsentError, match="changed after this model was loaded"):
        add_specificity(frame(spark), model=model)


def test_threads_of_one_session_ship_a_model_together(spark, tmp_path: Path) -> None:
    from probsent.spark import add_specificity

    path = tmp_path / "model"
    make_model("wlo", seed=4).save(path)
    expected = make_model("wlo", seed=4).specificity(TEXTS)
    failures, results = [], []
    start = threading.Barrier(8)

    def run() -> None:
        try:
            start.wait()
            results.append(_scores(add_specificity(frame(spark), model=str(path)).collect()))
        except Exception as exc:  # noqa: BLE001 - every failure is reported below
            failures.append(repr(exc))

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[:2]
    assert len(results) == 8
    for scores in results:
        np.testing.assert_allclose(scores, expected, atol=1e-6)


def test_a_users_column_named_like_probsents_working_column_is_kept(spark) -> None:
    from probsent.spark import add_specificity

    df = spark.createDataFrame([(0, TEXTS[0], "mine")], "id int, text string, __probsent__ string")
    row = add_specificity(df).collect()[0]
    assert row["__probsent__"] == "mine" and row.specificity == pytest.approx(probsent.load().specificity(TEXTS[0]))
    assert add_specificity(df).columns == ["id", "text", "__probsent__", "specificity"]
