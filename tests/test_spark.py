"""probsent.spark in local[2] mode: the numbers of probsent.load().specificity / encode, row
for row against the CLI on 100,000 sentences, bad input as one-line errors, one model load per
Python worker, a model directory staged privately and checked on the executor. Needs pyspark and
Java; in CI (CI=true) a missing one fails instead of skipping. A standalone cluster:
tests/test_spark_cluster.py; Spark Connect: tests/test_spark_connect.py."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import probsent
from probsent.cli import main
from probsent.api import scoring_engine
from tests.helpers import slice_of_pairs, wlo_specificity_reference
from tests.helpers import tiny_model as make_model
from tests.spark_support import halved_copy, model_planted_in_tmp, require_spark

pytestmark = pytest.mark.slow

SENTENCES = ["The cat sat on the mat.", None, "a man plays guitar", "", "   ", "3 apples and a dog",
             "Tuesday, the president spoke to the nation about the economy."]


@pytest.fixture(scope="module")
def spark():
    require_spark()
    from probsent.spark import local_session
    session = local_session(2, **{"spark.sql.execution.arrow.maxRecordsPerBatch": "2000"})
    yield session
    session.stop()


@pytest.fixture
def model_dir(tmp_path):
    model = make_model("wlo")
    model.save(tmp_path / "m")
    return tmp_path / "m", model


def frame(spark, texts):
    return spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "id int, text string")


def test_specificity_matches_the_api(spark, model_dir) -> None:
    from probsent.spark import add_specificity

    path, model = model_dir
    rows = add_specificity(frame(spark, SENTENCES), model=str(path)).collect()
    assert [r.id for r in rows] == list(range(len(SENTENCES))) and [r.text for r in rows] == SENTENCES
    present = [i for i, t in enumerate(SENTENCES) if t and t.strip()]
    assert [i for i, r in enumerate(rows) if r.specificity is not None] == present
    got = [rows[i].specificity for i in present]
    np.testing.assert_allclose(got, model.specificity([SENTENCES[i] for i in present]), rtol=0, atol=1e-6)
    np.testing.assert_allclose(got, wlo_specificity_reference(model, [SENTENCES[i] for i in present]), atol=1e-4)


def test_probability_percentile_and_coverage_with_the_shipped_model(spark) -> None:
    from probsent.spark import add_specificity

    model = probsent.load()
    rows = add_specificity(frame(spark, SENTENCES), probability=True, percentile=True, coverage=True).collect()
    assert rows[0].__fields__[-4:] == ["specificity", "probability", "percentile", "coverage"]
    present = [i for i, t in enumerate(SENTENCES) if t and t.strip()]
    scores = model.specificity([SENTENCES[i] for i in present])
    np.testing.assert_allclose([rows[i].specificity for i in present], scores, rtol=0, atol=1e-6)
    c = model.calibration  # a logistic function of the score and the log token count, withheld with the percentile
    percentile = model.percentile([SENTENCES[i] for i in present])
    counts = scoring_engine(model).token_counts([SENTENCES[i] for i in present])
    by_hand = 1 / (1 + np.exp(-(c.coefficients[0] * scores + c.coefficients[1] * np.log(counts) + c.intercept)))
    np.testing.assert_allclose([rows[i].probability for i in present], np.where(np.isnan(percentile), np.nan, by_hand),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose([rows[i].percentile for i in present],
                               model.percentile([SENTENCES[i] for i in present]), rtol=0, atol=1e-9)
    np.testing.assert_allclose([rows[i].coverage for i in present],
                               model.coverage([SENTENCES[i] for i in present]), rtol=0, atol=1e-12)
    blank = [i for i in range(len(SENTENCES)) if i not in present]  # null or blank: null, as NaN in the API
    assert blank and all(rows[i].specificity is None and rows[i].probability is None
                         and rows[i].percentile is None and rows[i].coverage is None for i in blank)


def test_encoding_columns_match_the_api(spark, model_dir) -> None:
    from probsent.spark import add_encoding

    path, model = model_dir
    rows = add_encoding(frame(spark, SENTENCES), model=path).collect()
    assert rows[0].__fields__ == ["id", "text", "mean", "variance"]
    present = [i for i, t in enumerate(SENTENCES) if t and t.strip()]
    mean, variance = model.encode([SENTENCES[i] for i in present])
    np.testing.assert_allclose([rows[i].mean for i in present], mean, rtol=1e-6, atol=1e-6)  # float32's last bits
    np.testing.assert_allclose([rows[i].variance for i in present], variance, rtol=1e-6, atol=1e-6)
    assert all(rows[i].mean is None and rows[i].variance is None for i in range(len(SENTENCES)) if i not in present)


def test_deterministic_model_gives_vectors(spark, tmp_path) -> None:
    from probsent.spark import add_encoding, add_specificity

    model = make_model("wordavg")
    model.save(tmp_path / "w")
    texts = ["the cat", "a dog and a man"]
    encoded = add_encoding(frame(spark, texts), model=tmp_path / "w").collect()
    np.testing.assert_allclose([r.vector for r in encoded], model.encode(texts), rtol=0, atol=1e-6)
    scored = add_specificity(frame(spark, texts), model=tmp_path / "w").collect()
    np.testing.assert_allclose([r.specificity for r in scored], np.linalg.norm(model.encode(texts), axis=1),
                               rtol=1e-6)


@pytest.mark.parametrize("make, kwargs, message", [
    (lambda s: frame(s, ["a"]), {"column": "body"}, "the DataFrame has no column 'body' (columns: id, text)"),
    (lambda s: frame(s, ["a"]), {"column": "id"}, "column 'id' holds int, not strings"),
    (lambda s: s.createDataFrame([("a", 1.0)], "text string, specificity double"), {},
     "the DataFrame already has a column 'specificity'"),
])
def test_bad_input_is_one_line(spark, make, kwargs, message) -> None:
    from probsent.spark import add_specificity

    with pytest.raises(probsent.ProbsentError) as error:
        add_specificity(make(spark), **kwargs)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_model_without_calibration_has_no_probability(spark, model_dir) -> None:
    from probsent.spark import add_specificity

    path, _ = model_dir
    with pytest.raises(probsent.ProbsentError, match="has no calibration.json; run: probsent calibrate"):
        add_specificity(frame(spark, ["a"]), model=path, probability=True)


def test_model_loaded_once_per_worker_process(spark, model_dir) -> None:
    """Twelve partitions over local[2]'s Python workers: a worker process runs several tasks
    and finds the same model object in every one (loaded once, not once per task or batch)."""
    import pandas as pd

    from probsent.corpus_scoring.spark_udfs import _ship
    from probsent.spark import add_specificity

    path, _ = model_dir
    texts = spark.range(0, 6000, numPartitions=12).selectExpr("id", "concat('sentence ', id, ' about a cat') AS text")
    scored = add_specificity(texts, model=path)
    shipped, _ = _ship(scored, path)

    def who(batches):
        from probsent.corpus_scoring.spark_udfs import _executor_model
        for batch in batches:
            model = _executor_model(shipped)
            yield pd.DataFrame({"pid": [os.getpid()], "model": [id(model)], "rows": [len(batch)]})

    report = scored.mapInPandas(who, "pid long, model long, rows long").toPandas()
    assert report.rows.sum() == 6000 and len(report) >= 12
    assert report.pid.nunique() < len(report)  # Python workers are reused across tasks
    assert report.groupby("pid").model.nunique().eq(1).all()


def test_100k_parquet_row_for_row_with_the_cli(spark, tmp_path, capsys) -> None:
    """100,000 real sentences (some null or blank) through Spark and through the CLI: the same
    rows, the same scores (to 1e-6) and nulls in the same places."""
    pairs = slice_of_pairs(tmp_path / "pairs.tsv", 100_000)
    texts = [line.split("\t", 1)[0] for line in pairs.read_text(encoding="utf-8").splitlines()]
    for i in range(0, len(texts), 9973):
        texts[i] = None if i % 2 else "  "
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(len(texts)), pa.int64()), "text": texts}), source,
                   row_group_size=25_000)
    assert main(["specificity", "--input", str(source), "--output", str(tmp_path / "cli.parquet")]) == 0
    cli = pq.read_table(tmp_path / "cli.parquet")

    from probsent.spark import add_specificity
    scored = add_specificity(spark.read.parquet(str(source)))
    scored.write.parquet(str(tmp_path / "spark"))
    ours = pq.read_table(tmp_path / "spark").sort_by("id")
    assert ours.column("id").to_pylist() == cli.column("id").to_pylist() == list(range(len(texts)))
    assert ours.column("text").to_pylist() == cli.column("text").to_pylist() == texts
    a = ours.column("specificity").to_numpy(zero_copy_only=False)
    b = cli.column("specificity").to_numpy(zero_copy_only=False)
    assert np.array_equal(np.isnan(a), np.isnan(b)) and np.isnan(b).sum() == len(range(0, len(texts), 9973))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_probsent_spark_is_where_users_find_every_public_function(spark) -> None:
    """``probsent.spark`` re-exports the public names of ``probsent.corpus_scoring.spark_udfs``
    (where the code lives), the same objects."""
    import probsent.spark
    from probsent.corpus_scoring import spark_udfs as module

    functions = {name for name, value in vars(module).items()
                 if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")}
    public = functions | {"LOCAL_SETTINGS"}
    assert set(probsent.spark.__all__) == public
    assert all(getattr(probsent.spark, name) is getattr(module, name) for name in public)


def test_a_model_directory_is_staged_privately_as_an_archive_of_its_hashed_files(spark, model_dir) -> None:
    """The archive is written into a directory this process created (mode 0700, owned by this
    user), holds exactly the model files, byte for byte, and is named by their SHA-256."""
    import hashlib
    import stat
    import zipfile

    from probsent.corpus_scoring import spark_udfs as module

    path, _ = model_dir
    shipped, _ = module._ship(frame(spark, ["a"]), path)
    staging = module._STAGING[0]
    info = os.lstat(staging)
    assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    with zipfile.ZipFile(staging / shipped.archive) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    assert contents == {name: (path / name).read_bytes() for name in ("config.json", "model.safetensors", "vocab.txt")}
    digest = hashlib.sha256()
    for name in shipped.files:
        digest.update(name.encode() + b"\0" + len(contents[name]).to_bytes(8, "big") + contents[name])
    assert shipped.sha256 == digest.hexdigest() and shipped.archive == f"probsent-model-{digest.hexdigest()[:16]}.zip"


def test_an_executor_refuses_model_files_that_do_not_match_the_drivers_hash(spark, model_dir, tmp_path,
                                                                          monkeypatch) -> None:
    """What an executor finds under the archive's name is checked before it is loaded: other
    bytes, or a link in place of a file, are a one-line error; the real files load."""
    from probsent.corpus_scoring import spark_udfs as module

    path, model = model_dir
    shipped, _ = module._ship(frame(spark, ["a"]), path)
    unpacked = tmp_path / "executor" / shipped.archive
    monkeypatch.setattr(module, "SparkFiles", type("Files", (), {"get": staticmethod(lambda name: str(unpacked))}))
    monkeypatch.setattr(module, "_VERIFIED", set())
    forged = make_model("wlo", seed=1)
    forged.save(unpacked)
    with pytest.raises(probsent.ProbsentError, match="do not match the SHA-256") as error:
        module._executor_model(shipped)
    assert "\n" not in str(error.value)
    for name in shipped.files:
        (unpacked / name).unlink()
        (unpacked / name).symlink_to(path / name)
    with pytest.raises(probsent.ProbsentError, match="has no regular file config.json"):
        module._executor_model(shipped)
    for name in shipped.files:
        (unpacked / name).unlink()
        (unpacked / name).write_bytes((path / name).read_bytes())
    assert module._executor_model(shipped).specificity(["the cat"]) == pytest.approx(model.specificity(["the cat"]))


def test_a_model_planted_in_the_temporary_directory_changes_nothing(spark, model_dir, tmp_path) -> None:
    """The planted-copy attack of issue 32 in local mode (where it worked: a copy with every scale halved, planted
    under the staging name probsent reused, gave 244.75 for 36.81): the model's own scores."""
    from probsent.corpus_scoring.spark_udfs import _ship
    from probsent.spark import add_specificity

    path, model = model_dir
    texts = ["The cat sat on the mat.", "a man plays guitar"]
    forged = halved_copy(make_model("wlo"), tmp_path / "forged")
    with model_planted_in_tmp(path, _ship(frame(spark, texts), path)[0].archive, forged):
        got = [r.specificity for r in add_specificity(frame(spark, texts), model=path).collect()]
    np.testing.assert_allclose(got, model.specificity(texts), rtol=0, atol=1e-9)
    assert np.min(np.abs(np.array(got) - probsent.load(forged).specificity(texts))) > 1.0
