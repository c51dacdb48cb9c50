"""probsent on Apache Spark DataFrames (``pip install 'probsent[spark]'``; Spark needs Java 17).

    from probsent.spark import add_specificity
    scored = add_specificity(spark.read.parquet("corpus/"), column="text", probability=True)

Both functions add columns with a pandas UDF: Spark sends the text column to its Python
workers in Arrow batches, and each worker process loads the model once (cached by directory:
:func:`probsent.corpus_scoring.workers.cached_model`, a WLO model without torch; scores come from its
scoring engine, :mod:`probsent.readouts.scoring_engine`) and then scores batch
after batch with the same code as ``probsent specificity``, so the numbers are those of
``probsent.load().specificity``. Rows keep their order and every column. A row whose text is
null or only whitespace gets nulls.

``model`` is None (the model shipped inside probsent, which the executors have installed
with the package), a model directory (or ``probsent train`` output directory), or a loaded
:class:`~probsent.SentenceModel` saved in a directory. A directory's model files (about 10 MB
for a model the size of the shipped one; never a training run's checkpoints) are packed into a
zip archive named by their SHA-256,
written into a directory this process creates with mode 0700, and sent the way every Spark
deployment accepts archives: ``SparkSession.addArtifacts(archive=True)`` on Spark Connect,
``SparkContext.addArchive`` on Spark Classic (local, standalone, YARN, Kubernetes). Each
executor process checks the unpacked files against that SHA-256 before it loads them.

Users import it as :mod:`probsent.spark`, which re-exports the public names.
"""
from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Callable, NamedTuple, Union

import numpy as np
import pandas as pd
from pyspark import SparkFiles, TaskContext
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from probsent.corpus_scoring.formats import SCORE
from probsent.corpus_scoring.score import score_columns
from probsent.errors import ProbsentError
from probsent.model_directory import files_digest, read_consistently, read_model_files, resolve_model_dir
from probsent.api import SentenceModel, scoring_engine
from probsent.readouts.readout_table import ScoredTexts, asked
from probsent.corpus_scoring.workers import cached_model, limit_threads, with_sentence

Model = Union[str, os.PathLike, "SentenceModel", None]


def add_specificity(df: DataFrame, column: str = "text", model: Model = None,
                    probability: bool = False, batch_size: int = 256, percentile: bool = False,
                    coverage: bool = False, **readouts: bool) -> DataFrame:
    """``df`` with a ``specificity`` column (float64; higher = more specific) scoring the
    string column ``column``; with ``probability`` also P(specific), the chance that a news
    annotator calls the sentence specific (the model's calibration), with ``percentile`` the percentile for the sentence's length
    (0-100), with ``coverage`` the share of its words the model or English knows (0-1). Null for
    a null or blank text, as NaN in the API; the percentile and P(specific) are also null where
    the API withholds them (:mod:`probsent.readouts.withheld`).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The sentences, one a row.
    column : str, default "text"
        The string column to score.
    model : str, os.PathLike, SentenceModel or None
        A model directory or a loaded model; None for the shipped model.
    probability, percentile, coverage : bool, default False
        Add the columns ``probability``, ``percentile`` and ``coverage`` (as the API's
        :meth:`~probsent.api.SentenceModel.probability`, ``percentile`` and ``coverage``).
    batch_size : int, default 256
        Sentences per batch in each worker.
    **readouts : bool
        Any other read-out of :mod:`probsent.readouts.readout_table` by its name (``NAME=True``
        adds its column, as the API's ``model.NAME``); an unknown name is a one-line error.

    Returns
    -------
    pyspark.sql.DataFrame
        ``df`` with the new float64 columns (lazy, as every Spark transformation).

    Examples
    --------
    >>> spark = local_session(cores=1)
    >>> texts = ["Einstein published relativity in 1905.", "It is good.", None]
    >>> df = spark.createDataFrame([(t,) for t in texts], "text string")
    >>> rows = add_specificity(df, probability=True).collect()
    >>> rows[0].specificity > rows[1].specificity, rows[2].specificity is None
    (True, True)
    >>> 0 < rows[1].probability < rows[0].probability < 1
    True
    >>> spark.stop()
    """
    wanted = {"probability": probability, "percentile": percentile, "coverage": coverage, **readouts}
    adding = asked([name for name, yes in wanted.items() if yes])  # the read-outs themselves go to the executors
    shipped, local = _ship(df, model)
    for readout in adding:
        readout.require(scoring_engine(local))
    names = score_columns([r.name for r in adding])
    _check_column(df, column, names)

    @F.pandas_udf(T.StructType([T.StructField(n, T.DoubleType()) for n in names]))
    def score(texts: pd.Series) -> pd.DataFrame:
        executor_engine = scoring_engine(_executor_model(shipped))
        sentences = _texts(texts)
        values, shares, _ = executor_engine.scores_and_coverage(sentences, batch_size)  # one tokenization
        batch = ScoredTexts(executor_engine, sentences, batch_size, values, shares)
        return pd.DataFrame({SCORE: values, **{r.name: r.of(batch) for r in adding}})

    return _with_fields(df, score(F.col(_quoted(column))))


