"""What ``explain`` returns: a sentence's entropy as the prior's plus one exact share per token,
and its forms for people: rows of dicts, a pandas DataFrame, JSON, and HTML (a notebook's
display, or ``probsent explain --html FILE``)."""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Iterable

from probsent.text.token_ids import counts_for_coverage


@dataclass
class Attribution:
    """One token's share of a sentence's entropy (models with per-word entropy terms: WLO)."""

    token: str
    word: str | None  # the vocabulary entry, None for an unknown word (<unk>)
    entropy: float  # WLO: sum_d log|A_w,d|; negative = makes the sentence more specific
    shift_norm: float  # how far the word moves the mean (WLO: ||B_w||)


@dataclass
class Explanation:
    """A sentence's entropy as the prior's entropy plus one exact share per token."""

    sentence: str
    prior_entropy: float
    words: list[Attribution]

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
        """The sentence's entropy: ``prior_entropy`` plus every word's share."""
        return self.prior_entropy + sum(w.entropy for w in self.words)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per token, in sentence order: token, word (None for <unk>), unknown,
        entropy (its share), shift_norm."""
        return [{"token": w.token, "word": w.word, "unknown": w.word is None, "entropy": w.entropy,
                 "shift_norm": w.shift_norm} for w in self.words]

    def to_frame(self) -> Any:
        """:meth:`rows` as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Explanation.to_frame needs pandas: pip install pandas "
                              "(Explanation.rows() gives the same table as dicts)") from None
        return pd.DataFrame(self.rows(), columns=["token", "word", "unknown", "entropy", "shift_norm"])

    def to_dict(self) -> dict[str, Any]:
        """The sentence, its entropy, the prior's and the word terms' total, and :meth:`rows`
        (JSON-ready; a NaN shift norm becomes None)."""
        rows = [{**row, "shift_norm": None if math.isnan(row["shift_norm"]) else row["shift_norm"]}
                for row in self.rows()]
        coverage = self.coverage
        return {"sentence": self.sentence, "entropy": self.entropy, "prior_entropy": self.prior_entropy,
                "word_terms": self.entropy - self.prior_entropy,
                "coverage": None if math.isnan(coverage) else coverage, "words": rows}

    def _repr_html_(self) -> str:
        """The notebook display: each token shaded by its share (green: more specific, red: more
        general; the strongest share of the sentence fully shaded), then the total and the prior."""
        largest = max((abs(w.entropy) for w in self.words), default=0.0) or 1.0
        spans = []
        for w in self.words:
            strength = min(1.0, abs(w.entropy) / largest)
            color = "0, 160, 0" if w.entropy < 0 else "220, 0, 0"
            title = f"{w.entropy:+.3f}" + (" (unknown word)" if w.word is None else "")
            spans.append(f'<span class="probsent-token" title="{html.escape(title)}" data-entropy="{w.entropy!r}" '
                         f'style="background: rgba({color}, {0.1 + 0.6 * strength:.3f}); padding: 1px 3px; '
                         f'margin: 1px; border-radius: 3px">{html.escape(w.token)}</span>')
        summary = (f"entropy {self.entropy:.3f} = prior {self.prior_entropy:.3f} + word terms "
                   f"{self.entropy - self.prior_entropy:+.3f}")
        return (f'<div class="probsent-explanation"><div class="probsent-sentence">{" ".join(spans)}</div>'
                f'<div class="probsent-total">{html.escape(summary)}</div></div>')


def explanations_page(explanations: Iterable[Explanation]) -> str:
    """A whole HTML page of explanations, one after another (``probsent explain --html``)."""
    body = "\n".join(e._repr_html_() for e in explanations)
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>probsent explain</title></head>\n'
            f'<body style="font-family: sans-serif; line-height: 2">\n<p>Each word shaded by its share of the '
            f'sentence\'s entropy: green makes the sentence more specific, red more general.</p>\n{body}\n'
            '</body></html>\n')
