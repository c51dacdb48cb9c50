"""The one-line error of a path that needs torch where it is not installed."""
from __future__ import annotations

import importlib.util

from probsent.errors import ProbsentError

INSTALL_TRAIN = "pip install 'probsent[train]'"


def require_torch(purpose: str) -> None:
    """Nothing where torch can be imported; else a ProbsentError saying that ``purpose`` needs it
    and how to install it."""
    if importlib.util.find_spec("torch") is None:
        raise ProbsentError(f"{purpose} needs PyTorch, which is not installed: {INSTALL_TRAIN}")
