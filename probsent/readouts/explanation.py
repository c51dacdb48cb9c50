"""What ``explain`` returns: a sentence's entropy as the prior's plus one exact share per token,
and its forms for people: rows of dicts, a pandas DataFrame, JSON, and HTML (a notebook's
display, or ``probsent explain --html FILE``).

Colours are on one scale for every sentence and every call (:class:`TermScale`): a word's
colour is its own term on the model's own term distribution, never scaled by the other words of
its sentence. So the same word has the same colour everywhere and a vague sentence looks pale
beside a precise one. The scale is as asymmetric as the distribution: a WLO model's terms are
nearly all negative (each word makes a sentence more specific; the shipped model's run from
-4.89 to +0.49, 0.07 % positive), so grey is a term of 0, full red is the model's highest term
(its least specific entry) and full blue the term of its entry more specific than ``FULL_RANK``
of the others; both ends are real terms of named entries, shown in the legend. Text is escaped,
and bidirectional controls (U+202E ...) are written as their escapes, so the page shows the
sentence as it is and not reordered.

An explanation as text: the table ``probsent explain`` prints, which is also ``repr()`` of an
:class:`~probsent.readouts.explanation.Explanation` (a notebook shows the HTML, a terminal this).

The entropy's sum, coverage, the one-line summary, then one row per token, most specific (most
negative term) first: the token as typed (``(<unk>)`` beside an unknown one, ``(estimated)`` beside one the open
vocabulary estimated), its entropy term
and its translation norm ||B_w||.

Text as a terminal shows it: control sequences made visible, and columns by display width.

A sentence or token may hold ESC, OSC or other control characters (``\x1b]8;;...``): written
raw, a terminal runs them (moves the cursor, sets the title, makes a link). :func:`printable`
writes every control and format character (Unicode categories Cc and Cf: ESC, DEL, the C1
controls, bidirectional overrides) as its Python escape, so the text reads as it is. Columns
are padded by :func:`display_width`: wide East Asian characters and most emoji take two cells,
combining marks none.
"""
from __future__ import annotations

import html
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from probsent.readouts.withheld import EXPLAINED
from probsent.text.token_ids import LOW_COVERAGE, counts_for_coverage


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


def explanation_text(explanation: Any, paint: Callable[[str, str], str] | None = None,
                     with_sentence: bool = False) -> str:
    """The lines of ``explanation`` (each ending in a newline); ``paint(text, ansi_code)`` colours
    a term (green: more specific, red: more general) for a terminal; ``with_sentence`` puts the
    sentence (printable: control characters shown escaped) above the table."""
    paint = paint or (lambda text, code: text)
    lines = [f"{printable(explanation.sentence)}\n"] if with_sentence else []
    lines.append(f"entropy {explanation.entropy:.3f} = prior {explanation.prior_entropy:.3f} "
                 f"+ word terms {explanation.entropy - explanation.prior_entropy:+.3f}\n")
    lines.append(f"coverage {explanation.coverage:.2f}: the share of its words the model or English knows "
                 f"({explanation.model_coverage:.2f} with an entry of their own)"
                 + (" (below half with an entry of their own: the score says little about this text)\n"
                    if explanation.model_coverage < LOW_COVERAGE else "\n"))
    lines.append(explanation.summary() + "\n")
    names = [printable(w.label) for w in explanation.words]
    width = min(max([display_width(n) + 2 for n in names] + [24]), 48)
    lines.append(f"{fitted('word', width)}{'entropy term':>14}{'||B||':>10}\n")
    for name, word in sorted(zip(names, explanation.words), key=lambda pair: pair[1].entropy):
        term = paint(f"{word.entropy:>+14.3f}", "32" if word.entropy < 0 else "31")
        lines.append(f"{fitted(name, width)}{term}{word.shift_norm:>10.3f}\n")
    return "".join(lines)

