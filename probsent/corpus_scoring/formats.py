"""Corpora in and out of ``probsent specificity``: text lines, JSON Lines and Parquet.

The format comes from the file name: ``.parquet`` / ``.pq`` is Parquet, ``.jsonl`` /
``.ndjson`` is JSON Lines, a directory is a Parquet dataset (Spark's output: its part files at
any depth, read in name order as one table: :mod:`probsent.files.dataset_directory`, which
``probsent train --data DIR`` reads too), anything else (and standard input) one sentence a line.

Reading streams chunks of rows (Parquet: record batches within row groups), so memory does
not grow with the file. A chunk keeps its rows untouched and lists the texts of the scored
column. The texts that have no sentence are None: a null, a JSON object without the field,
and a blank line all score null (``nan`` in TSV). A value that is not a string, a missing
column and a damaged file are one-line errors (:class:`ProbsentError`).

Writing keeps every input column and the row order and adds ``specificity`` (and
``probability``) as float64 columns. A file is written to a temporary beside the target and
renamed into place after its last row, so an error or an interruption leaves any existing
file as it was; an existing output is replaced only when the caller allows it. A FIFO, a
device or ``/dev/stdout`` is written to directly (:mod:`probsent.files.user_output`).

Text is cleaned on reading, before anything is written: a leading byte-order mark is dropped
(text lines and JSON Lines), and a lone surrogate in JSON (``"\ud800"``, which no UTF-8
output can hold) becomes U+FFFD.
"""
from __future__ import annotations

import base64
import importlib
import json
import math
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, time
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, Protocol, TextIO

import numpy as np

from probsent.errors import ProbsentError
from probsent.files.dataset_directory import dataset_files
from probsent.files.json_lines import MAX_JSON_DEPTH, parse_json_line  # noqa: F401 (MAX_JSON_DEPTH: this module's limit)
from probsent.files.user_output import check_output_target, writing_output
from probsent.readouts.readout_table import READOUTS
from probsent.text.utf8_texts import Utf8Texts
from probsent.files.untrusted import (MAX_LINE_BYTES, bounded_lines, iter_lines, not_regular, open_input, standard_input,
                                     without_bom)


