"""Reading a file that someone else may have made (a model directory is untrusted input).

Only a regular file is opened: a FIFO (which would block forever), a device (``/dev/zero``
never ends), a socket or a directory is refused by its kind, checked before opening and
again on the opened descriptor (opened without blocking, so a file swapped for a FIFO in
between cannot hang the read). A symbolic link is followed only to a regular file. No read
takes more than the number of bytes the caller allows, which follows from what the file
should hold. Every failure, parsing included (deep nesting, a 5,000-digit number), is one
:class:`UntrustedFileError` line (an InvalidValueError) naming the file.
"""
from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

from probsent.errors import InvalidValueError, MissingFileError, ProbsentError

__all__ = ["MAX_LINE_BYTES", "UntrustedFileError", "bounded_lines", "iter_lines", "not_regular", "open_input", "open_regular_file",
           "read_json_file", "read_regular_file", "standard_input", "without_bom"]

# The longest input line read (text, JSON Lines, training pairs): 64 MiB, so that a file with
# no line break (``--input /dev/zero``) is one line of error, not all the memory there is.
MAX_LINE_BYTES = 64 * 2**20


class UntrustedFileError(InvalidValueError):
    """A file of the wrong kind, too large for what it should hold, or that does not parse."""

_KINDS = [(stat.S_ISDIR, "Is a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]


def not_regular(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def _refuse(path: Path, what: str, reason: str) -> UntrustedFileError:
    return UntrustedFileError(f"{path}: damaged {what} ({reason})")


def _check(path: Path, what: str, status: os.stat_result, limit: int) -> None:
    kind = not_regular(status.st_mode)
    if kind is not None:
        raise _refuse(path, what, f"{kind}, not a regular file")
    if status.st_size > limit:
        raise _refuse(path, what, f"{status.st_size:,} bytes, more than the {limit:,} it can hold")


def open_regular_file(path: str | os.PathLike[str], limit: int, what: str = "file") -> BinaryIO:
    """``path`` opened for binary reading, checked to be a regular file of at most ``limit``
    bytes (before opening and on the descriptor). MissingFileError if it is not there."""
    path = Path(path)
    try:
        _check(path, what, os.stat(path), limit)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise _refuse(path, what, exc.strerror or type(exc).__name__) from None
    handle = os.fdopen(fd, "rb", buffering=0)
    try:
        _check(path, what, os.fstat(fd), limit)  # the file opened is the file checked
    except BaseException:
        handle.close()
        raise
    return handle  # type: ignore[return-value]


def read_regular_file(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (a file that grows
    past it while being read is refused too)."""
    with open_regular_file(path, limit, what) as handle:
        try:
            size, data = os.fstat(handle.fileno()).st_size, bytearray()
            while len(data) <= limit:  # what the file holds (not a buffer of the limit's size), at most limit + 1
                part = handle.read(min(limit + 1 - len(data), max(size + 1 - len(data), 1 << 20)))
                if not part:
                    break
                data += part
        except OSError as exc:
            raise _refuse(Path(path), what, exc.strerror or type(exc).__name__) from None
    if len(data) > limit:
        raise _refuse(Path(path), what, f"more than the {limit:,} bytes it can hold")
    return bytes(data)


def read_json_file(path: str | os.PathLike[str], limit: int, what: str = "file") -> Any:
    """The JSON value in the regular file ``path`` (UTF-8, at most ``limit`` bytes); any
    failure to parse it, a nesting too deep for Python's parser included, is one line."""
    data = read_regular_file(path, limit, what)
    try:
        return json.loads(data.decode("utf-8"), parse_int=_float_sized_int, parse_float=_finite_float)
    except UnicodeDecodeError:
        raise _refuse(Path(path), what, "not valid UTF-8") from None
    except RecursionError:
        raise _refuse(Path(path), what, "nested too deeply") from None
    except ValueError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _refuse(Path(path), what, reason) from None


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent, refused where float64 cannot hold it (1e400)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]}{'...' if len(text) > 20 else ''} is beyond float64's range")
    return value


def _float_sized_int(text: str) -> int:
    """A JSON integer, refused where float64 cannot hold it (10**400: every number read from a
    model's files is used as a float somewhere)."""
    if len(text.lstrip("-")) > 308:
        raise ValueError(f"the integer of {len(text.lstrip('-'))} digits is beyond float64's range")
    return int(text)


def bounded_lines(stream: BinaryIO, name: str, limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of a binary stream (with their line ends), each read only up to ``limit``
    bytes: a longer line is a one-line error naming ``name`` and the line's number."""
    number = 0
    while line := stream.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise ProbsentError(f"{name}:{number}: a line longer than {limit:,} bytes (the limit of one "
                                f"line; split it)")
        yield line


def standard_input() -> BinaryIO:
    """Standard input's bytes; a one-line error where the program started with it closed (``<&-``)."""
    if sys.stdin is None:
        raise ProbsentError("standard input is closed; give sentences as arguments or --input FILE")
    return sys.stdin.buffer


def open_input(path: str) -> BinaryIO:
    """A user's input file (``-``: standard input) opened for reading, by lines of a bounded
    length (:func:`iter_lines`); a one-line error where it cannot be opened."""
    if path == "-":
        return standard_input()
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise MissingFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ProbsentError(f"{path}: cannot read ({exc.strerror})") from None


_BOM = b"\xef\xbb\xbf"


def without_bom(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The lines, each without a leading UTF-8 byte-order mark (a file's first line has one
    from its editor; a later line, from files joined with ``cat``)."""
    for line in lines:
        yield line[len(_BOM):] if line.startswith(_BOM) else line


def iter_lines(stream: BinaryIO, name: str = "standard input") -> Iterator[str]:
    """Decoded lines of a binary stream, without their line ends and without a leading
    byte-order mark (undecodable bytes become U+FFFD, so no line is lost; ``\\r\\n`` is
    accepted); a line longer than ``MAX_LINE_BYTES`` is a one-line error naming ``name``."""
    for raw in without_bom(bounded_lines(stream, name)):
        yield raw.decode("utf-8", errors="replace").rstrip("\r\n")
