"""probsent: probabilistic sentence representations learned from paraphrases."""

from typing import TYPE_CHECKING, Any

from probsent.errors import ProbsentError
from probsent.version import __version__

if TYPE_CHECKING:
    from probsent.api import SentenceModel, load

__all__ = ["SentenceModel", "load", "ProbsentError", "__version__"]


def __getattr__(name: str) -> Any:
    """``probsent.load`` and ``probsent.SentenceModel`` are imported when first used, so that
    ``import probsent`` stays light; they import torch only for a model that needs it (an LSTM,
    a GPU, training: WLO, Wordavg and Wordsum load and run in NumPy)."""
    if name in ("SentenceModel", "load"):
        from probsent import api

        return getattr(api, name)
    raise AttributeError(f"module 'probsent' has no attribute {name!r}")
