"""Text as a terminal shows it: control sequences made visible, and columns by display width.

A sentence or token may hold ESC, OSC or other control characters (``\\x1b]8;;...``): written
raw, a terminal runs them (moves the cursor, sets the title, makes a link). :func:`printable`
writes every control and format character (Unicode categories Cc and Cf: ESC, DEL, the C1
controls, bidirectional overrides) as its Python escape, so the text reads as it is. Columns
are padded by :func:`display_width`: wide East Asian characters and most emoji take two cells,
combining marks none.
"""
from __future__ import annotations

import unicodedata

__all__ = ["display_width", "fitted", "printable"]


def printable(text: str) -> str:
    """``text`` with every control or format character (but the tab) written as its escape
    (``\\x1b``, ``\\u202e``), everything else as is."""
    if text.isprintable():
        return text
    return "".join(ch if ch == "\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp")
                   else ch.encode("unicode_escape").decode("ascii") for ch in text)


def display_width(text: str) -> int:
    """How many terminal cells ``text`` takes: 2 for a wide or full-width character (East Asian,
    most emoji), 0 for a combining mark or a zero-width joiner, 1 for the rest."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or ch in "\u200b\u200c\u200d\ufe0f":
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def fitted(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` cells, or cut to ``width - 1`` cells and "…"."""
    if display_width(text) > width:
        cut = ""
        for ch in text:
            if display_width(cut + ch) > width - 1:
                break
            cut += ch
        text = cut + "…"
    return text + " " * (width - display_width(text))
