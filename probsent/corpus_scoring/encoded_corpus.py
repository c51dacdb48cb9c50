"""A corpus encoded once by ``probsent encode``, searched many times by ``probsent similarity``.

``probsent encode`` records which model wrote the encodings (the SHA-256 of its model files,
:func:`probsent.corpus_scoring.resumable.model_identity`), whether it is probabilistic, its
dimension and the column holding the text:

- in a Parquet file, as the schema's metadata under ``probsent.encoding`` (JSON);
- in a ``.npy`` file, as a comment after the header's dictionary (``# probsent.encoding {...}``),
  which NumPy's reader reads past (the header is a Python literal, and a comment is no part of it).

:func:`open_encoded_corpus` reads that record back and :func:`check_encoding_model` refuses, in
one line, a search with another model than the one that wrote the encodings: its queries would
be compared with vectors of another space (a silent wrong answer). The rows then stream chunk
by chunk (:meth:`EncodedCorpus.chunks`: means, variances and texts; NaN for a row without a
sentence), so memory holds one chunk whatever the corpus's size.
"""
from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from probsent.errors import ProbsentError

if TYPE_CHECKING:
    from probsent.api import SentenceModel

__all__ = ["ENCODING_KEY", "EncodedCorpus", "check_encoding_model", "encoding_record", "npy_header",
           "open_encoded_corpus"]

ENCODING_KEY = "probsent.encoding"
MEAN, VARIANCE = "mean", "variance"
CHUNK = 8192  # rows read at a time
NPY_MAGIC = b"\x93NUMPY\x01\x00"
_RECORD = re.compile(r"#\s*" + re.escape(ENCODING_KEY) + r"\s+(\{.*\})\s*$")


def encoding_record(model: "SentenceModel", text_column: str | None) -> dict[str, Any]:
    """What an encoded file records of the model that wrote it, and where its texts are."""
    from probsent.corpus_scoring.resumable import model_identity

    return {"model_sha256": model_identity(model.path)["sha256"], "probabilistic": bool(model.probabilistic),
            "dim": int(model.get_sentence_embedding_dimension()), "text_column": text_column}


def npy_header(shape: tuple[int, ...], record: dict[str, Any] | None, size: int) -> bytes:
    """A version 1.0 ``.npy`` header of ``size`` bytes for float32 rows of ``shape``, with
    ``record`` as a comment after the dictionary."""
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple(shape)!r}, }}"
    if record is not None:
        text += f" # {ENCODING_KEY} {json.dumps(record, separators=(',', ':'))}"
    room = size - len(NPY_MAGIC) - 2 - 1  # the length field, and the closing line break
    if len(text) > room:
        raise AssertionError("the .npy header outgrew its space")
    return NPY_MAGIC + struct.pack("<H", size - len(NPY_MAGIC) - 2) + (text.ljust(room) + "\n").encode("latin1")


@dataclass
class EncodedCorpus:
    """An encoded file: its path, kind (``npy`` or ``parquet``), the record of its writer and its rows."""

    path: str
    kind: str
    record: dict[str, Any]
    rows: int
    text_column: str | None = None

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray | None, list[str | None] | None]]:
        """(means, variances or None, texts or None) of CHUNK rows at a time, float32 [n, dim];
        NaN in a row without a sentence."""
        if self.kind == "npy":
            yield from self._npy_chunks()
        else:
            yield from self._parquet_chunks()

    def _npy_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray | None, None]]:
        array = np.load(self.path, mmap_mode="r")  # read a chunk at a time
        for start in range(0, len(array), CHUNK):
            block = np.asarray(array[start:start + CHUNK], dtype=np.float32)
            if block.ndim == 3:
                yield block[:, 0], block[:, 1], None
            else:
                yield block, None, None

    def _parquet_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray | None, list[str | None] | None]]:
        import pyarrow.parquet as pq

        names = pq.read_schema(self.path).names
        wanted = [name for name in (MEAN, VARIANCE, self.text_column) if name is not None and name in names]
        with pq.ParquetFile(self.path, page_checksum_verification=True) as parquet:
            for batch in parquet.iter_batches(batch_size=CHUNK, columns=wanted):
                mean = _float_rows(batch.column(MEAN), self.record["dim"])
                variance = _float_rows(batch.column(VARIANCE), self.record["dim"]) if VARIANCE in wanted else None
                texts = batch.column(self.text_column).to_pylist() if self.text_column in wanted else None
                yield mean, variance, texts


