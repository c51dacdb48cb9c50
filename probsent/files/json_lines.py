"""One bounded reader contract for JSON Lines, whoever reads them (``probsent specificity``'s
input, ``probsent train``'s pairs): a row is at most :data:`MAX_JSON_DEPTH` arrays and objects
deep, the row's own object included, and that is checked on the bytes *before* any parser sees
them, so that neither Python's recursive parser (a ``RecursionError``) nor Arrow's (a segfault
at depth 20,000) is ever handed a deeper one. A row deeper than that, or any other failure to
parse a row, is one line naming the file and line.

The depth is JSON's own: brackets inside strings do not count. A string's escapes are removed
first (``\\\\`` and then ``\\"`` become blanks), so that every quote left opens or closes a
string; a raw line break cannot be inside a JSON string, so each line is counted on its own.
On a row that is not valid JSON the count agrees with any parser up to the first byte the
parser refuses, which is as far as a parser goes, so the check never lets a deeper row through.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from probsent.errors import ProbsentError

__all__ = ["MAX_JSON_DEPTH", "first_too_deep", "parse_json_line", "too_deep_message"]

MAX_JSON_DEPTH = 100  # arrays and objects in a JSON Lines row, one inside another (the row's object is one)
_OPEN = (ord("["), ord("{"))
_CLOSE = (ord("]"), ord("}"))


def too_deep_message(path: Any, number: int) -> str:
    """The one line both readers give for a row nested deeper than :data:`MAX_JSON_DEPTH`."""
    return f"{path}:{number}: not valid JSON (nested too deeply: more than {MAX_JSON_DEPTH} levels)"


def first_too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> int | None:
    """The index (0-based) of the first line of ``data`` whose arrays and objects, counted outside
    strings, nest deeper than ``limit``; None where no line does. A line can be no deeper than the
    brackets it opens, so only a line opening more than ``limit`` is counted exactly: a block of
    usual rows costs a few passes of NumPy."""
    if data.count(b"[") + data.count(b"{") <= limit:  # no line can be deeper: at C speed
        return None
    byte = np.frombuffer(data, dtype=np.uint8)
    opens = np.flatnonzero((byte == _OPEN[0]) | (byte == _OPEN[1]))
    ends = np.flatnonzero(byte == 10)
    opened = np.bincount(np.searchsorted(ends, opens), minlength=len(ends) + 1)  # per line
    for line in np.flatnonzero(opened > limit).tolist():
        start = int(ends[line - 1]) + 1 if line else 0
        stop = int(ends[line]) if line < len(ends) else len(data)
        if _depth(data[start:stop]) > limit:
            return line
    return None


def _depth(line: bytes) -> int:
    """How deep the arrays and objects of one line nest, counted outside its strings."""
    clean = line.replace(b"\\\\", b"  ").replace(b'\\"', b"  ")
    byte = np.frombuffer(clean, dtype=np.uint8)
    outside = np.cumsum(byte == 34) % 2 == 0  # after an even number of quotes (an opening quote counts as inside)
    step = (np.isin(byte, _OPEN).astype(np.int64) - np.isin(byte, _CLOSE)) * outside
    return int(np.cumsum(step).max(initial=0))


def parse_json_line(path: Any, number: int, line: bytes) -> Any:
    """The JSON value of line ``number`` of ``path``, checked as the module says; any failure is
    one :class:`ProbsentError` line naming the file and line (the caller checks the value's kind)."""
    if first_too_deep(line) is not None:
        raise ProbsentError(too_deep_message(path, number))
    try:
        return json.loads(line)
    except UnicodeDecodeError:
        raise ProbsentError(f"{path}:{number}: not valid UTF-8") from None
    except RecursionError:  # not reached within the depth checked above; kept as the contract's last guard
        raise ProbsentError(too_deep_message(path, number)) from None
    except ValueError as exc:  # a JSONDecodeError, or an integer of more digits than Python converts
        reason = getattr(exc, "msg", None) or str(exc).splitlines()[0]
        raise ProbsentError(f"{path}:{number}: not valid JSON ({reason})") from None
