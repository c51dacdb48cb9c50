"""What ``explain`` returns: a sentence's entropy as the prior's plus one exact share per token,
and its forms for people: rows of dicts, a pandas DataFrame, JSON, and HTML (a notebook's
display, or ``probsent explain --html FILE``).

Colours are on one scale for every sentence and every call (:class:`TermScale`): a word's
colour is its own term in a fixed unit of the model, the term of the model's most specific
tenth of words, never scaled by the other words of its sentence. So the same word has the
same colour everywhere, a vague sentence looks pale beside a precise one, and the colours of a
sentence add up, as its terms do, to how specific it is.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from probsent.readouts.withheld import EXPLAINED
from probsent.text.token_ids import counts_for_coverage

# the colours of the scale's two ends (blue: a term that makes the sentence more specific; red:
# one that makes it more general), blended from a neutral grey at a term of 0; a colour-blind-safe pair
SPECIFIC_RGB, NEUTRAL_RGB, GENERAL_RGB = (67, 147, 195), (247, 247, 247), (214, 96, 77)
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif'
FULL_RANK = 0.9  # full colour at the term of the model's word more specific than this share of its vocabulary


class TermScale:
    """A model's own distribution of word terms (its vocabulary's entries, the shared ``<unk>``
    entry left out), the unit of every explanation's colours.

    ``unit`` is the size of the term at ``FULL_RANK`` (a word more specific than 90 % of the
    model's words): a term of minus ``unit`` is full blue, 0 neutral, plus ``unit`` full red,
    linear between and clipped beyond. ``rank(term)`` says where a term falls among the
    entries: the share whose term is higher (less specific; ties count half), 0 to 1. Both
    depend on the model only, never on the sentence.
    """

    def __init__(self, terms: np.ndarray) -> None:
        self.terms = np.sort(np.asarray(terms, dtype=np.float64)[1:])  # ascending: most specific first
        self.unit = abs(self.term_at(FULL_RANK)) if len(self.terms) else 1.0
        self.unit = self.unit if self.unit > 0 else 1.0

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

    def color(self, term: float) -> str:
        """The CSS colour of a term: neutral grey at 0 (and for NaN), blending to blue at minus
        ``unit`` (more specific) and to red at plus ``unit`` (more general)."""
        if math.isnan(term):
            return "rgb({}, {}, {})".format(*NEUTRAL_RGB)
        end = SPECIFIC_RGB if term < 0 else GENERAL_RGB
        strength = min(1.0, abs(term) / self.unit)
        return "rgb({}, {}, {})".format(*(round(n + (e - n) * strength) for n, e in zip(NEUTRAL_RGB, end)))


_UNSCALED = TermScale(np.array([0.0, -1.0]))  # an explanation made without a model's scale: unit 1


@dataclass
class Attribution:
    """One token's share of a sentence's entropy (models with per-word entropy terms: WLO)."""

    token: str
    word: str | None  # the vocabulary entry, None for an unknown word (<unk>)
    entropy: float  # WLO: sum_d log|A_w,d|; negative = makes the sentence more specific
    shift_norm: float  # how far the word moves the mean (WLO: ||B_w||)
    text: str = ""  # the token as typed in the sentence ("" if not known: read ``token``)
    rank: float = math.nan  # the term's place among the model's words (TermScale.rank): 1 = most specific

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
        """The share of the tokens coverage counts (every unknown token, and the known ones with a
        letter or digit: :func:`probsent.text.token_ids.known_share`) that have an entry of their
        own; 1 for known punctuation only, NaN for a sentence without tokens."""
        if not self.words:
            return float("nan")
        counted = [w for w in self.words if counts_for_coverage(w.word)]
        return sum(w.word is not None for w in counted) / len(counted) if counted else 1.0

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
        """One dict per token, in sentence order: token, text (as typed), word (None for <unk>),
        unknown, entropy (its share), rank (its place on the model's scale, 0-1), shift_norm."""
        return [{"token": w.token, "text": w.typed, "word": w.word, "unknown": w.word is None, "entropy": w.entropy,
                 "rank": w.rank, "shift_norm": w.shift_norm} for w in self.words]

    def to_frame(self) -> Any:
        """:meth:`rows` as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Explanation.to_frame needs pandas: pip install pandas "
                              "(Explanation.rows() gives the same table as dicts)") from None
        return pd.DataFrame(self.rows(), columns=["token", "text", "word", "unknown", "entropy", "rank", "shift_norm"])

    def to_dict(self) -> dict[str, Any]:
        """The sentence, its entropy, the prior's and the word terms' total, its specificity,
        coverage, percentile, P(specific) and note, and :meth:`rows` (JSON-ready: NaN becomes None)."""
        rows = [{key: _json_number(value) for key, value in row.items()} for row in self.rows()]
        return {"sentence": self.sentence, "entropy": _json_number(self.entropy), "prior_entropy": self.prior_entropy,
                "word_terms": _json_number(self.entropy - self.prior_entropy),
                "specificity": _json_number(self.specificity),
                "coverage": _json_number(self.coverage), "percentile": _json_number(self.percentile),
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
        """The table ``probsent explain`` prints (:mod:`probsent.readouts.explanation_table`), the
        sentence above it."""
        from probsent.readouts.explanation_table import explanation_text

        return explanation_text(self, with_sentence=True).rstrip("\n")

    def _repr_html_(self) -> str:
        """The notebook display: the sentence as typed, each word coloured by its term on the
        model's scale (:class:`TermScale`), unknown words boxed and marked, the score, percentile,
        P(specific) and coverage beside it, the entropy's sum, and a legend."""
        return _page_style(self.scale) + self.html_block() + legend_html(self.scale)

    def html_block(self) -> str:
        """The explanation's HTML without the legend (a page puts one legend above many)."""
        spans, scale = [], self.scale or _UNSCALED
        for w in self.words:
            unknown = w.word is None
            title = (f"{w.token}: term {w.entropy:+.3f}" + ("" if math.isnan(w.rank) else
                                                             f", more specific than {100 * w.rank:.0f} % of the model's words")
                     + (" — unknown word: the model has no entry for it and uses the shared <unk> term" if unknown else ""))
            spans.append(f'<span class="probsent-token{" probsent-unknown" if unknown else ""}" '
                         f'title="{html.escape(title)}" data-entropy="{w.entropy!r}" data-rank="{w.rank!r}" '
                         f'data-unknown="{str(unknown).lower()}" style="background: {scale.color(w.entropy)}">'
                         f'{html.escape(w.typed)}{"<sup>?</sup>" if unknown else ""}</span>')
        total = (f"entropy {self.entropy:.3f} = prior {self.prior_entropy:.3f} + word terms "
                 f"{self.entropy - self.prior_entropy:+.3f}")
        stats = (f'<div class="probsent-stats" data-specificity="{self.specificity!r}" '
                 f'data-percentile="{_attribute(self.percentile)}" data-probability="{_attribute(self.probability)}" '
                 f'data-coverage="{_attribute(self.coverage)}" data-note="{html.escape(self.note)}">'
                 f'{html.escape(self.summary())}</div>')
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
            ".probsent-unknown sup {font-size: 0.7em; margin-left: 1px}"
            ".probsent-stats, .probsent-total {font-size: 0.85em; color: #444; line-height: 1.5}"
            ".probsent-bar {display: inline-block; width: 16em; height: 0.9em; vertical-align: middle; "
            "border: 1px solid #999; background: linear-gradient(to right, "
            f"{scale.color(scale.unit)}, {scale.color(0.0)}, {scale.color(-scale.unit)})}}</style>")


def legend_html(scale: TermScale | None) -> str:
    """The legend of the colour scale, in the model's terms where its scale is known."""
    unit = (scale or _UNSCALED).unit
    typical = (f" The median term over the model's vocabulary entries, most of them rare words, is "
               f"{scale.term_at(0.5):+.2f}." if scale is not None else "")
    return ('<div class="probsent-legend">'
            f'<span class="probsent-tick">term {unit:+.2f}: more general</span> <span class="probsent-bar"></span> '
            f'<span class="probsent-tick">{-unit:+.2f}: more specific</span> '
            '<span class="probsent-token probsent-unknown">unknown<sup>?</sup></span>'
            '<div class="probsent-stats">Each word is coloured by its own entropy term, on one scale for every '
            'sentence: blue words make a sentence more specific, red ones more general, grey ones change little; '
            f'full blue is a term of {-unit:+.2f}, that of a word more specific than {100 * FULL_RANK:.0f} % of the '
            f'model\'s vocabulary.{html.escape(typical)} A dashed box marks a word the model has no entry for (it '
            'uses the shared &lt;unk&gt; term). Beside each sentence: its score (minus its entropy), its percentile '
            'among reference sentences of its length, P(specific) for its length, and coverage.</div></div>')


def explanations_page(explanations: Iterable[Explanation]) -> str:
    """A whole HTML page of explanations, one after another under one legend (``probsent
    explain --html``)."""
    explanations = list(explanations)
    scale = next((e.scale for e in explanations if e.scale is not None), None)
    body = "\n".join(e.html_block() for e in explanations)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>probsent explain</title>'
            f'{_page_style(scale)}</head>\n<body style="font-family: {html.escape(FONT)}; margin: 1.5em">\n'
            f'{legend_html(scale)}\n{body}\n</body></html>\n')