# the colours of the scale's two ends (blue: a term that makes the sentence more specific; red:
# one that makes it more general), blended from a neutral grey at a term of 0; a colour-blind-safe pair
SPECIFIC_RGB, NEUTRAL_RGB, GENERAL_RGB = (67, 147, 195), (247, 247, 247), (214, 96, 77)
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
# full blue at the term of the model's entry more specific than this share of its vocabulary: only
# the most specific 1 % saturate (the shipped model: -3.23 to -4.89; the lowest term alone is far
# from the rest, its 0.1 % at -3.49), so the words of ordinary sentences spread over the blues
FULL_RANK = 0.99
# bidirectional controls, written as their escapes in HTML (as the terminal writes every control)
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def html_text(text: str) -> str:
    """``text`` escaped for HTML, each bidirectional control written as its escape (``\\u202e``)
    so that it shows, and reorders nothing."""
    if any(ch in BIDI_CONTROLS for ch in text):
        text = "".join(f"\\u{ord(ch):04x}" if ch in BIDI_CONTROLS else ch for ch in text)
    return html.escape(text)


class TermScale:
    """A model's own distribution of word terms (its vocabulary's entries, the shared ``<unk>``
    entry left out), the scale of every explanation's colours.

    Two ends, both real terms of the model's entries: ``specific_end``, the term of the entry
    more specific than ``FULL_RANK`` of the others (full blue), and ``general_end``, the
    highest term (full red; 0 where no term is positive). A term blends linearly from grey at 0
    to the end on its side and is clipped beyond. ``specific_word`` and ``general_word`` are
    their entries where the words were given. ``rank(term)`` says where a term falls among the
    entries: the share whose term is higher (less specific; ties count half), 0 to 1. All
    depend on the model only, never on the sentence.
    """

    def __init__(self, terms: np.ndarray, words: list[str] | None = None) -> None:
        terms = np.asarray(terms, dtype=np.float64)[1:]
        order = np.argsort(terms, kind="stable")  # ascending: most specific first
        self.terms = terms[order]
        entry = (lambda at: words[int(order[at]) + 1]) if words is not None else (lambda at: None)
        count = len(self.terms)
        at = min(count - 1, int((1.0 - FULL_RANK) * count))
        if count and self.terms[at] < 0:
            self.specific_end, self.specific_word = float(self.terms[at]), entry(at)
        else:  # no negative term to scale on
            self.specific_end, self.specific_word = -1.0, None
        if count and self.terms[-1] > 0:
            self.general_end, self.general_word = float(self.terms[-1]), entry(count - 1)
        else:  # no term makes a sentence more general
            self.general_end, self.general_word = 0.0, None

    def rank(self, term: float) -> float:
        """The share (0-1) of the model's entries whose term is less specific than ``term``."""
        if math.isnan(term) or not len(self.terms):
            return math.nan
        below = np.searchsorted(self.terms, term, side="left")
        upto = np.searchsorted(self.terms, term, side="right")
        return float((len(self.terms) - upto + 0.5 * (upto - below)) / len(self.terms))

    def term_at(self, rank: float) -> float:
        """The term at ``rank`` of the entries (the inverse of :meth:`rank`)."""
        return float(np.quantile(self.terms, 1.0 - rank))

    def strength(self, term: float) -> float:
        """How far a term is towards the end on its side, 0 (grey) to 1 (full colour)."""
        if math.isnan(term) or term == 0:
            return 0.0
        if term < 0:
            return min(1.0, term / self.specific_end)
        return min(1.0, term / self.general_end) if self.general_end > 0 else 1.0

    def color(self, term: float) -> str:
        """The CSS colour of a term: neutral grey at 0 (and for NaN), blending to blue at
        ``specific_end`` (more specific) and to red at ``general_end`` (more general)."""
        end = SPECIFIC_RGB if term < 0 else GENERAL_RGB
        strength = self.strength(term)
        return "rgb({}, {}, {})".format(*(round(n + (e - n) * strength) for n, e in zip(NEUTRAL_RGB, end)))


_UNSCALED = TermScale(np.array([0.0, -1.0, 1.0]))  # an explanation made without a model's scale: -1 to +1


