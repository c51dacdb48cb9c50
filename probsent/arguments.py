"""Argument checks shared by the command line's parsers and the API (torch-free, like the scoring
commands)."""
from __future__ import annotations

import argparse
import numbers
from typing import Any

from probsent.errors import InvalidValueError

__all__ = ["check_batch_size", "positive_int"]


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
