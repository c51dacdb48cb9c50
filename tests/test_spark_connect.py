"""probsent.spark on Spark Connect (the client/server protocol of shared and serverless
clusters): a client process with ``SparkSession.builder.remote("local[2]")`` (pyspark starts
the bundled Connect server) scores and encodes with the shipped model and with a model
directory, sent twice in one session; the numbers match probsent.load() (1e-9 for scores,
1e-6 for encodings, nulls in the same rows). The client runs in its own process: a Connect
session and a classic SparkContext cannot share one; the server listens on the loopback
interface, on a port the system picks (pyspark's SPARK_TESTING switch; otherwise the fixed
15002, which parallel runs would share). Needs pyspark[connect] and Java; in CI a missing one
fails."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import probsent
from tests.helpers import tiny_model
from tests.spark_support import REPO, require_spark, spark_env

pytestmark = pytest.mark.slow

SENTENCES = ["The cat sat on the mat.", None, "a man plays guitar", "", "   ", "3 apples and a dog",
             "Tuesday, the president spoke to the nation about the economy.", "a dog", None]
PRESENT = [i for i, t in enumerate(SENTENCES) if t is not None and t.strip()]

CLIENT = textwrap.dedent('''
    import json, sys
    from pyspark.sql import SparkSession
    from probsent.corpus_scoring import spark_udfs as module
    from probsent.spark import add_encoding, add_specificity

    sentences, model_dir, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
    spark = (SparkSession.builder.remote("local[2]").config("spark.ui.enabled", "false")
             .config("spark.connect.grpc.binding.address", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    df = spark.createDataFrame([(i, t) for i, t in enumerate(sentences)], "id int, text string")
    result = {"session": type(spark).__module__}
    for key, model in (("shipped", None), ("dir", model_dir)):
        rows = sorted(add_specificity(df, model=model).collect(), key=lambda r: r.id)
        result[key + "_scores"] = [r.specificity for r in rows]
        rows = sorted(add_encoding(df, model=model).collect(), key=lambda r: r.id)
        result[key + "_mean"] = [r.mean for r in rows]
        result[key + "_variance"] = [r.variance for r in rows]
    module._SENT.clear()  # the same directory sent again to the same session
    rows = sorted(add_specificity(df, model=model_dir).collect(), key=lambda r: r.id)
    result["dir_again_scores"] = [r.specificity for r in rows]
    spark.stop()
    with open(out, "w") as f:
        json.dump(result, f)
''')


@pytest.fixture(scope="module")
def connect_results(tmp_path_factory):
    require_spark(connect=True)
    root = tmp_path_factory.mktemp("connect")
    tiny_model("wlo").save(root / "wlo")
    out = root / "result.json"
    run = subprocess.run([sys.executable, "-c", CLIENT, json.dumps(SENTENCES), str(root / "wlo"), str(out)],
                         cwd=REPO, env=spark_env(TMPDIR=str(root), SPARK_TESTING="1"), capture_output=True, text=True, timeout=400)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(out.read_text()), probsent.load(root / "wlo")


def test_the_client_is_a_spark_connect_session(connect_results) -> None:
    assert connect_results[0]["session"] == "pyspark.sql.connect.session"


@pytest.mark.parametrize("key", ["shipped", "dir"])
def test_scores_and_encodings_match_the_api(connect_results, key) -> None:
    result, model_dir = connect_results
    model = probsent.load() if key == "shipped" else model_dir
    texts = [SENTENCES[i] for i in PRESENT]
    for name in ("_scores", "_mean", "_variance"):
        assert [i for i, v in enumerate(result[key + name]) if v is not None] == PRESENT
    np.testing.assert_allclose([result[key + "_scores"][i] for i in PRESENT], model.specificity(texts),
                               rtol=0, atol=1e-9)
    mean, variance = model.encode(texts)
    np.testing.assert_allclose([result[key + "_mean"][i] for i in PRESENT], mean, rtol=0, atol=1e-6)
    np.testing.assert_allclose([result[key + "_variance"][i] for i in PRESENT], variance, rtol=0, atol=1e-6)


def test_a_second_send_in_one_session_gives_the_same_scores(connect_results) -> None:
    result, _ = connect_results
    assert result["dir_again_scores"] == result["dir_scores"]
