"""What ``explain`` returns: a sentence's entropy as the prior's plus one exact share per token."""
from __future__ import annotations

from dataclasses import dataclass


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
        counted = [w for w in self.words if w.word is None or any(c.isalnum() for c in w.word)]
        return sum(w.word is not None for w in counted) / len(counted) if counted else 1.0

    @property
    def entropy(self) -> float:
        """The sentence's entropy: ``prior_entropy`` plus every word's share."""
        return self.prior_entropy + sum(w.entropy for w in self.words)
