"""Encoding a corpus chunk by chunk with constant memory: the engine of ``probsent encode``.

Chunks come from :mod:`probsent.corpus_scoring.formats` (text lines, JSON Lines, Parquet), are
encoded as :meth:`probsent.api.SentenceModel.encode` encodes them (:func:`chunk_encodings`: the
texts as one UTF-8 buffer through the compiled tokenizer and encoder; no torch for WLO, Wordavg
and Wordsum), here or in worker processes (:func:`probsent.corpus_scoring.workers.chunk_results`),
and go, in input order, to

- a Parquet file: the input's columns (one-sentence-a-line input: ``sentence``), then ``mean``
  and, for a probabilistic model, ``variance``, each a fixed-size list of ``dim`` float32; or
- a ``.npy`` file: float32 [n, 2, dim] (``[:, 0]`` the means, ``[:, 1]`` the variances) for a
  probabilistic model, [n, dim] for a deterministic one.

A row without a sentence (null, or no token: empty or only whitespace) is null in Parquet and NaN
in ``.npy``. The output appears only once every row is written (atomically, as scoring's
outputs); an interrupted run over an input file leaves a partial output that the same command
continues (:mod:`probsent.corpus_scoring.resumable`).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Iterator, Protocol, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from probsent.corpus_scoring.encoded_corpus import ENCODING_KEY, encoding_record, npy_header
from probsent.corpus_scoring.formats import SENTENCE, Chunk, Corpus, file_format, text_schema
from probsent.corpus_scoring.resumable import Partial, kept_files, megabytes, skip_rows
from probsent.corpus_scoring.workers import chunk_results
from probsent.errors import ProbsentError
from probsent.files.atomic_writes import remove_quietly
from probsent.inference.arrays import saturated_variance
from probsent.files.user_output import cannot_write, writing_output
from probsent.signals import signals_held
from probsent.text.utf8_texts import Utf8Texts

if TYPE_CHECKING:
    from probsent.api import SentenceModel

__all__ = ["MEAN", "VARIANCE", "Encoded", "encode_corpus", "encoding_format", "row_shape"]

MEAN, VARIANCE = "mean", "variance"
ROW_GROUP = 1 << 16  # rows per Parquet row group (a few chunks: fewer, larger pages)


def encoding_format(output: str) -> str:
    """``parquet`` or ``npy`` by the output's suffix; a one-line error for any other."""
    if str(output).lower().endswith(".npy"):
        return "npy"
    if file_format(output) == "parquet" and not Path(output).is_dir():
        return "parquet"
    raise ProbsentError(f"{output}: probsent encode writes .parquet or .npy")


def row_shape(model: "SentenceModel") -> tuple[int, ...]:
    """The shape of one row of the ``.npy`` output: (2, dim) or (dim,)."""
    dim = model.get_sentence_embedding_dimension()
    return (2, dim) if model.probabilistic else (dim,)


def chunk_encodings(model: "SentenceModel", texts: Sequence[str | None],
                    batch_size: int = 256) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(means, variances or None, present) of a chunk's texts, float32 [n, dim], as
    ``model.encode`` gives them; rows without a sentence (null, or no token: empty or only
    whitespace) have ``present`` False and NaN.

    The texts go to the compiled tokenizer as one UTF-8 buffer (a Parquet column's bytes as they
    are, no str per row) and from there to the model's encoder: ``model.encode``'s steps without
    its per-item checks, which a corpus's reader has made."""
    utf8 = texts if isinstance(texts, Utf8Texts) else Utf8Texts.from_strings(list(texts))
    from probsent.api import scoring_engine

    engine = scoring_engine(model)
    ids, offsets = engine.token_ids(utf8)
    present = np.diff(offsets) > 0
    encoded = engine.encode_ids(ids, offsets, batch_size)
    mean = encoded.mean
    mean[~present] = np.nan
    variance = saturated_variance(encoded.logvar) if model.probabilistic else None
    if variance is not None:
        variance[~present] = np.nan
    return mean, variance, present


class EncodingSink(Protocol):
    rows: int  # the rows the file holds

    def write(self, chunk: Chunk, mean: np.ndarray, variance: np.ndarray | None, present: np.ndarray) -> None: ...

    def close(self, complete: bool = True) -> None: ...


