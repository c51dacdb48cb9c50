"""Encoding a corpus chunk by chunk with constant memory: the engine of ``probsent encode``.

Chunks come from :mod:`probsent.corpus_scoring.formats` (text lines, JSON Lines, Parquet), are
encoded by :meth:`probsent.api.SentenceModel.encode` (WLO, Wordavg and Wordsum through the
compiled tokenizer and encoder, on all cores; no torch) and go, in input order, to

- a Parquet file: the input's columns (one-sentence-a-line input: ``sentence``), then ``mean``
  and, for a probabilistic model, ``variance``, each a fixed-size list of ``dim`` float32; or
- a ``.npy`` file: float32 [n, 2, dim] (``[:, 0]`` the means, ``[:, 1]`` the variances) for a
  probabilistic model, [n, dim] for a deterministic one.

A row without a sentence (null, or only whitespace) is null in Parquet and NaN in ``.npy``. The
output appears only once every row is written (atomically, as scoring's outputs).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterable, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from probsent.corpus_scoring.formats import Chunk, Corpus, file_format, text_schema
from probsent.corpus_scoring.workers import with_sentence
from probsent.errors import ProbsentError
from probsent.files.user_output import writing_output

if TYPE_CHECKING:
    from probsent.api import SentenceModel

__all__ = ["MEAN", "VARIANCE", "encode_corpus", "encoding_format"]

MEAN, VARIANCE = "mean", "variance"


def encoding_format(output: str) -> str:
    """``parquet`` or ``npy`` by the output's suffix; a one-line error for any other."""
    if str(output).lower().endswith(".npy"):
        return "npy"
    if file_format(output) == "parquet" and not Path(output).is_dir():
        return "parquet"
    raise ProbsentError(f"{output}: probsent encode writes .parquet or .npy")


def chunk_encodings(model: "SentenceModel",
                    texts: list[str | None]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(means, variances or None, present) of a chunk's texts, float32 [n, dim]; rows without a
    sentence (``present`` False) are NaN."""
    texts = list(texts)
    present = np.zeros(len(texts), dtype=bool)
    present[with_sentence(texts)] = True
    encoded = model.encode([t if ok else None for t, ok in zip(texts, present)])
    mean, variance = encoded if model.probabilistic else (encoded, None)
    mean = np.asarray(mean, dtype=np.float32).reshape(len(texts), -1)
    mean[~present] = np.nan
    if variance is not None:
        variance = np.asarray(variance, dtype=np.float32).reshape(len(texts), -1)
    return mean, variance, present


class EncodingSink(Protocol):
    def write(self, chunk: Chunk, mean: np.ndarray, variance: np.ndarray | None, present: np.ndarray) -> None: ...

    def close(self) -> None: ...


class ParquetEncodings:
    """The input's columns, then ``mean`` (and ``variance``) as fixed-size lists of float32."""

    def __init__(self, handle: BinaryIO, schema: pa.Schema | None, name: str) -> None:
        self.handle, self.schema, self.name = handle, schema, name
        self.writer: pq.ParquetWriter | None = None

    def write(self, chunk: Chunk, mean: np.ndarray, variance: np.ndarray | None, present: np.ndarray) -> None:
        table = chunk.table(self.schema if self.writer is not None else None)
        mask = pa.array(~present)
        for name, values in ((MEAN, mean), (VARIANCE, variance)):
            if values is not None:
                flat = pa.array(np.ascontiguousarray(values).ravel(), pa.float32())
                column = pa.FixedSizeListArray.from_arrays(flat, values.shape[1], mask=mask)
                table = table.append_column(name, column)
        try:
            if self.writer is None:
                self.schema = table.schema.remove_metadata()
                for name in (MEAN, VARIANCE):
                    if name in self.schema.names:
                        self.schema = self.schema.remove(self.schema.get_field_index(name))
                plain = {name: "none" for name in (MEAN, VARIANCE) if name in table.schema.names}  # floats: no gain
                self.writer = pq.ParquetWriter(self.handle, table.schema, write_page_checksum=True,
                                               use_dictionary=[n for n in table.schema.names if n not in plain],
                                               compression={name: plain.get(name, "snappy")
                                                            for name in table.schema.names})
            self.writer.write_table(table)
        except pa.ArrowException as exc:
            raise ProbsentError(f"{self.name}: cannot write these columns as Parquet "
                                f"({str(exc).splitlines()[0]})") from None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        else:  # no rows: the input's columns only
            pq.write_table((self.schema or text_schema()).empty_table(), self.handle)


class NpyEncodings:
    """One float32 array: [n, 2, dim] (means, variances) or [n, dim]; the header, which holds n,
    is written last over a space kept for it."""

    HEADER = 128  # bytes kept for the .npy header (the format pads it to a multiple of 64)

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.rows = 0
        self.row_shape: tuple[int, ...] | None = None
        handle.write(b"\0" * self.HEADER)

    def write(self, chunk: Chunk, mean: np.ndarray, variance: np.ndarray | None, present: np.ndarray) -> None:
        rows = mean if variance is None else np.stack([mean, np.where(present[:, None], variance, np.nan)], axis=1)
        rows = np.ascontiguousarray(rows, dtype="<f4")
        self.row_shape = rows.shape[1:]
        self.handle.write(rows.tobytes())
        self.rows += len(rows)

    def close(self) -> None:
        header = {"descr": "<f4", "fortran_order": False, "shape": (self.rows, *(self.row_shape or (0,)))}
        self.handle.seek(0)
        np.lib.format.write_array_header_1_0(self.handle, header)
        if self.handle.tell() != self.HEADER:
            raise AssertionError("the .npy header outgrew its space")


def encode_corpus(model: "SentenceModel", corpus: Corpus, output: str, force: bool = False,
                  progress: bool = False) -> int:
    """Write the encodings of every row of ``corpus`` to ``output`` (see the module's docstring);
    returns the rows written."""
    kind = encoding_format(output)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" sentences", desc="encoding")
    rows = 0
    try:
        with writing_output(output, force) as path, open(path, "wb") as handle:
            sink: EncodingSink = (NpyEncodings(handle) if kind == "npy" else
                                  ParquetEncodings(handle, text_schema() if corpus.kind == "text" else corpus.schema,
                                                   output))
            rows = _write_all(model, corpus.chunks, sink, bar)
            sink.close()
    finally:
        if bar is not None:
            bar.close()
    return rows


def _write_all(model: "SentenceModel", chunks: Iterable[Chunk], sink: EncodingSink, bar) -> int:
    rows = 0
    for chunk in chunks:
        sink.write(chunk, *chunk_encodings(model, chunk.texts))
        rows += len(chunk.texts)
        if bar is not None:
            bar.update(len(chunk.texts))
    return rows
