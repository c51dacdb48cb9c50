"""What ``--data`` names, as users have their pairs: TSV (plain or gzip), Parquet or JSON Lines;
one file, several files (joined by ``os.pathsep``, ``:`` on POSIX) or a directory of parts.

:func:`pair_parts` resolves the name into the files to read, in order, each with its format (by
suffix: ``.parquet``/``.pq``; ``.jsonl``/``.ndjson``, optionally ``.gz``; a file named by the user
is TSV otherwise) and, for Parquet and JSON Lines, the columns of the two sentences and the
optional source (``--columns A,B[,SOURCE]``; default ``s1,s2,source``, the source read where that
column exists, or else from a ``source=NAME`` folder). A directory is read as the scoring commands
read a dataset (:mod:`probsent.files.dataset_directory`: its parts at any depth, Spark's
``partitionBy`` folders included, ``_SUCCESS``, ``.crc`` and other ``_``/``.`` names left out); in it,
a part is TSV only where its name says so (``.tsv``, ``.txt``, optionally ``.gz``, or no suffix, as
Spark names text parts; a part without a suffix that starts as Parquet does is Parquet), and any
other file (a ``README.md``) is a one-line error naming it, never read as pairs. Everything that
can be checked without reading the pairs is checked here, before any work: a missing file, a directory without parts, a device, a Parquet file that cannot be opened,
a column that is not there; each is one line naming the file.

:func:`pair_blocks` then yields the parts' rows a block at a time: TSV as whole lines of bytes,
Parquet and JSON Lines as :class:`probsent.data.pair_tokens.ColumnBlock`.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from probsent.data.pair_tokens import ColumnBlock
from probsent.data.pairs import open_pair_file
from probsent.errors import InvalidValueError, MissingFileError, ProbsentError
from probsent.text.utf8_texts import Utf8Texts
from probsent.files import untrusted
from probsent.files.dataset_directory import dataset_files, partition_values
from probsent.files.json_lines import first_too_deep, parse_json_line, too_deep_message

__all__ = ["DEFAULT_COLUMNS", "PairPart", "pair_blocks", "pair_parts", "parse_columns"]

DEFAULT_COLUMNS = ("s1", "s2", "source")
BLOCK_BYTES = 4 << 20  # the text of a block of lines (TSV, JSON Lines)
BLOCK_ROWS = 32_768  # rows of a Parquet block
_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")


@dataclass(frozen=True)
class PairPart:
    """One file of the pairs: its path, format (tsv, parquet, jsonl) and columns (None for TSV:
    positional), the source column only where the file has it."""

    path: Path
    kind: str
    columns: tuple[str, ...] | None = None
    partition: tuple[tuple[str, str], ...] = ()  # the key=value folders above it, in a directory of parts


def parse_columns(text: str | None) -> tuple[str, ...] | None:
    """``"A,B[,SOURCE]"`` -> its names; None for None; a one-line error otherwise."""
    if text is None:
        return None
    names = tuple(name.strip() for name in text.split(","))
    if len(names) not in (2, 3) or not all(names) or len(set(names)) != len(names):
        raise InvalidValueError(f"--columns: {text!r} is not A,B or A,B,SOURCE (distinct column names)")
    return names


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(_PARQUET):
        return "parquet"
    return "jsonl" if name.endswith(_JSONL) else "tsv"


_TEXT_PARTS = (".tsv", ".txt", ".tsv.gz", ".txt.gz", ".gz")  # and no suffix: Spark's text parts


def _part_kind(directory: Path, path: Path) -> str:
    """The format of a part found in a directory: by suffix, a suffix-less Parquet file by its
    magic bytes; a one-line error for a file that is no part of pairs."""
    name = path.name.lower()
    if name.endswith(_PARQUET) or name.endswith(_JSONL):
        return _kind(path)
    if not path.suffix:
        try:
            with open(path, "rb") as handle:
                return "parquet" if handle.read(4) == b"PAR1" else "tsv"
        except OSError as exc:
            raise InvalidValueError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if name.endswith(_TEXT_PARTS):
        return "tsv"
    raise InvalidValueError(f"{path}: not a part of pairs (a part of the directory {directory} is .tsv, .txt, "
                            f".parquet or .jsonl, or has no suffix); move it out, or name the files with "
                            f"'{os.pathsep}'")


def _files(entry: str) -> list[tuple[Path, str, tuple[tuple[str, str], ...]]]:
    """(file, format, partition values) of each file ``entry`` names."""
    path = Path(entry)
    if not path.exists():
        raise MissingFileError(f"{path}: no such file")
    if path.is_dir():
        files = dataset_files(path)  # the scoring commands' reading of a directory
        if not files:
            raise InvalidValueError(f"{path}: a directory without pair files (parts)")
        return [(file, _part_kind(path, file), partition_values(path, file)) for file in files]
    if not path.is_file():
        raise InvalidValueError(f"{path}: not a regular file (a pair file is TSV, plain or gzip, Parquet or "
                                f"JSON Lines)")
    if not os.access(path, os.R_OK):
        raise InvalidValueError(f"{path}: cannot be read (permission denied)")
    return [(path, _kind(path), ())]


def pair_parts(data: str, columns: str | None = None) -> list[PairPart]:
    """The files ``data`` names (see the module's docstring), checked."""
    named = parse_columns(columns)
    parts = []
    for entry in str(data).split(os.pathsep):
        for path, kind, partition in _files(entry):
            if kind == "tsv":
                if named is not None:
                    raise InvalidValueError(f"{path}: --columns names the columns of Parquet or JSON Lines "
                                            f"pairs; a TSV file's are positional (s1<TAB>s2[<TAB>source])")
                parts.append(PairPart(path, kind))
            else:
                parts.append(PairPart(path, kind, _checked_columns(path, kind, named, partition), partition))
    return parts


def _checked_columns(path: Path, kind: str, named: tuple[str, ...] | None,
                     partition: tuple[tuple[str, str], ...] = ()) -> tuple[str, ...]:
    """The columns to read from ``path``: ``named`` (all required), or the default's (the
    source only where present); the source may be a partition folder's key. A one-line error
    naming a missing one."""
    present = _parquet_columns(path) if kind == "parquet" else _jsonl_columns(path)
    wanted = named or DEFAULT_COLUMNS
    if len(wanted) > 2 and wanted[2] not in present and wanted[2] in dict(partition):
        present.append(wanted[2])  # the source from its folder (partitionBy); the sentences come from the file
    required = wanted if named else wanted[:2]
    missing = [name for name in required if name not in present]
    if missing:
        raise InvalidValueError(f"{path}: no column {', '.join(repr(m) for m in missing)} (columns: "
                                f"{', '.join(present) or 'none'}; --columns A,B[,SOURCE] names them)")
    return tuple(name for name in wanted if name in present)


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidValueError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None


def _jsonl_columns(path: Path) -> list[str]:
    """The keys of the file's first row (the others are checked as they are read)."""
    try:
        with open_pair_file(path) as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    row = parse_json_line(path, number, line)  # the scoring reader's bounds
                    if not isinstance(row, dict):
                        raise InvalidValueError(f"{path}:{number}: a JSON Lines row is an object")
                    return list(row)
    except (ValueError, EOFError, gzip.BadGzipFile, zlib.error, OSError) as exc:
        if isinstance(exc, ProbsentError):
            raise
        raise InvalidValueError(f"{path}: not readable JSON Lines ({exc})") from None
    return []


def pair_blocks(parts: list[PairPart], block_bytes: int | None = None) -> Iterator[tuple[bytes | ColumnBlock, int]]:
    """(block, number of its first line or row over all parts): every part's rows, in order."""
    first = 1
    for part in parts:
        if part.kind == "tsv":
            blocks = line_blocks(part.path, block_bytes or BLOCK_BYTES)
        elif part.kind == "parquet":
            blocks = _parquet_blocks(part)
        else:
            blocks = _jsonl_blocks(part, block_bytes or BLOCK_BYTES)
        for block, rows in blocks:
            yield block, first
            first += rows


def line_blocks(path: Path, block_bytes: int) -> Iterator[tuple[bytes, int]]:
    """(block, lines): whole lines of the file, about ``block_bytes`` at a time, each ending with a
    newline (a last line without one joins the last block: a small file is one block); a line longer
    than ``untrusted.MAX_LINE_BYTES`` or damaged gzip data is a one-line error naming the file
    and line."""
    line, carry = 1, b""
    last: tuple[bytes, int] | None = None  # the block read but not yet given
    with open_pair_file(path) as handle:
        try:
            while chunk := handle.read(block_bytes):
                chunk = carry + chunk
                cut = chunk.rfind(b"\n") + 1
                block, carry = chunk[:cut], chunk[cut:]
                _check_line_lengths(path, block, carry, line)
                if block:
                    if last is not None:
                        yield last
                    last = (block, block.count(b"\n"))
                    line += last[1]
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InvalidValueError(f"{path}:{line}: damaged or truncated gzip data ({exc})") from None
    if carry:
        last = (last[0] + carry + b"\n", last[1] + 1) if last is not None else (carry + b"\n", 1)
    if last is not None:
        yield last


def _check_line_lengths(path: Path, block: bytes, carry: bytes, line: int) -> None:
    limit = untrusted.MAX_LINE_BYTES  # read when called: the limit of every reader of lines
    if len(block) > limit:
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
        long = np.flatnonzero(np.diff(np.concatenate(([-1], ends))) > limit + 1)
        if not len(long):
            return
        line += int(long[0])
    elif len(carry) <= limit:
        return
    else:
        line += block.count(b"\n")
    raise ProbsentError(f"{path}:{line}: a line longer than {limit:,} bytes (the limit of one line; split it)")


def _column_block(path: Path, table, columns: tuple[str, ...], partition: tuple[tuple[str, str], ...] = ()) -> ColumnBlock:
    """A block of ``table``'s rows: the two sentence columns as UTF-8, the source's values as text
    (a partition folder's value where the file has no such column)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(columns) > 2 and columns[2] not in table.column_names:
        value = dict(partition)[columns[2]]
        table = table.append_column(columns[2], pa.array([value] * table.num_rows, pa.string()))

    texts = []
    for name in columns[:2]:
        column = table.column(name)
        try:
            if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
                    or pa.types.is_string_view(column.type) or pa.types.is_dictionary(column.type)
                    or pa.types.is_null(column.type)):
                raise TypeError(column.type)
            texts.append(Utf8Texts.from_arrow(column))
        except (TypeError, pa.ArrowException):
            raise InvalidValueError(f"{path}: column {name!r} is {column.type}, not text") from None
    if len(columns) < 3:
        return ColumnBlock(*texts, np.zeros(table.num_rows, dtype=np.int32), [""])
    try:
        source = pc.cast(table.column(columns[2]), pa.string()).combine_chunks()
    except pa.ArrowException:
        raise InvalidValueError(f"{path}: column {columns[2]!r} ({table.column(columns[2]).type}) cannot be read "
                                f"as text") from None
    encoded = pc.fill_null(source, "").dictionary_encode()
    return ColumnBlock(*texts, encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32),
                       encoded.dictionary.to_pylist())


def _parquet_blocks(part: PairPart) -> Iterator[tuple[ColumnBlock, int]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(part.path).names
        in_file = [name for name in part.columns if name in names]  # the source may be a folder's
        for batch in pq.ParquetFile(part.path).iter_batches(batch_size=BLOCK_ROWS, columns=in_file):
            yield _column_block(part.path, pa.Table.from_batches([batch]), part.columns, part.partition), batch.num_rows
    except (pa.ArrowException, OSError) as exc:
        raise InvalidValueError(f"{part.path}: damaged Parquet data ({str(exc).splitlines()[0]})") from None


def _jsonl_blocks(part: PairPart, block_bytes: int) -> Iterator[tuple[ColumnBlock, int]]:
    import pyarrow as pa
    import pyarrow.json as pajson

    first = 1
    for block, lines in line_blocks(part.path, block_bytes):
        deep = first_too_deep(block)  # checked before Arrow's parser sees it (it crashes on depth 20,000)
        if deep is not None:
            raise InvalidValueError(too_deep_message(part.path, first + deep))
        try:
            table = pajson.read_json(io.BytesIO(block), parse_options=pajson.ParseOptions(newlines_in_values=False))
        except pa.ArrowException as exc:
            raise InvalidValueError(f"{part.path}: lines {first:,}-{first + lines - 1:,}: not JSON Lines "
                                    f"({str(exc).splitlines()[0]})") from None
        for name in part.columns:
            if name not in table.column_names and name not in dict(part.partition):
                table = table.append_column(name, pa.nulls(table.num_rows, pa.string()))
        if table.num_rows != lines:
            raise InvalidValueError(f"{part.path}: lines {first:,}-{first + lines - 1:,}: blank lines or rows that "
                                    f"are not objects (JSON Lines is one object a line)")
        yield _column_block(part.path, table, part.columns, part.partition), lines
        first += lines