@dataclass
class Attribution:
    """One token's share of a sentence's entropy (models with per-word entropy terms: WLO)."""

    token: str
    word: str | None  # the vocabulary entry, None for a word without one (<unk>, or estimated)
    entropy: float  # WLO: sum_d log|A_w,d|; negative = makes the sentence more specific
    shift_norm: float  # how far the word moves the mean (WLO: ||B_w||)
    text: str = ""  # the token as typed in the sentence ("" if not known: read ``token``)
    rank: float = math.nan  # the term's place among the model's words (TermScale.rank): 1 = most specific
    # a word without an entry read by the open vocabulary: the class its term was estimated from
    # ("number: year", "english: zipf 2.0-2.5", "form: letters"; probsent.data.vocab); None otherwise
    estimate: str | None = None
    known: bool | None = None  # known to the model or English (coverage); None: whether it has an entry

    @property
    def unknown(self) -> bool:
        """True for a word read as the shared ``<unk>`` (no entry, no estimate)."""
        return self.word is None and self.estimate is None

    @property
    def label(self) -> str:
        """The token as typed, with `` (estimated)`` or `` (<unk>)`` where it has no entry."""
        return self.typed + (" (estimated)" if self.estimate is not None else " (<unk>)" if self.word is None else "")

    @property
    def typed(self) -> str:
        """The token as typed (its lowercased form where the typed one is not known)."""
        return self.text or self.token


