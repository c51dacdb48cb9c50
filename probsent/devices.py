"""Where torch computes: the device of ``load(..., device=)`` and of the torch training engine,
checked with a one-line error before any data or model is read. Light: torch is imported only
when a device is resolved (the API asks here instead of importing the trainer)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from probsent.errors import ProbsentError

if TYPE_CHECKING:
    import torch


def resolve_device(device: str, engine: str) -> "torch.device":
    """The torch device ``device`` names ("cpu", "cuda", or "auto": CUDA when available, unless
    the fast engine, which runs on the CPU, is asked for), with a one-line error where CUDA is
    asked for and torch has none. The names themselves are checked by the caller."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise ProbsentError("device cuda: no CUDA device is available to torch here "
                            "(torch.cuda.is_available() is False); use device cpu")
    if device == "auto":
        device = "cuda" if engine != "fast" and torch.cuda.is_available() else "cpu"
    return torch.device(device)
