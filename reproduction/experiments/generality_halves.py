"""The word halves issue 41's generality rule keeps apart: a generality fit may see only the *anchor
half* of the words, and the rule judges WordNet pairs of the other half (*unseen* words) only.

The generality rounds G1 and G2 also trained with word lists (``--rarity-from FILE``), written by
this module's ``build`` from the fit. Both rounds had no winner and the option left probsent (issue
49); the lists and the fit's record stay in ``results/generality/`` as history, and they are written
again, and trained with, at commit ``9701be6``: ``git checkout 9701be6 && python -m
reproduction.experiments.generality_targets``.
"""
from __future__ import annotations

import zlib

ANCHOR_HALF = 0  # a word w is in the anchor half when crc32(w) % 2 == ANCHOR_HALF


def word_half(word: str) -> int:
    """0 or 1: which half of the words ``word`` is in (the CRC-32 of its UTF-8 bytes, mod 2)."""
    return zlib.crc32(word.encode("utf-8")) % 2


def held_out(word: str) -> bool:
    """Whether no target was fitted on ``word`` (it is outside the anchor half)."""
    return word_half(word) != ANCHOR_HALF
