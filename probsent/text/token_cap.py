"""The first N tokens of a sentence, without tokenizing the rest of it.

A sentence counts its first ``MAX_TOKENS`` tokens (``probsent.api``). Tokenizing a 50 MB line
whole to keep 10,000 tokens cost 1.26 GB and half a minute; :func:`first_tokens` tokenizes a
prefix instead, so memory and time are bounded by the cap, not by the line.

Why a prefix gives the same tokens: the tokenizer's rewrites only insert spaces or turn a
quote into other non-space characters, and its final split is ``str.split()``, so every token
lies inside one whitespace-separated word of the text and every such word gives at least one
token: the first N tokens come from the first N words. A rewrite looks at most at the word
next to the one it changes (and the end-of-text rules at the last word), so cutting the text
after word N + 2 leaves the tokens of words 1..N as they were. ``tests/test_token_cap.py``
checks the equality on generated texts of every kind.
"""
from __future__ import annotations

import re

from probsent.text.tokenize import tokenize

_WORD = re.compile(r"\S+")  # \s of str patterns is str.isspace(), what str.split() splits on
_MARGIN = 2  # words kept beyond the cap, so that no rewrite near the cut reaches the kept ones


def capped_text(text: str, max_tokens: int) -> str:
    """The prefix of ``text`` that ends with its word number ``max_tokens + 2`` (``text``
    itself if it has no more words): its first ``max_tokens`` tokens are ``text``'s."""
    words = max_tokens + _MARGIN
    if len(text) < 2 * words:  # too short to hold more words than that
        return text
    for count, match in enumerate(_WORD.finditer(text), 1):
        if count == words:
            return text[:match.end()]
    return text


def first_tokens(text: str, max_tokens: int) -> list[str]:
    """``tokenize(text)[:max_tokens]``, in time and memory bounded by ``max_tokens``."""
    return tokenize(capped_text(text, max_tokens))[:max_tokens]
