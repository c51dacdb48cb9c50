"""sentence-transformers' ``util`` names, where users of that library look for them.

The public API promises ``from probsent import util`` with ``util.semantic_search`` and
``util.cos_sim`` (README, docs/USE_WITH.md), as ``sentence_transformers.util`` has them; the
code lives in :mod:`probsent.readouts.semantic_search`. This module only re-exports it.
"""
from __future__ import annotations

from probsent.readouts.semantic_search import cos_sim, semantic_search

__all__ = ["cos_sim", "semantic_search"]