def add_encoding(df: DataFrame, column: str = "text", model: Model = None,
                 batch_size: int = 256) -> DataFrame:
    """``df`` with each sentence's representation as float32 array columns: ``mean`` and
    ``variance`` (the diagonal of the covariance) for probabilistic models, ``vector`` for
    deterministic ones; the same arrays as ``model.encode``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        The sentences, one a row.
    column : str, default "text"
        The string column to encode.
    model : str, os.PathLike, SentenceModel or None
        A model directory or a loaded model; None for the shipped model.
    batch_size : int, default 256
        Sentences per batch in each worker.

    Returns
    -------
    pyspark.sql.DataFrame
        ``df`` with the array columns (null for a null or blank text).

    Examples
    --------
    >>> spark = local_session(cores=1)
    >>> df = spark.createDataFrame([("A man plays a guitar.",)], ["text"])
    >>> row = add_encoding(df).collect()[0]
    >>> len(row.mean), len(row.variance), min(row.variance) > 0
    (50, 50, True)
    >>> spark.stop()
    """
    shipped, local = _ship(df, model)
    names = ["mean", "variance"] if local.probabilistic else ["vector"]
    _check_column(df, column, names)
    vector = T.ArrayType(T.FloatType(), containsNull=False)

    @F.pandas_udf(T.StructType([T.StructField(n, vector) for n in names]))
    def encode(texts: pd.Series) -> pd.DataFrame:
        items = _texts(texts)
        present = with_sentence(items)
        columns = {n: pd.Series([None] * len(items), dtype=object) for n in names}
        if present:
            arrays = _executor_model(shipped).encode([items[i] for i in present], batch_size)
            for n, values in zip(names, arrays if isinstance(arrays, tuple) else (arrays,)):
                columns[n] = pd.Series(_scatter(values, present, len(items)), dtype=object)
        return pd.DataFrame(columns)

    return _with_fields(df, encode(F.col(_quoted(column))))


LOCAL_SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # few cores: one garbage-collector thread and the quick JIT compiler leave the cores to
    # the Python workers (about half the JVM's CPU time on the 1M-sentence benchmark)
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
    # input splits of 4 MB: many small tasks, so a core that gets the long sentences does
    # not leave the other idle at the end
    "spark.sql.files.maxPartitionBytes": "4m",
}


