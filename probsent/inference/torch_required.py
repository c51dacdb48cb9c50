"""The one-line error of a path that needs torch where it is not installed."""
from __future__ import annotations

import importlib.util
import sys
from typing import Any, Callable

from probsent.errors import ProbsentError
from probsent.errors import install_line

INSTALL_TRAIN = install_line("train")


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


def tensor_converter(to_numpy: bool, to_tensor: bool, device: Callable[[], Any]) -> Callable[[Any], Any]:
    """What ``encode`` returns an array as, with sentence-transformers' meanings: the array
    itself, one torch tensor (``to_tensor``) or a list of one tensor per row (not ``to_numpy``),
    on ``device()``; torch is required for the tensors."""
    if not to_tensor and to_numpy:
        return lambda array: array
    require_torch("encode(convert_to_tensor=True) or encode(convert_to_numpy=False)")
    import numpy as np
    import torch

    def tensor(array: Any) -> Any:
        stacked = torch.from_numpy(np.ascontiguousarray(array)).to(device())
        return stacked if to_tensor else list(stacked)
    return tensor