class _OnFirstUse:
    """A module imported when first used: pyarrow takes a tenth of a second to import, and
    text in and out (one sentence from the command line) never needs it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


pa = _OnFirstUse("pyarrow")
pq = _OnFirstUse("pyarrow.parquet")
pc = _OnFirstUse("pyarrow.compute")

SCORE = "specificity"
SENTENCE = "sentence"  # the column of one-sentence-a-line input in a columnar output
CHUNK = 8192  # rows read, scored and written at a time
_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_JSON_TYPES = {bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}


def added_columns() -> tuple[str, ...]:
    """Every column scoring may add: the specificity and each read-out of
    :mod:`probsent.readouts.readout_table` (an input that has one is refused)."""
    return (SCORE, *READOUTS)


def file_format(path: str | os.PathLike[str] | None) -> str:
    """``parquet``, ``jsonl`` or ``text`` (also for None / ``-``: standard streams); a
    directory is a Parquet dataset."""
    if path is None or str(path) == "-":
        return "text"
    if Path(path).is_dir():
        return "parquet"
    return _SUFFIXES.get(Path(path).suffix.lower(), "text")


@dataclass
class Chunk:
    """Consecutive input rows and the texts of their scored column."""

    texts: list[str | None] | Utf8Texts  # Parquet: the column's bytes, no str per row
    rows: pa.RecordBatch | list[dict[str, Any]] | None = None  # None: text lines
    source: str = ""
    lines: list[int] | None = None  # JSON Lines: each row's line number, for error messages

    def dicts(self) -> list[dict[str, Any]]:
        """The rows as dictionaries (a text line is ``{"sentence": text}``)."""
        if self.rows is None:
            return [{SENTENCE: text} for text in self.texts]
        if isinstance(self.rows, pa.RecordBatch):
            return self.rows.to_pylist()
        return [dict(row) for row in self.rows]

    def table(self, schema: pa.Schema | None) -> pa.Table:
        """The rows as an Arrow table, with ``schema`` if given (the first chunk's)."""
        if self.rows is None:
            return pa.table({SENTENCE: pa.array(self.texts, pa.string())})
        if isinstance(self.rows, pa.RecordBatch):
            return pa.Table.from_batches([self.rows])
        return _json_rows_table(self, schema)


@dataclass
class Corpus:
    """An opened input: its chunks (read lazily) and, when known up front, its schema (text
    lines: :func:`text_schema`)."""

    name: str
    kind: str  # parquet, jsonl or text
    chunks: Iterator[Chunk]
    schema: pa.Schema | None = None


def text_schema() -> pa.Schema:
    """The columns of one-sentence-a-line input in a columnar output."""
    return pa.schema([(SENTENCE, pa.string())])


def open_corpus(path: str | None, column: str | None = None, chunk: int = CHUNK,
                stdin: BinaryIO | None = None, sentences: list[str] | None = None) -> Corpus:
    """Open ``path`` (None or ``-``: standard input, one sentence a line) for scoring
    ``column`` (Parquet and JSON Lines only; default ``text``), or take ``sentences`` (a
    list, e.g. the command's arguments) as the input lines. Problems visible without reading
    the rows (no such file, no such column, a column that is not text, not a Parquet file)
    are raised here."""
    kind = file_format(path)
    if sentences:
        if path is not None:  # one of them would be ignored
            raise ProbsentError("give sentences as arguments or with --input, not both")
        if column is not None:  # it would be read from no file: a mistake, never ignored
            raise ProbsentError(f"--column {column}: names a field of a Parquet or JSON Lines --input; "
                                f"sentences given as arguments have none")
        return Corpus("arguments", "text", text_chunks(sentences, chunk))
    if kind == "text":
        if column is not None:
            raise ProbsentError(f"{path or 'standard input'}: --column needs Parquet (.parquet) "
                                f"or JSON Lines (.jsonl) input, not one sentence a line")
        stream = (stdin or standard_input()) if path in (None, "-") else open_input(path)
        name = "standard input" if path in (None, "-") else path
        return Corpus(path or "-", kind, text_chunks(iter_lines(stream, name), chunk, stream))
    column = column or "text"
    if kind == "jsonl":
        _check_json_field(path, column)
        return Corpus(path, kind, _jsonl_chunks(path, open_input(path), column, chunk))
    schema, batches = _open_parquet(path, chunk)
    _check_text_column(path, schema, column)
    return Corpus(path, kind, _parquet_chunks(path, batches, column), schema)


# In a TSV row the sentence is one field on one line: its tabs and line breaks become spaces.
_ONE_FIELD = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def text_chunks(lines: Iterable[str], chunk: int = CHUNK, stream: BinaryIO | None = None) -> Iterator[Chunk]:
    """Chunks of one-sentence-a-line input; closes ``stream`` (if given) at the end."""
    lines = iter(lines)
    try:
        while block := list(islice(lines, chunk)):
            yield Chunk(block)
    finally:
        if stream is not None and stream is not sys.stdin.buffer:
            stream.close()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _open_parquet(path: str, chunk: int) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The schema and the record batches of a Parquet file, or of a directory of them (a
    dataset, as Spark writes it, read as :mod:`probsent.files.dataset_directory` says: its
    files at any depth in name order, ``_SUCCESS``, ``.crc`` and other names starting with ``_``
    or ``.`` left out), read as one table."""
    if not Path(path).exists():
        raise ProbsentError(f"{path}: cannot read (no such file)")
    if not Path(path).is_dir():
        _check_regular(path)  # Arrow would block on a FIFO, beyond the reach of SIGTERM and Ctrl-C
    try:
        if Path(path).is_dir():
            import pyarrow.dataset as ds
            files = [str(file) for file in dataset_files(path)]  # the parts, as training reads a directory too
            if not files:
                raise ProbsentError(f"{path}: a directory without Parquet files")
            schema = _dataset_schema(path, files)
            dataset = ds.dataset(files, schema=schema, format=ds.ParquetFileFormat(
                default_fragment_scan_options=ds.ParquetFragmentScanOptions(page_checksum_verification=True)))
            return schema, dataset.to_batches(batch_size=chunk, use_threads=False)
        parquet = pq.ParquetFile(path, page_checksum_verification=True)
        return parquet.schema_arrow, parquet.iter_batches(batch_size=chunk)
    except (pa.ArrowException, OSError) as exc:
        raise ProbsentError(f"{path}: not a readable Parquet file ({_first_line(exc)})") from None


def _check_regular(path: str) -> None:
    """A one-line error unless ``path`` is a regular file (or a link to one): a FIFO, a device
    or a socket is never handed to Arrow."""
    kind = not_regular(os.stat(path).st_mode)
    if kind is not None:
        raise ProbsentError(f"{path}: {kind}, not a Parquet file")


def _dataset_schema(path: str, files: list[str]) -> pa.Schema:
    """The columns of a dataset whose part files may differ: every column of every part, in
    order of first appearance (a part without one gives nulls); a column whose type differs
    between parts is a one-line error naming both parts."""
    schemas = []
    for name in files:
        try:
            schemas.append(pq.read_schema(name))
        except (pa.ArrowException, OSError) as exc:
            raise ProbsentError(f"{name}: not a readable Parquet file, in the dataset directory {path} "
                                f"({_first_line(exc)})") from None
    try:
        return pa.unify_schemas(schemas)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        first: dict[str, tuple[pa.DataType, str]] = {}
        for name, schema in zip(files, schemas):
            for field in schema:
                kind, where = first.setdefault(field.name, (field.type, name))
                if kind != field.type:
                    raise ProbsentError(f"{path}: column {field.name!r} is {kind} in {Path(where).name} but "
                                        f"{field.type} in {Path(name).name}; write the parts with one "
                                        f"type") from None
        raise


def _check_text_column(path: str, schema: pa.Schema, column: str) -> None:
    repeated = sorted({name for name in schema.names if schema.names.count(name) > 1})
    if repeated:
        raise ProbsentError(f"{path}: column {repeated[0]!r} appears more than once; "
                            f"give each column its own name")
    if column not in schema.names:
        raise ProbsentError(f"{path}: no column {column!r} (columns: {', '.join(schema.names)}); "
                            f"name the text column with --column")
    kind = schema.field(column).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or pa.types.is_string_view(kind) or pa.types.is_null(kind)):
        raise ProbsentError(f"{path}: column {column!r} holds {schema.field(column).type}, not text")
    for name in added_columns():
        if name in schema.names:
            raise ProbsentError(f"{path}: already has a column {name!r}; rename or drop it first")


def _parquet_chunks(path: str, batches: Iterator[pa.RecordBatch], column: str) -> Iterator[Chunk]:
    done = 0
    while True:
        try:
            batch = next(batches, None)
        except (pa.ArrowException, OSError) as exc:
            raise ProbsentError(f"{path}: damaged Parquet data after row {done:,} "
                                f"({_first_line(exc)})") from None
        if batch is None:
            return
        _check_cell_sizes(path, batch.column(column), done)
        yield Chunk(Utf8Texts.from_arrow(batch.column(column)), batch, path)
        done += batch.num_rows


def _check_cell_sizes(path: str, texts: pa.Array, done: int) -> None:
    """A one-line error for a text longer than MAX_LINE_BYTES (the limit of one sentence a line and
    of a JSON Lines row), before anything is made of it."""
    if pa.types.is_dictionary(texts.type):
        texts = texts.dictionary_decode()
    if pa.types.is_null(texts.type) or not len(texts):
        return
    lengths = pc.binary_length(texts.cast(pa.large_string()) if pa.types.is_string_view(texts.type) else texts)
    longest = pc.max(lengths).as_py()
    if longest is not None and longest > MAX_LINE_BYTES:
        row = done + int(pc.index(lengths, longest).as_py()) + 1
        raise ProbsentError(f"{path}: row {row:,}: a text of {longest:,} bytes, longer than the limit of one "
                            f"sentence ({MAX_LINE_BYTES:,} bytes); split it")


def _jsonl_chunks(path: str, stream: BinaryIO, column: str, chunk: int) -> Iterator[Chunk]:
    """Rows of a JSON Lines file; blank lines hold no row. The column must appear in at
    least one row (checked at the end); a row without it scores null."""
    seen, count = False, 0
    with stream:
        numbered = ((number, line) for number, line in enumerate(without_bom(bounded_lines(stream, path)), 1)
                    if line.strip())
        while block := list(islice(numbered, chunk)):
            rows, texts = [], []
            for number, line in block:
                row = _json_row(path, number, line)
                value = row.get(column)
                seen = seen or column in row
                if value is not None and not isinstance(value, str):
                    raise ProbsentError(f"{path}:{number}: field {column!r} is a "
                                        f"{_JSON_TYPES.get(type(value), type(value).__name__)}, not a string")
                rows.append(row)
                texts.append(value)
            count += len(rows)
            yield Chunk(texts, rows, path, [number for number, _ in block])
        if count and not seen:
            raise ProbsentError(f"{path}: no row has a field {column!r}; name the text field with --column")


def _check_json_field(path: str, column: str) -> None:
    """Refuse, before any output, a JSON Lines file where no row has the field ``column``: its
    rows are read up to the first that has it (at once, in a usual file). What is not a regular
    file (a FIFO) is read once only, and checked at its end (:func:`_jsonl_chunks`)."""
    if not os.path.isfile(path):  # a FIFO or a device: opened once only, by the reader
        return
    rows = 0
    with open_input(path) as stream:
        for number, line in enumerate(without_bom(bounded_lines(stream, path)), 1):
            if line.strip():
                rows += 1
                if column in _json_row(path, number, line):
                    return
    if rows:
        raise ProbsentError(f"{path}: no row has a field {column!r}; name the text field with --column")


def _json_row(path: str, number: int, line: bytes) -> dict[str, Any]:
    row = parse_json_line(path, number, line)  # the bounded reader training's pairs use too
    if not isinstance(row, dict):
        raise ProbsentError(f"{path}:{number}: not a JSON object")
    try:
        row = without_lone_surrogates(row)
    except ValueError as exc:
        raise ProbsentError(f"{path}:{number}: {exc}") from None
    for name in added_columns():
        if name in row:
            raise ProbsentError(f"{path}:{number}: already has a field {name!r}; rename or drop it first")
    return row


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(value: Any) -> Any:
    """``value`` (parsed JSON, at most ``MAX_JSON_DEPTH`` deep: :mod:`probsent.files.json_lines`)
    with every lone surrogate in its strings replaced by U+FFFD, and in its field names by its
    JSON spelling (``\\ud800`` as six characters), so that two names stay two fields: JSON may
    spell one (``"\\ud800"``), UTF-8 cannot hold it. ValueError if two names still become one."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        cleaned = {_SURROGATE.sub(_spelled, k): without_lone_surrogates(v) for k, v in value.items()}
        if len(cleaned) < len(value):
            raise ValueError("two field names become one when their lone surrogates are spelled out")
        return cleaned
    return value


def _spelled(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _json_rows_table(chunk: Chunk, schema: pa.Schema | None) -> pa.Table:
    """JSON objects as one Arrow table: every field of every row is a column (a row without
    it gets null); after the first chunk, the columns and types must stay the same."""
    names = list(dict.fromkeys(name for row in chunk.rows for name in row))
    where = f"{chunk.source}:{chunk.lines[0]}-{chunk.lines[-1]}"
    if schema is not None:
        for line, row in zip(chunk.lines, chunk.rows):
            new = [name for name in row if name not in schema.names]
            if new:
                raise ProbsentError(f"{chunk.source}:{line}: field {new[0]!r} "
                                    f"appears only after the first chunk of rows, which gave the "
                                    f"Parquet columns (write .jsonl instead)")
        names = schema.names
    columns = {}
    for name in names:
        kind = schema.field(name).type if schema is not None else None
        try:
            columns[name] = pa.array([row.get(name) for row in chunk.rows], type=kind)
        except (pa.ArrowException, OverflowError) as exc:
            raise ProbsentError(f"{where}: field {name!r} does not fit one Parquet column "
                                f"({_first_line(exc)}; write .jsonl instead)") from None
    return pa.table(columns)


class Sink(Protocol):
    """Where scored chunks go, in order."""

    def write(self, chunk: Chunk, scores: dict[str, np.ndarray]) -> None:
        """Write the chunk's rows with the new columns (name -> one float per row, NaN = null)."""


class TextSink:
    """``score<TAB>sentence`` lines (``score<TAB>probability<TAB>sentence`` with
    probabilities), or JSON objects ``{"sentence", "specificity"[, "probability"]}`` rounded
    to 6 decimals; a missing score is ``nan`` / null. ``header`` (tsv): the column names, and
    ``sentence``, written first as a line of their own."""

    def __init__(self, out: TextIO, fmt: str = "tsv", header: list[str] | None = None) -> None:
        self.out, self.fmt = out, fmt
        if header is not None:
            out.write("\t".join([*header, SENTENCE]) + "\n")

    def write(self, chunk: Chunk, scores: dict[str, np.ndarray]) -> None:
        names = list(scores)
        if self.fmt != "json":  # the whole chunk in one string (per line, this was half the run)
            texts = chunk.texts
            joined = "\n".join(texts)
            if "\t" in joined or "\r" in joined or joined.count("\n") != len(texts) - 1:
                texts = [sentence.translate(_ONE_FIELD) for sentence in texts]
            line = "{:.4f}\t" * len(names) + "{}\n"
            self.out.write("".join(map(line.format, *(scores[name].tolist() for name in names), texts)))
            return
        for i, sentence in enumerate(chunk.texts):
            values = [float(scores[name][i]) for name in names]
            row = {SENTENCE: sentence}
            row.update((name, None if np.isnan(v) else round(v, 6)) for name, v in zip(names, values))
            self.out.write(json.dumps(row, ensure_ascii=False) + "\n")


class JsonlSink:
    """Each input row as a JSON object with the new fields (full float precision, null where
    there is no score). Values JSON has no type for are written as strings: dates and times
    in ISO 8601, bytes in base64, other values as ``str`` gives them. The output is strict
    JSON: a NaN or infinite number of the input (Parquet's NaN, JSON's ``1e400``) is written
    as null, never as a bare ``NaN`` / ``Infinity`` that strict readers reject."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, chunk: Chunk, scores: dict[str, np.ndarray]) -> None:
        lines = []
        for i, row in enumerate(chunk.dicts()):
            for name, values in scores.items():
                value = float(values[i])
                row[name] = None if np.isnan(value) else value
            try:
                lines.append(json.dumps(row, ensure_ascii=False, default=_json_value, allow_nan=False))
            except ValueError:  # a NaN or an infinity somewhere in the row
                lines.append(json.dumps(_finite_or_null(row), ensure_ascii=False, default=_json_value,
                                        allow_nan=False))
        self.out.write("\n".join(lines) + "\n" if lines else "")


def _finite_or_null(value: Any) -> Any:
    """``value`` with every NaN or infinite float (at any depth) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(item) for item in value]
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


class ParquetSink:
    """A Parquet file with one row group per chunk: the input columns, then the scores."""

    def __init__(self, path: Path | BinaryIO, schema: pa.Schema | None, names: list[str],
                 name: str | None = None) -> None:
        self.path, self.schema, self.names = path, schema, names
        self.name = name or str(path)  # the output's name in error messages
        self.writer: pq.ParquetWriter | None = None

    def write(self, chunk: Chunk, scores: dict[str, np.ndarray]) -> None:
        table = chunk.table(self.schema if self.writer is not None else None)
        try:
            self._write(table, scores)
        except pa.ArrowException as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> ProbsentError:
        return ProbsentError(f"{self.name}: cannot write these columns as Parquet "
                             f"({_first_line(exc)}; write .jsonl instead)")

    def _write(self, table: pa.Table, scores: dict[str, np.ndarray]) -> None:
        for name in self.names:
            values = scores[name]
            table = table.append_column(pa.field(name, pa.float64()), pa.array(values, mask=np.isnan(values)))
        if self.writer is None:
            self.schema = table.schema.remove_metadata()
            for name in self.names:
                self.schema = self.schema.remove(self.schema.get_field_index(name))
            self.writer = pq.ParquetWriter(self.path, table.schema, write_page_checksum=True)
        self.writer.write_table(table)

    def abandon(self) -> None:
        """Stop after an error: release the writer, whatever state the file is in."""
        if self.writer is not None:
            try:
                self.writer.close()
            except (pa.ArrowException, OSError, ValueError):
                pass

    def close(self) -> None:
        """Finish the file (an input with no rows gives a file with the columns and no rows)."""
        try:
            if self.writer is None:
                columns = list(self.schema or []) + [pa.field(name, pa.float64()) for name in self.names]
                pq.write_table(pa.schema(columns).empty_table(), self.path, write_page_checksum=True)
            else:
                self.writer.close()
        except pa.ArrowException as exc:
            raise self._error(exc) from None


def check_output(output: str | None, corpus_path: str | None, force: bool) -> None:
    """Refuse to replace an existing output without ``force``, a directory, and the input
    (checked again when the output is put in place: see :func:`open_sink`)."""
    if output is not None and output != "-":
        check_output_target(output, corpus_path, force)


@contextmanager
def open_sink(output: str | None, corpus: Corpus, names: list[str], text_format: str = "tsv",
              stdout: TextIO | None = None, force: bool = False, header: bool = False) -> Iterator[Sink]:
    """A sink for ``corpus`` at ``output`` (None or ``-``: standard output, as JSON Lines
    for a columnar input). A file appears at ``output`` only once the block ends without an
    error, and replaces an existing one only with ``force`` (a file that appeared during the
    run included); a FIFO or device is written directly. Errors writing are one line.
    ``header``: a first line of column names (tsv text only; refused for any other output)."""
    stdout = stdout or sys.stdout
    kind = "text" if output in (None, "-") else file_format(output)
    if corpus.kind != "text" and kind == "text":
        if output not in (None, "-"):
            raise ProbsentError(f"{output}: a {corpus.kind} input's columns need a .parquet or "
                                f".jsonl output")
        kind = "jsonl"
    if header and (kind != "text" or text_format != "tsv"):
        raise ProbsentError("--header is for tsv output; JSON and Parquet name their columns already")
    names_line = names if header else None
    if output in (None, "-"):
        try:
            yield JsonlSink(stdout) if kind == "jsonl" else TextSink(stdout, text_format, names_line)
            stdout.flush()  # a full disk is seen here, not in Python's last flush at exit
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.filename is not None:
                raise
            raise ProbsentError(f"standard output: cannot write ({exc.strerror})") from None
        return
    with writing_output(output, force) as path:
        if kind == "parquet":  # an open file, never a path: Arrow seeks in (and removes) what a path names
            with open(path, "wb") as handle:
                schema = text_schema() if corpus.kind == "text" else corpus.schema
                sink = ParquetSink(handle, schema, names, output)
                try:
                    yield sink
                except BaseException:
                    sink.abandon()
                    raise
                sink.close()
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as out:
                yield JsonlSink(out) if kind == "jsonl" else TextSink(out, text_format, names_line)