def local_session(cores: int = 2, **config: str) -> SparkSession:
    """A SparkSession on this machine (``local[cores]``) whose Python workers run this
    interpreter, with :data:`LOCAL_SETTINGS` (``config`` adds or overrides settings): for
    trying probsent.spark out, tests and benchmarks. The JVM options apply only when the
    session's JVM starts here (the first session of the process)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.master(f"local[{cores}]").appName("probsent")
    for key, value in {**LOCAL_SETTINGS, "spark.sql.shuffle.partitions": str(cores), **config}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


class Shipped(NamedTuple):
    """A model directory sent to the executors: the archive's file name (the directory the
    executors unpack it into, found with ``SparkFiles.get``), the model files it holds and
    their SHA-256 (:func:`probsent.model_directory.files_digest`)."""
    archive: str
    files: tuple[str, ...]
    sha256: str


def _ship(df: DataFrame, model: Model) -> tuple[Shipped | None, SentenceModel]:
    """(what the executors find the model by, None for the shipped model; the model the driver
    reads its type and calibration from). The files are read once, and the executors get those
    bytes: for a directory, the driver's model is read from the same bytes (a copy in the
    private staging directory, named by their SHA-256), never from a model cached earlier; a
    loaded model must still be what its directory holds (a one-line error otherwise)."""
    if model is None:
        return None, cached_model(None)
    given = not isinstance(model, (str, os.PathLike))
    if given and model.path is None:
        raise ProbsentError("probsent.spark needs a model saved in a directory (model.save(DIR))")
    directory = model.path if given else resolve_model_dir(model)
    contents, identity = read_consistently(directory, lambda: read_model_files(directory))
    loaded = scoring_engine(model).source_files if given else None
    if loaded is not None and loaded != identity:
        raise ProbsentError(f"{directory}: the model directory changed after this model was loaded; load it "
                            f"again (the executors would read the directory's new files)")
    sha256 = files_digest(contents)
    shipped = Shipped(f"probsent-model-{sha256[:16]}.zip", tuple(contents), sha256)  # two runs' best/ differ
    with _SHIPPING:  # one session, several threads: each archive made and sent once
        local = model if given else cached_model(_snapshot(shipped, contents))
        session = df.sparkSession
        key = (_session_key(session), shipped.archive)
        if key not in _SENT:
            _send(session, _archive(shipped, contents))
            _SENT.add(key)
    return shipped, local


_SENT: set[tuple[str, str]] = set()  # (session, archive) pairs this process has sent
_STAGING: list[Path] = []  # this process's private staging directory, once made
_SHIPPING = threading.Lock()


def _staging() -> Path:
    """A directory only this user can enter, made fresh by this process (``mkdtemp``: mode
    0700, a new name) and removed when it exits; never a path someone else could have made."""
    if _STAGING:
        try:
            info = os.lstat(_STAGING[0])
        except OSError:  # removed (a cleaner of the temporary directory): make another
            info = None
        if info and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
            return _STAGING[0]
        _STAGING.clear()
    path = Path(tempfile.mkdtemp(prefix="probsent-spark-"))
    atexit.register(shutil.rmtree, path, True)
    _STAGING.append(path)
    return path


def _staged(path: Path, write: Callable[[Path], None]) -> Path:
    """``path`` in the staging directory, written by ``write`` at a temporary name of its own
    and renamed into place, unless it is there already (its name is its content's hash)."""
    if not path.exists():
        partial = Path(tempfile.mkdtemp(prefix=path.name + ".", suffix=".partial", dir=path.parent))
        try:
            write(partial / path.name)
            os.replace(partial / path.name, path)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return path


def _archive(shipped: Shipped, contents: dict[str, bytes]) -> Path:
    """The zip archive of ``contents`` in the private staging directory, written from the
    bytes that were hashed (so the archive holds what the SHA-256 says)."""
    def write(path: Path) -> None:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in contents.items():
                archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                                 compress_type=zipfile.ZIP_DEFLATED)

    return _staged(_staging() / shipped.archive, write)


def _snapshot(shipped: Shipped, contents: dict[str, bytes]) -> Path:
    """The model directory of ``contents`` in the private staging directory: what the driver
    reads, the same bytes as the archive the executors unpack."""
    def write(path: Path) -> None:
        path.mkdir()
        for name, data in contents.items():
            (path / name).write_bytes(data)

    return _staged(_staging() / shipped.archive.removesuffix(".zip"), write)


def _is_connect(session: SparkSession) -> bool:
    return type(session).__module__.startswith("pyspark.sql.connect")


