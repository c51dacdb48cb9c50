"""Where each token of a sentence is in the text as it was typed.

probsent's tokens are lowercased Treebank tokens (a double quote becomes ``\u0060\u0060`` or ``''``);
people read the words as they typed them. :func:`token_spans` finds each token, in order,
in the lowercased text and maps it back to the original characters, so that ``explain``
shows ``Einstein`` for the token ``einstein`` and the spaCy component gives each token's
share to the spaCy token where it starts.
"""
from __future__ import annotations

__all__ = ["token_spans", "typed_tokens"]

# the Treebank tokenizer writes a double quote as `` (opening) or '' (closing)
_QUOTE_FORMS = {"``": ("``", '"', "''"), "''": ("''", '"', "``")}


def token_spans(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    """The (start, end) character offsets in ``text`` of each of its probsent ``tokens``.

    Tokens are found in order in the lowercased text (a Treebank quote matches any double
    quote form); a token not found (a lowercasing that changes a character's length, say) is
    placed, empty, where the previous one ended, so every token still gets a span.
    """
    lowered = text.lower()
    origin: list[int] | None = None  # lowered offset -> text offset, where lowercasing changes lengths
    if len(lowered) != len(text):
        pieces = [c.lower() for c in text]
        lowered = "".join(pieces)
        origin = [i for i, piece in enumerate(pieces) for _ in piece] + [len(text)]
    spans, cursor = [], 0
    for token in tokens:
        forms = _QUOTE_FORMS.get(token, (token,))
        found = [p for p in (lowered.find(f, cursor) for f in forms) if p >= 0]
        if found:
            start = min(found)
            end = start + next(len(f) for f in forms if lowered.startswith(f, start))
            cursor = end
        else:
            start = end = min(cursor, max(len(lowered) - 1, 0))
        spans.append((origin[start], origin[end]) if origin else (start, end))
    return spans


def typed_tokens(text: str, tokens: list[str]) -> list[str]:
    """Each token as it was typed in ``text`` (the token itself where it was not found)."""
    return [text[start:end] or token for token, (start, end) in zip(tokens, token_spans(text, tokens))]
