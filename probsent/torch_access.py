"""torch, reached from code that runs without it: whether it is installed (with the one-line error
of a path that needs it where it is not), where it computes (the device of ``load(..., device=)``,
``SentenceModel.to`` and the torch training engine, checked with a one-line error before any data
or model is read), and arrays handed back as tensors there. Light: torch is imported only when a
device is resolved or a tensor made (the API asks here instead of importing the trainer).
"""
from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING, Any, Callable

from probsent.errors import InvalidValueError, ProbsentError, install_line

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")  # as ``probsent train --device``; also "cuda:N"
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


def resolve_device(device: "str | torch.device", engine: str = "torch") -> "torch.device":
    """The torch device ``device`` names: "cpu", "cuda" (or "cuda:N"), or "auto" (CUDA when
    available, unless the fast engine, which runs on the CPU, is asked for); a torch.device as
    is. A one-line error for any other name, and where CUDA is asked for and torch has none."""
    import torch

    if isinstance(device, torch.device):
        return device
    name = device.split(":", 1)[0] if isinstance(device, str) else None
    if name not in DEVICES or (":" in device and (name != "cuda" or not device.split(":", 1)[1].isdigit())):
        raise InvalidValueError(f"device must be one of {', '.join(DEVICES)} or cuda:N, not {device!r}")
    if name == "cuda" and not torch.cuda.is_available():
        raise ProbsentError("device cuda: no CUDA device is available to torch here "
                            "(torch.cuda.is_available() is False); use device cpu")
    if name == "auto":
        return torch.device("cuda" if engine != "fast" and torch.cuda.is_available() else "cpu")
    return torch.device(device)