def _session_key(session: SparkSession) -> str:
    if _is_connect(session):
        return f"connect:{getattr(session, 'session_id', id(session))}"  # session_id: pyspark 4
    return "classic:" + session.sparkContext.applicationId


def _send(session: SparkSession, archive: Path) -> None:
    """Ship ``archive`` to the executors, which unpack it under its file name. Spark Connect
    (3.4+) has only the artifact API; Spark Classic (3.1+) unpacks an archive added to the
    SparkContext on every deployment (a local directory, as addFile sends it, works only in
    local mode). Adding the same archive again is harmless: its name is its content's hash."""
    try:
        if _is_connect(session):
            session.addArtifacts(str(archive), archive=True)
        else:
            session.sparkContext.addArchive(str(archive))
    except Exception as error:  # pyspark's errors have no common class across versions and modes
        if "DUPLICATED_ARTIFACT" not in str(error):
            raise


_VERIFIED: set[tuple[str, str]] = set()  # on an executor: (directory, SHA-256) pairs checked


def _executor_directory(shipped: Shipped) -> str:
    """On an executor: the directory Spark unpacked ``shipped`` into, once its files have
    been checked against the driver's SHA-256 (once per process and directory)."""
    directory = Path(SparkFiles.get(shipped.archive))
    if (str(directory), shipped.sha256) not in _VERIFIED:
        contents = {}
        for name in shipped.files:
            path = directory / name
            try:
                regular = stat.S_ISREG(os.lstat(path).st_mode)
            except OSError:
                regular = False
            if not regular:
                raise ProbsentError(f"the model sent to this executor has no regular file {name} in {directory}")
            contents[name] = path.read_bytes()
        if files_digest(contents) != shipped.sha256:
            raise ProbsentError(f"the model files in {directory} do not match the SHA-256 of the model the "
                                f"driver sent ({shipped.sha256[:16]}...); refusing to score with them")
        _VERIFIED.add((str(directory), shipped.sha256))
    return str(directory)


def _executor_model(shipped: Shipped | None) -> SentenceModel:
    """On an executor: the shipped model, or the directory sent by :func:`_ship` (checked by
    :func:`_executor_directory`), loaded once per process (:func:`cached_model`).
    Torch and the compiled kernels use the task's cores (``spark.task.cpus``, default 1): Spark
    already runs one Python worker per task slot, so more threads would only compete for the
    same cores."""
    model = cached_model(None if shipped is None else _executor_directory(shipped))
    context = TaskContext.get()
    limit_threads(context.cpus() if context is not None else 1)
    return model


def _texts(series: pd.Series) -> list[str | None]:
    return [text if isinstance(text, str) else None for text in series.tolist()]


def _scatter(values: np.ndarray, rows: list[int], count: int) -> list[np.ndarray | None]:
    out: list[np.ndarray | None] = [None] * count
    for value, row in zip(values, rows):
        out[row] = value
    return out


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _check_column(df: DataFrame, column: str, adding: list[str]) -> None:
    fields = {f.name: f for f in df.schema.fields}
    if column not in fields:
        raise ProbsentError(f"the DataFrame has no column {column!r} (columns: {', '.join(fields)})")
    if not isinstance(fields[column].dataType, T.StringType):
        raise ProbsentError(f"column {column!r} holds {fields[column].dataType.simpleString()}, not strings")
    for name in adding:
        if name in fields:
            raise ProbsentError(f"the DataFrame already has a column {name!r}; rename or drop it first")


def _with_fields(df: DataFrame, struct: Column) -> DataFrame:
    """``df``'s columns, then the fields of ``struct`` (computed once per row, in a column whose
    name is none of ``df``'s)."""
    hidden = next(name for name in (f"__probsent__{k or ''}" for k in range(len(df.columns) + 1))
                  if name not in df.columns)
    return df.withColumn(hidden, struct).select(*[F.col(_quoted(c)) for c in df.columns], f"{hidden}.*")
