"""Argument types shared by the command line's parsers (torch-free, like the scoring commands)."""
from __future__ import annotations

import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (batch sizes, counts), with a one-line error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value