def _fixed_size_lists(values: np.ndarray, missing: pa.Array | None) -> pa.Array:
    """[n, dim] float32 as a fixed-size list array over the same buffer (null where ``missing``)."""
    flat = pa.array(np.ascontiguousarray(values, dtype=np.float32).reshape(-1), pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, values.shape[1], mask=missing)


class ParquetEncodings:
    """The input's columns, then ``mean`` (and ``variance``) as fixed-size lists of float32, in
    row groups of exactly ROW_GROUP rows (the last one fewer). A run that stops writes only its
    whole row groups, so that the run continuing it (``resume``: the partial file, whose row groups
    are copied first; an unreadable one, from a killed run, counts as empty) writes the same file,
    byte for byte, as a run that never stopped."""

    def __init__(self, handle: BinaryIO, schema: pa.Schema | None, name: str, resume: Path | None = None,
                 record: dict[str, Any] | None = None) -> None:
        self.handle, self.schema, self.name = handle, schema, name
        self.metadata = None if record is None else {ENCODING_KEY: json.dumps(record, separators=(",", ":"))}
        self.writer: pq.ParquetWriter | None = None
        self.pending: list[pa.Table] = []
        self.buffered = 0
        self.seen = False  # a chunk's columns fixed the input's schema
        self.rows = 0
        self.restarted = False
        self.broken = False  # a write failed (a full disk): the file is not to be finished
        self.finished = False  # closed with its footer: a whole Parquet file
        if resume is not None:
            self._copy(resume)

    def _copy(self, path: Path) -> None:
        try:
            earlier = pq.ParquetFile(path)
        except (OSError, pa.ArrowException):
            self.restarted = True
            return
        with earlier:
            schema = earlier.schema_arrow
            for name in (MEAN, VARIANCE):  # the lists' items as a fresh run names them ("item", not "element")
                if name in schema.names:
                    index = schema.get_field_index(name)
                    schema = schema.set(index, schema.field(index).with_type(
                        pa.list_(pa.float32(), schema.field(index).type.list_size)))
            for group in range(earlier.num_row_groups):
                self._write(earlier.read_row_group(group).cast(schema))
        self.schema, self.seen = self._input_schema(schema), True

    @staticmethod
    def _input_schema(schema: pa.Schema) -> pa.Schema:
        schema = schema.remove_metadata()
        for name in (MEAN, VARIANCE):
            if name in schema.names:
                schema = schema.remove(schema.get_field_index(name))
        return schema

    def write(self, chunk: Chunk, mean: np.ndarray, variance: np.ndarray | None, present: np.ndarray) -> None:
        table = chunk.table(self.schema if self.seen else None)
        if not self.seen:
            self.schema, self.seen = self._input_schema(table.schema), True
        missing = None if present.all() else pa.array(~present)
        for name, values in ((MEAN, mean), (VARIANCE, variance)):
            if values is not None:
                table = table.append_column(name, _fixed_size_lists(values, missing))
        self.pending.append(table)
        self.buffered += len(table)
        while self.buffered >= ROW_GROUP:
            self._emit(ROW_GROUP)

    def _emit(self, count: int) -> None:
        """Write the first ``count`` buffered rows as one row group."""
        buffered = pa.concat_tables(self.pending) if len(self.pending) > 1 else self.pending[0]
        rest = buffered.slice(count)
        self.pending, self.buffered = ([rest] if len(rest) else []), len(rest)
        try:
            self._write(buffered.slice(0, count))
        except pa.ArrowException as exc:
            raise ProbsentError(f"{self.name}: cannot write these columns as Parquet "
                                f"({str(exc).splitlines()[0]})") from None

    def _write(self, table: pa.Table) -> None:
        table = table.combine_chunks()  # the same pages however the rows came (fresh or copied)
        if self.writer is None:
            floats = [name for name in (MEAN, VARIANCE) if name in table.schema.names]  # no gain from
            others = [n for n in table.schema.names if n not in floats]  # dictionaries, compression, statistics
            self.writer = pq.ParquetWriter(self.handle, table.schema.with_metadata(self.metadata),
                                           write_page_checksum=True,
                                           use_dictionary=others, write_statistics=others,
                                           compression={name: "none" if name in floats else "snappy"
                                                        for name in table.schema.names})
        try:
            self.writer.write_table(table, row_group_size=max(len(table), 1))
        except BaseException:
            self.broken = True  # a row group may be cut in two: no footer may describe it
            raise
        self.rows += len(table)

    def close(self, complete: bool = True) -> None:
        """Finish the file: with its last rows when ``complete``, else (a run that stops) with its
        whole row groups only."""
        if self.broken:  # a file cut short: closed without a footer, and never used (see encode_corpus)
            if self.writer is not None:
                try:
                    self.writer.close()
                except (OSError, pa.ArrowException):
                    pass
            return
        if complete and self.buffered:
            self._emit(self.buffered)
        if self.writer is not None:
            self.writer.close()
        else:  # no rows: the input's columns only
            pq.write_table((self.schema or text_schema()).empty_table().replace_schema_metadata(self.metadata),
                           self.handle)
        self.finished = True