@dataclass
class Explanation:
    """A sentence's entropy as the prior's entropy plus one exact share per token, with what a
    person reads beside it: its percentile for its length and P(specific) (None where the
    model has no percentile table or calibration; NaN where withheld, ``note`` says why)."""

    sentence: str
    prior_entropy: float
    words: list[Attribution]
    scale: TermScale | None = field(default=None, repr=False)
    percentile: float | None = None
    probability: float | None = None
    note: str = ""  # why the percentile and P(specific) are withheld (probsent.readouts.withheld), "" if not

    @property
    def coverage(self) -> float:
        """The share of the tokens coverage counts (every token without an entry, and the entries
        with a letter or digit: :func:`probsent.text.token_ids.known_share`) that the model or
        English knows (an entry of its own, or a number or English word the open vocabulary
        estimated); 1 for known punctuation only, NaN for a sentence without tokens."""
        return self._share(lambda w: w.known if w.known is not None else w.word is not None)

    @property
    def model_coverage(self) -> float:
        """As :attr:`coverage`, counting only the tokens with an entry of their own in the model."""
        return self._share(lambda w: w.word is not None)

    def _share(self, known: Any) -> float:
        if not self.words:
            return float("nan")
        counted = [w for w in self.words if counts_for_coverage(w.word)]
        return sum(bool(known(w)) for w in counted) / len(counted) if counted else 1.0

    @property
    def entropy(self) -> float:
        """The sentence's entropy: ``prior_entropy`` plus every word's share; NaN for a sentence
        without tokens (blank), as :meth:`probsent.SentenceModel.entropy` gives."""
        if not self.words:
            return math.nan
        return self.prior_entropy + sum(w.entropy for w in self.words)

    @property
    def specificity(self) -> float:
        """The sentence's score: minus its entropy (higher = more specific)."""
        return -self.entropy

    def rows(self) -> list[dict[str, Any]]:
        """One dict per token, in sentence order: token, text (as typed), word (None without an
        entry), unknown (read as <unk>), estimate (the open vocabulary's class, or None), entropy
        (its share), rank (its place on the model's scale, 0-1), shift_norm."""
        return [{"token": w.token, "text": w.typed, "word": w.word, "unknown": w.unknown, "estimate": w.estimate,
                 "entropy": w.entropy, "rank": w.rank, "shift_norm": w.shift_norm} for w in self.words]

    def to_frame(self) -> Any:
        """:meth:`rows` as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Explanation.to_frame needs pandas: pip install pandas "
                              "(Explanation.rows() gives the same table as dicts)") from None
        return pd.DataFrame(self.rows(), columns=["token", "text", "word", "unknown", "estimate", "entropy", "rank",
                                                  "shift_norm"])

    def to_dict(self) -> dict[str, Any]:
        """The sentence, its entropy, the prior's and the word terms' total, its specificity,
        coverage, percentile, P(specific) and note, and :meth:`rows` (JSON-ready: NaN becomes None)."""
        rows = [{key: _json_number(value) for key, value in row.items()} for row in self.rows()]
        return {"sentence": self.sentence, "entropy": _json_number(self.entropy), "prior_entropy": self.prior_entropy,
                "word_terms": _json_number(self.entropy - self.prior_entropy),
                "specificity": _json_number(self.specificity),
                "coverage": _json_number(self.coverage), "model_coverage": _json_number(self.model_coverage),
                "percentile": _json_number(self.percentile),
                "probability": _json_number(self.probability), "note": self.note, "words": rows}

    def summary(self) -> str:
        """One line: the score, the percentile for the length, P(specific) and coverage (or why
        the percentile and P are withheld)."""
        parts = [f"specificity {self.specificity:.3f}"]
        if self.note:
            parts.append(f"no percentile or P(specific): {self.note} ({EXPLAINED[self.note]})")
        else:
            if self.percentile is not None:
                parts.append(f"percentile {self.percentile:.0f} for its length ({len(self.words)} tokens)")
            if self.probability is not None:
                parts.append(f"P(specific) {self.probability:.2f}")
        parts.append(f"coverage {self.coverage:.2f}")
        return " · ".join(parts)

    def __repr__(self) -> str:
        """The table ``probsent explain`` prints (:func:`explanation_text`), the sentence above it."""
        return explanation_text(self, with_sentence=True).rstrip("\n")

    def _repr_html_(self) -> str:
        """The notebook display: the sentence as typed, each word coloured by its term on the
        model's scale (:class:`TermScale`), estimated and unknown words boxed and marked, the score, percentile,
        P(specific) and coverage beside it, the entropy's sum, and a legend."""
        return _page_style(self.scale) + self.html_block() + legend_html(self.scale)

    def html_block(self) -> str:
        """The explanation's HTML without the legend (a page puts one legend above many)."""
        spans, scale = [], self.scale or _UNSCALED
        for w in self.words:
            unknown = w.unknown
            title = (f"{w.token}: term {w.entropy:+.3f}" + ("" if math.isnan(w.rank) else
                                                             f", more specific than {100 * w.rank:.0f} % of the model's words")
                     + (" — unknown word: the model has no entry for it and uses the shared <unk> term" if unknown else "")
                     + (f" — estimated: the model has no entry for it; its term is that of its class ({w.estimate})"
                        if w.estimate is not None else ""))
            mark = " probsent-unknown" if unknown else " probsent-estimated" if w.estimate is not None else ""
            sign = "<sup>?</sup>" if unknown else "<sup>~</sup>" if w.estimate is not None else ""
            spans.append(f'<span class="probsent-token{mark}" '
                         f'title="{html_text(title)}" data-entropy="{w.entropy!r}" data-rank="{w.rank!r}" '
                         f'data-unknown="{str(unknown).lower()}" data-estimate="{html_text(w.estimate or "")}" '
                         f'style="background: {scale.color(w.entropy)}">'
                         f'{html_text(w.typed)}{sign}</span>')
        total = (f"entropy {self.entropy:.3f} = prior {self.prior_entropy:.3f} + word terms "
                 f"{self.entropy - self.prior_entropy:+.3f}")
        stats = (f'<div class="probsent-stats" data-specificity="{self.specificity!r}" '
                 f'data-percentile="{_attribute(self.percentile)}" data-probability="{_attribute(self.probability)}" '
                 f'data-coverage="{_attribute(self.coverage)}" data-note="{html_text(self.note)}">'
                 f'{html_text(self.summary())}</div>')
        return (f'<div class="probsent-explanation"><div class="probsent-sentence">{" ".join(spans)}</div>'
                f'{stats}<div class="probsent-total">{html.escape(total)}</div></div>')


