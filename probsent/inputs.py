"""What the API accepts as sentences, and how its results go back in the caller's shape.

A str is one sentence. Any other iterable of str is many: a list, a tuple, a generator, a
NumPy string or object array, a pandas Series, a Hugging Face ``datasets`` column. A null
item (None, a float NaN, pandas' NA or NaT) is a missing sentence: it is scored NaN, never
an exception. So is a blank one ("" or only whitespace: no tokens), the same answer as the
command line, Spark and spaCy give. Anything two-dimensional (a pandas DataFrame, a 2-D array)
is a TypeError that names the fix: pass one column. A pandas Series in gives a Series out, with the same index. pandas is never
imported here: a Series can only reach this module if its caller imported pandas.

Argument checks shared by the command line's parsers and the API (torch-free, like the scoring
commands).
"""
from __future__ import annotations

import argparse
import math
import numbers
import sys
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

# public for the commands other packages add through the entry point group ``probsent.commands``
# (docs/ARCHITECTURE.md): their arguments are checked and refused as probsent's own are
__all__ = ["positive_int"]

from probsent.errors import InvalidValueError


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (batch sizes, counts), with a one-line error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def check_batch_size(batch_size: Any) -> int:
    """``batch_size`` of the API's encode and scoring calls: an int >= 1, else a one-line
    TypeError or InvalidValueError."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
        raise TypeError(f"batch_size must be an int, not {type(batch_size).__name__}")
    if batch_size < 1:
        raise InvalidValueError(f"batch_size must be at least 1, not {batch_size}")
    return int(batch_size)


@dataclass
class Texts:
    """Sentences normalised for the models: each item a str ("" where the input was null)."""

    items: list[str]
    missing: np.ndarray  # bool [len(items)]: True where the input item was null or blank
    single: bool  # a lone str was given: results are scalars
    index: Any = None  # the pandas index of a Series given, else None

    def __len__(self) -> int:
        return len(self.items)

    @property
    def any_missing(self) -> bool:
        """Whether any input item was null."""
        return bool(self.missing.any())

    def scores(self, values: np.ndarray, name: str) -> Any:
        """Per-sentence ``values`` in the caller's shape: NaN at the nulls; a float for a lone
        str; a pandas Series named ``name`` with the input's index for a Series; else an array."""
        values = np.asarray(values)
        if self.any_missing:
            values = values.astype(np.result_type(values.dtype, np.float32), copy=True)
            values[self.missing] = np.nan
        if self.single:
            return float(values[0])
        if self.index is not None:
            return sys.modules["pandas"].Series(values, index=self.index, name=name)
        return values


def is_null(item: Any) -> bool:
    """True for None, a float NaN (pandas' null in object columns), pandas' NA and NaT."""
    if item is None:
        return True
    if isinstance(item, (float, np.floating)):
        return math.isnan(item)
    pandas = sys.modules.get("pandas")
    return pandas is not None and (item is pandas.NA or item is pandas.NaT)


def is_blank(text: str) -> bool:
    """True for a str with no tokens: empty or only whitespace (the tokenizer's blanks)."""
    return not text.strip()


def _series_index(sentences: Any) -> Any:
    """The index of a pandas Series (its values are then read in order), else None."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(sentences, pandas.Series):
        return sentences.index
    return None


def texts(sentences: Any) -> Texts:
    """Check and normalise ``sentences``; a one-line TypeError for anything but a str or an
    iterable of str and nulls (bytes, mappings, sets, numbers, nested lists, ...)."""
    if isinstance(sentences, str):
        return Texts([sentences], np.array([is_blank(sentences)]), single=True)
    dimensions = getattr(sentences, "ndim", 1)
    if isinstance(dimensions, int) and dimensions != 1:
        kind = type(sentences).__name__
        fix = " (pass one column, e.g. df[\"text\"])" if hasattr(sentences, "columns") else ""
        raise TypeError(f"sentences must be a str or a 1-D collection of str, not a {dimensions}-D {kind}{fix}")
    if (isinstance(sentences, (bytes, bytearray, memoryview, Mapping, Set))
            or not isinstance(sentences, Iterable)):
        raise TypeError(f"sentences must be a str or a list of str, not {type(sentences).__name__}"
                        + (" (decode bytes to str first)" if isinstance(sentences, (bytes, bytearray)) else ""))
    index = _series_index(sentences)
    raw = list(sentences.tolist() if index is not None else sentences)
    missing = np.fromiter((is_null(s) or (isinstance(s, str) and is_blank(s)) for s in raw), dtype=bool,
                          count=len(raw))
    for i, s in enumerate(raw):
        if not isinstance(s, str) and not missing[i]:
            raise TypeError(f"sentence {i} is of type {type(s).__name__}, not str")
    items = [str(s) if not m else "" for s, m in zip(raw, missing)]  # np.str_ -> str
    return Texts(items, missing, single=False, index=index)
