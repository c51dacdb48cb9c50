"""probsent.spark on a standalone Spark cluster started by the test (a master and one worker,
separate JVMs on the loopback interface, the worker with its own TMPDIR): the shipped model
and a model directory score and encode as probsent.load() does (1e-9 for scores, 1e-6 for
encodings, nulls in the same rows), a directory's calibration and percentiles travel with it;
a second call in one session works; a model planted in the temporary directory changes nothing. Needs pyspark and Java; in CI a missing one fails."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import probsent
from tests.helpers import tiny_model
from tests.spark_support import REPO, StandaloneCluster, halved_copy, model_planted_in_tmp, require_spark

pytestmark = pytest.mark.slow

SENTENCES = ["The cat sat on the mat.", None, "a man plays guitar", "", "   ", "3 apples and a dog",
             "Tuesday, the president spoke to the nation about the economy.", "a dog", None,
             "the man and the cat"] * 3
PRESENT = [i for i, t in enumerate(SENTENCES) if t is not None and t.strip()]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_spark()
    running = StandaloneCluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield running.start()
    finally:
        running.stop()


@pytest.fixture(scope="module")
def spark(cluster):
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:  # one SparkContext per process: this module's runs on the cluster
        active.stop()
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python workers run this interpreter
    session = (SparkSession.builder.master(cluster.url).appName("probsent-cluster-test")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.executor.memory", "512m")
               .config("spark.cores.max", str(cluster.cores)).config("spark.executorEnv.PYTHONPATH", str(REPO))
               .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    try:
        _first_job_within(session, cluster, 180)
        yield session
    finally:
        session.stop()


def _first_job_within(session, cluster, seconds: float) -> None:
    """A job that needs an executor, cancelled after ``seconds``: a cluster that never gives
    the session an executor fails the module instead of waiting for ever."""
    import threading

    timer = threading.Timer(seconds, session.sparkContext.cancelAllJobs)
    timer.start()
    try:
        session.range(4, numPartitions=2).count()
    except Exception as error:  # the cancelled job
        pytest.fail(f"no executor ran a job within {seconds:.0f} s ({error.__class__.__name__}): {cluster.logs()}")
    finally:
        timer.cancel()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "wlo"
    model = tiny_model("wlo")
    model.save(path)
    return path, probsent.load(path)


def frame(spark, texts=SENTENCES):
    return spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "id int, text string").repartition(3)


def scores(rows) -> list[float | None]:
    return [r.specificity for r in sorted(rows, key=lambda r: r.id)]


def assert_scores_match(got: list[float | None], model) -> None:
    assert [i for i, s in enumerate(got) if s is not None] == PRESENT  # nulls in the same rows
    expected = model.specificity([SENTENCES[i] for i in PRESENT])
    np.testing.assert_allclose([got[i] for i in PRESENT], expected, rtol=0, atol=1e-9)


def test_the_executors_run_on_the_worker(spark, cluster) -> None:
    """The Python that scores runs in the worker's executor, with the worker's TMPDIR: not
    this process, not its temporary directory."""
    import pandas as pd

    def where(batches):
        import os
        for _ in batches:
            yield pd.DataFrame({"pid": [os.getpid()], "tmp": [os.environ.get("TMPDIR", "")]})

    report = spark.range(4, numPartitions=2).mapInPandas(where, "pid long, tmp string").toPandas()
    assert os.getpid() not in set(report.pid) and set(report.tmp) == {str(cluster.worker_tmp)}


@pytest.mark.parametrize("which", ["shipped", "directory"])
def test_scores_and_encodings_match_the_api(spark, model_dir, which) -> None:
    """The shipped model (installed with probsent on the executors) and a model directory
    (sent by probsent): the scores and Gaussians of probsent.load(), nulls in the same rows."""
    from probsent.spark import add_encoding, add_specificity

    given, model = (None, probsent.load()) if which == "shipped" else (str(model_dir[0]), model_dir[1])
    assert_scores_match(scores(add_specificity(frame(spark), model=given).collect()), model)
    rows = sorted(add_encoding(frame(spark), model=given).collect(), key=lambda r: r.id)
    mean, variance = model.encode([SENTENCES[i] for i in PRESENT])
    np.testing.assert_allclose([rows[i].mean for i in PRESENT], mean, rtol=0, atol=1e-6)
    np.testing.assert_allclose([rows[i].variance for i in PRESENT], variance, rtol=0, atol=1e-6)
    assert all(rows[i].mean is None and rows[i].variance is None for i in range(len(SENTENCES)) if i not in PRESENT)


def test_a_second_call_in_one_session_ships_again_without_error(spark, model_dir, monkeypatch) -> None:
    """The same directory sent twice to one session (this process forgetting it had sent it):
    Spark accepts the archive again and the scores are the same."""
    from probsent.corpus_scoring import spark_udfs as module
    from probsent.spark import add_specificity

    path, model = model_dir
    first = scores(add_specificity(frame(spark), model=path).collect())
    monkeypatch.setattr(module, "_SENT", set())
    assert scores(add_specificity(frame(spark), model=path).collect()) == first
    assert_scores_match(first, model)


def test_a_model_planted_in_the_temporary_directory_changes_nothing(spark, model_dir, tmp_path) -> None:
    """Another user's copy of "our" model (every scale halved), planted in the shared
    temporary directory where a staging directory could be looked for (issue 32, finding 1):
    the scores stay the model's own."""
    from probsent.corpus_scoring.spark_udfs import _ship
    from probsent.spark import add_specificity

    path, model = model_dir
    forged = halved_copy(tiny_model("wlo"), tmp_path / "forged")
    with model_planted_in_tmp(path, _ship(frame(spark), path)[0].archive, forged):
        got = scores(add_specificity(frame(spark), model=path).collect())
    assert_scores_match(got, model)
    forged_scores = probsent.load(forged).specificity([SENTENCES[i] for i in PRESENT])
    assert np.min(np.abs(np.array([got[i] for i in PRESENT]) - forged_scores)) > 1.0  # the attack would show


def test_a_directory_with_calibration_and_percentiles_gives_every_column(spark, tmp_path) -> None:
    """A copy of the shipped model given as a directory: its calibration and percentile table
    travel in the archive, so P(specific), the percentile and the coverage are the API's."""
    import shutil

    from probsent.model_directory import MODEL_FILES
    from probsent.spark import add_specificity

    source = Path(probsent.__file__).parent / "pretrained" / "wlo"
    (tmp_path / "copy").mkdir()
    for name in MODEL_FILES:
        shutil.copyfile(source / name, tmp_path / "copy" / name)
    model = probsent.load(tmp_path / "copy")
    rows = sorted(add_specificity(frame(spark), model=tmp_path / "copy", probability=True, percentile=True,
                                  coverage=True).collect(), key=lambda r: r.id)
    texts = [SENTENCES[i] for i in PRESENT]
    read = [i for i in PRESENT if model.note(SENTENCES[i]) == ""]  # the others' percentile and P are withheld
    for column, expected in (("probability", model.probability(texts)), ("percentile", model.percentile(texts)),
                             ("coverage", model.coverage(texts))):
        given = [i for i, r in enumerate(rows) if r[column] is not None and not np.isnan(r[column])]
        assert given == (PRESENT if column == "coverage" else read)
        np.testing.assert_allclose([np.nan if rows[i][column] is None else rows[i][column] for i in PRESENT],
                                   expected, rtol=0, atol=1e-9)