class NpyEncodings:
    """One float32 array: [n, 2, dim] (means, variances) or [n, dim] (``shape``: one row's);
    the header, which holds n, is written last over a space kept for it. ``handle`` may hold
    the rows of an earlier run (a partial file): its whole rows are kept and followed."""

    HEADER = 320  # bytes kept for the .npy header, the record of its model included (a multiple of 64)

    def __init__(self, handle: BinaryIO, shape: tuple[int, ...], record: dict[str, Any] | None = None) -> None:
        self.handle, self.row_shape, self.record = handle, shape, record
        self.row_bytes = 4 * int(np.prod(shape))
        size = handle.seek(0, os.SEEK_END)
        self.rows = max(0, size - self.HEADER) // self.row_bytes
        self.restarted = False
        handle.truncate(self.HEADER + self.rows * self.row_bytes)
        handle.seek(0)
        handle.write(b"\0" * self.HEADER)
        handle.seek(0, os.SEEK_END)

    def write(self, chunk: Chunk, mean: np.ndarray, variance: np.ndarray | None, present: np.ndarray) -> None:
        rows = mean if variance is None else np.stack([mean, variance], axis=1)
        self.handle.write(np.ascontiguousarray(rows, dtype="<f4").tobytes())
        self.rows += len(rows)

    def close(self, complete: bool = True) -> None:
        """Write the header, with the record of the model (every row written is whole, ``complete`` or not)."""
        self.handle.seek(0)
        self.handle.write(npy_header((self.rows, *self.row_shape), self.record, self.HEADER))


@dataclass
class Encoded:
    """What an encoding run wrote: all the output's rows, how many of them an earlier, interrupted
    run had written, and whether such a run's output had to be started over (a killed run's
    Parquet file, which has no footer)."""

    rows: int = 0
    resumed: int = 0
    restarted: bool = False


def encode_corpus(model: "SentenceModel", corpus: Corpus, output: str, force: bool = False,
                  progress: bool = False, workers: int = 1,
                  identity: dict[str, Any] | None = None, column: str | None = None) -> Encoded:
    """Write the encodings of every row of ``corpus`` to ``output`` (see the module's docstring)
    with ``workers`` processes. With ``identity`` (what names this run: input, model, output;
    see :mod:`probsent.corpus_scoring.resumable`) the rows go to a partial file first, which an
    interrupted run leaves and the next run with the same identity continues. The file records
    the model that wrote it and its text column (``column``, default ``text``; ``sentence`` for
    one sentence a line), which ``probsent similarity`` reads
    (:mod:`probsent.corpus_scoring.encoded_corpus`)."""
    kind = encoding_format(output)
    schema = text_schema() if corpus.kind == "text" else corpus.schema
    record = None
    if model.path is not None:
        text_column = None if kind == "npy" else SENTENCE if corpus.kind == "text" else (column or "text")
        record = encoding_record(model, text_column)  # (a .npy file holds no texts)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(unit=" sentences", desc="encoding")
    done = Encoded()
    try:
        with writing_output(output, force) as path:
            partial = Partial(output, {**identity, "output": kind}) if identity is not None else None
            resuming = partial is not None and partial.claim(force)
            with _saying_what_is_kept(partial, output):
                done.rows = _encode_into(model, corpus, partial.data if partial is not None else path, kind,
                                         partial, resuming, schema, output, workers, bar, done, record)
            if partial is not None:
                partial.finish(path)
    finally:
        if bar is not None:
            bar.close()
    return done


