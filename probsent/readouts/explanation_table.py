"""An explanation as text: the table ``probsent explain`` prints, which is also ``repr()`` of an
:class:`~probsent.readouts.explanation.Explanation` (a notebook shows the HTML, a terminal this).

The entropy's sum, coverage, the one-line summary, then one row per token, most specific (most
negative term) first: the token as typed (``(<unk>)`` beside an unknown one), its entropy term
and its translation norm ||B_w||.
"""
from __future__ import annotations

from typing import Any, Callable

from probsent.terminal_text import display_width, fitted, printable
from probsent.text.token_ids import LOW_COVERAGE


def explanation_text(explanation: Any, paint: Callable[[str, str], str] | None = None,
                     with_sentence: bool = False) -> str:
    """The lines of ``explanation`` (each ending in a newline); ``paint(text, ansi_code)`` colours
    a term (green: more specific, red: more general) for a terminal; ``with_sentence`` puts the
    sentence (printable: control characters shown escaped) above the table."""
    paint = paint or (lambda text, code: text)
    lines = [f"{printable(explanation.sentence)}\n"] if with_sentence else []
    lines.append(f"entropy {explanation.entropy:.3f} = prior {explanation.prior_entropy:.3f} "
                 f"+ word terms {explanation.entropy - explanation.prior_entropy:+.3f}\n")
    lines.append(f"coverage {explanation.coverage:.2f}: the share of its words with an entry of their own"
                 + (" (below half: the score says little about this text)\n"
                    if explanation.coverage < LOW_COVERAGE else "\n"))
    lines.append(explanation.summary() + "\n")
    names = [printable(w.typed) + ("" if w.word is not None else " (<unk>)") for w in explanation.words]
    width = min(max([display_width(n) + 2 for n in names] + [24]), 48)
    lines.append(f"{fitted('word', width)}{'entropy term':>14}{'||B||':>10}\n")
    for name, word in sorted(zip(names, explanation.words), key=lambda pair: pair[1].entropy):
        term = paint(f"{word.entropy:>+14.3f}", "32" if word.entropy < 0 else "31")
        lines.append(f"{fitted(name, width)}{term}{word.shift_norm:>10.3f}\n")
    return "".join(lines)