def _float_rows(column: Any, dim: int) -> np.ndarray:
    """A fixed-size list column as float32 [n, dim], NaN where the row is null."""
    values = column.values.slice(column.offset * dim, len(column) * dim)
    rows = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(column), dim)
    if column.null_count:
        rows = rows.copy()
        rows[np.asarray(column.is_null().to_numpy(zero_copy_only=False))] = np.nan
    return rows


def open_encoded_corpus(path: str, column: str | None = None) -> EncodedCorpus | None:
    """The encoded corpus at ``path`` (a ``.npy`` file, or a Parquet file whose metadata holds
    probsent's record), or None for a corpus of sentences; a one-line error for a ``.npy`` file
    without the record (which model's vectors they are cannot be told) or a damaged one."""
    if str(path).lower().endswith(".npy"):
        return _open_npy(path)
    if Path(path).is_file() and str(path).lower().endswith((".parquet", ".pq")):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except (OSError, pa.ArrowException):
            return None  # the corpus reader says what is wrong with it
        with parquet:
            metadata = parquet.schema_arrow.metadata or {}
            rows = parquet.metadata.num_rows
        raw = metadata.get(ENCODING_KEY.encode())
        if raw is None:
            return None
        record = _checked_record(path, raw.decode("utf-8", "replace"))
        text_column = column or record.get("text_column")
        if column is not None and column not in parquet.schema_arrow.names:
            raise ProbsentError(f"{path}: no column {column!r} (columns: {', '.join(parquet.schema_arrow.names)})")
        return EncodedCorpus(path, "parquet", record, rows, text_column)
    return None


def _open_npy(path: str) -> EncodedCorpus:
    try:
        with open(path, "rb") as handle:
            version = np.lib.format.read_magic(handle)
            start = handle.tell()
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f".npy version {version}")
            shape, _, dtype = read_header(handle)
            end = handle.tell()
            handle.seek(start)
            header = handle.read(end - start).decode("latin1")
    except FileNotFoundError:
        raise ProbsentError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ProbsentError(f"{path}: not a readable .npy file ({str(exc).splitlines()[0] if str(exc) else exc})") from None
    found = _RECORD.search(header.strip())
    if found is None:
        raise ProbsentError(f"{path}: holds no record of the model that encoded it (only probsent encode's "
                            f".npy files do); encode the corpus with probsent encode, or search its sentences")
    record = _checked_record(path, found.group(1))
    expected = (2, record["dim"]) if record["probabilistic"] else (record["dim"],)
    if dtype != np.float32 or len(shape) != 1 + len(expected) or tuple(shape[1:]) != expected:
        raise ProbsentError(f"{path}: holds {dtype} {tuple(shape)}, not the float32 [n, {', '.join(map(str, expected))}] "
                            f"its record says")
    return EncodedCorpus(path, "npy", record, int(shape[0]))


def _checked_record(path: str, text: str) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    if not (isinstance(record, dict) and isinstance(record.get("model_sha256"), str)
            and isinstance(record.get("probabilistic"), bool) and isinstance(record.get("dim"), int)
            and record["dim"] > 0):
        raise ProbsentError(f"{path}: its record of the encoding model is damaged; encode the corpus again")
    return record


def check_encoding_model(corpus: EncodedCorpus, model: "SentenceModel") -> None:
    """A one-line error unless ``model`` is the one that wrote ``corpus`` (the SHA-256 of its model files)."""
    from probsent.corpus_scoring.resumable import model_identity

    ours = model_identity(model.path)["sha256"]
    theirs = corpus.record["model_sha256"]
    if ours != theirs:
        raise ProbsentError(f"{corpus.path}: encoded by another model (model files SHA-256 {theirs[:12]}...) than "
                            f"--model's ({ours[:12]}...); its vectors cannot be compared with this model's: "
                            f"search with that model, or encode the corpus again with this one")
