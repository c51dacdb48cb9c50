"""The one-line error of a path that needs torch where it is not installed."""
from __future__ import annotations

import importlib.util
import sys

from probsent.errors import ProbsentError

INSTALL_TRAIN = "pip install 'probsent[train]'"


def torch_installed() -> bool:
    """Whether torch can be imported (without importing it)."""
    if "torch" in sys.modules:
        return sys.modules["torch"] is not None  # None: imports of it are blocked
    return importlib.util.find_spec("torch") is not None


def require_torch(purpose: str) -> None:
    """Nothing where torch can be imported; else a ProbsentError saying that ``purpose`` needs it
    and how to install it."""
    if not torch_installed():
        raise ProbsentError(f"{purpose} needs PyTorch, which is not installed: {INSTALL_TRAIN}")