def _json_number(value: Any) -> Any:
    """``value``, with a float NaN as None (JSON has no NaN)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _attribute(value: float | None) -> str:
    """A number as an HTML data attribute: "" for None (no table or calibration), "nan" if withheld."""
    return "" if value is None else repr(float(value))


def _page_style(scale: TermScale | None = None) -> str:
    """The CSS of the explanations (a readable sans-serif font, the token boxes, the legend's bar)."""
    scale = scale or _UNSCALED
    return ("<style>.probsent-explanation, .probsent-legend {font-family: " + FONT + "; line-height: 2.1; "
            "color: #111; margin: 0.6em 0}"
            ".probsent-token {padding: 2px 4px; margin: 1px; border-radius: 3px; border: 1px solid transparent}"
            ".probsent-unknown {border: 1px dashed #333; font-style: italic}"
            ".probsent-estimated {border: 1px dotted #333}"
            ".probsent-unknown sup, .probsent-estimated sup {font-size: 0.7em; margin-left: 1px}"
            ".probsent-stats, .probsent-total {font-size: 0.85em; color: #444; line-height: 1.5}"
            ".probsent-bar {display: inline-block; width: 16em; height: 0.9em; vertical-align: middle; "
            "border: 1px solid #999; background: linear-gradient(to right, "
            f"{scale.color(scale.general_end)} 0%, {scale.color(0.0)} {100 * _grey_at(scale):.1f}%, "
            f"{scale.color(scale.specific_end)} 100%)}}</style>")


def _grey_at(scale: TermScale) -> float:
    """Where 0 falls on the legend's bar, from the general end (left) to the specific end."""
    return scale.general_end / (scale.general_end - scale.specific_end)


def _end_label(term: float, word: str | None) -> str:
    """A legend end: its term, and the entry that has it."""
    return f"{term:+.2f}" + (f" ({word!r})" if word is not None else "")


def legend_html(scale: TermScale | None) -> str:
    """The legend of the colour scale, in the model's terms where its scale is known: its two
    ends are real terms of named entries, the bar's grey where a term is 0."""
    known = scale is not None
    scale = scale or _UNSCALED
    general, specific = _end_label(scale.general_end, scale.general_word), _end_label(scale.specific_end,
                                                                                     scale.specific_word)
    about = ""
    if known and len(scale.terms):
        positive = float(np.mean(scale.terms > 0))
        about = (f" The model's terms run from {scale.terms[0]:+.2f} to {scale.terms[-1]:+.2f}, "
                 f"{100 * positive:.2f} % of them positive, so the scale is as lopsided: full red is its "
                 f"highest term, {general}; full blue is {specific}, a word more specific than "
                 f"{100 * FULL_RANK:.0f} % of its vocabulary. The median term over its entries, most of them rare "
                 f"words, is {scale.term_at(0.5):+.2f}.")
    return ('<div class="probsent-legend">'
            f'<span class="probsent-tick">term {html_text(general)}: more general</span> '
            '<span class="probsent-bar"></span> '
            f'<span class="probsent-tick">{html_text(specific)}: more specific</span> '
            '<span class="probsent-token probsent-estimated">estimated<sup>~</sup></span> '
            '<span class="probsent-token probsent-unknown">unknown<sup>?</sup></span>'
            '<div class="probsent-stats">Each word is coloured by its own entropy term, on one scale for every '
            'sentence: blue words make a sentence more specific, red ones more general, grey ones change little.'
            f'{html_text(about)} A dotted box and ~ mark a word the model has no entry for whose term its open '
            'vocabulary estimated (from the word\'s English frequency, its number shape or its form); a dashed box '
            'and ? one read as the shared &lt;unk&gt; term (a model without that table). Beside each sentence: its score (minus its entropy), its percentile '
            'among reference sentences of its length, P(specific) (the chance a news annotator calls it specific), and coverage.</div></div>')


def explanations_page(explanations: Iterable[Explanation]) -> str:
    """A whole HTML page of explanations, one after another under one legend (``probsent
    explain --html``)."""
    explanations = list(explanations)
    scale = next((e.scale for e in explanations if e.scale is not None), None)
    body = "\n".join(e.html_block() for e in explanations)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>probsent explain</title>'
            f'{_page_style(scale)}</head>\n<body style="font-family: {html.escape(FONT)}; margin: 1.5em">\n'
            f'{legend_html(scale)}\n{body}\n</body></html>\n')