def _encode_into(model: "SentenceModel", corpus: Corpus, target: Path, kind: str, partial: Partial | None,
                 resuming: bool, schema: pa.Schema | None, output: str, workers: int, bar, done: Encoded,
                 record: dict[str, Any] | None) -> int:
    """Write the encodings into ``target`` (continuing its rows where ``resuming``); the rows it holds."""
    if kind == "npy":
        with open(target, "r+b" if resuming else "wb") as handle:
            sink: EncodingSink = NpyEncodings(handle, row_shape(model), record)
            done.resumed = sink.rows
            _write_all(model, skip_rows(corpus.chunks, sink.rows), sink, workers, bar)
        return sink.rows
    # a partial Parquet file is copied into the next one (a writer cannot append)
    into = partial.following if partial is not None else target
    if resuming:
        check_space_to_continue(partial, output)
    parquet, flushed = None, False
    try:
        with open(into, "wb") as handle:
            try:
                parquet = ParquetEncodings(handle, schema, output, resume=target if resuming else None, record=record)
                done.resumed, done.restarted = parquet.rows, parquet.restarted
                _write_all(model, skip_rows(corpus.chunks, parquet.rows), parquet, workers, bar)
            finally:
                handle.flush()  # a full disk may show only here, in the buffer's last bytes
                flushed = True
    finally:
        if into != target:  # a whole file (its footer written and flushed) replaces the partial one;
            if flushed and parquet is not None and parquet.finished:  # one cut short (a full disk)
                os.replace(into, target)  # is removed, and the partial one stays as it was
            else:
                remove_quietly(into)
    return parquet.rows


@contextmanager
def _saying_what_is_kept(partial: Partial | None, output: str) -> Iterator[None]:
    """Where the block fails or is stopped, say which hidden partial files it leaves beside
    ``output`` for the next run, and their size: in the one-line error (an error writing the
    output, such as a full disk, becomes one naming ``output``), or in a line of its own on a
    stop (Ctrl-C, SIGTERM)."""
    if partial is None:
        yield
        return
    try:
        yield
    except ProbsentError as exc:
        kept = kept_files(output)
        if kept is None:
            raise
        raise ProbsentError(f"{exc}; {kept}") from None
    except OSError as exc:
        kept = kept_files(output)
        about_output = exc.filename is None or Path(str(exc.filename)).name.startswith(f".{Path(output).name}.")
        if kept is None or not about_output:
            raise
        raise ProbsentError(f"{cannot_write(output, exc)}; {kept}") from None
    except KeyboardInterrupt:
        kept = kept_files(output)
        if kept is not None:
            print(f"probsent: {kept}", file=sys.stderr)
        raise


def check_space_to_continue(partial: Partial, output: str) -> None:
    """A one-line error, before any work, where the disk beside ``output`` has less free space than
    the partial Parquet file that continuing it copies first (a Parquet writer cannot append)."""
    needed = partial.data.stat().st_size
    free = shutil.disk_usage(partial.data.parent).free
    if free < needed:
        raise ProbsentError(f"{output}: continuing copies the rows already written ({partial.data.name}, "
                            f"{megabytes(needed)}) and the disk beside it has {megabytes(free)} free; free some "
                            f"space and rerun, or remove {partial.data.name} and {partial.record.name} to start over")


def _write_all(model: "SentenceModel", chunks: Iterable[Chunk], sink: EncodingSink, workers: int, bar) -> None:
    """Encode ``chunks`` into ``sink`` and close it, also when the run stops (an error, a signal):
    a partial file then holds every row written, readable by the next run."""
    complete = False
    try:
        for chunk, encoded in chunk_results(model, chunk_encodings, ((c, c.texts) for c in chunks), workers):
            with signals_held():  # a stop never cuts a row group in two (the writer calls back into Python)
                sink.write(chunk, *encoded)
            if bar is not None:
                bar.update(len(chunk.texts))
        complete = True
    finally:
        with signals_held():
            sink.close(complete)
