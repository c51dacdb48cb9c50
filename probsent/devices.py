"""Where torch computes: the device of ``probsent train --device`` and of ``load(..., device=)``,
checked with a one-line error before any data or model is read. Light: torch is imported only
when a device is resolved (the API asks here instead of importing the trainer)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from probsent.errors import ProbsentError

if TYPE_CHECKING:
    import torch


def resolve_device(device: str, engine: str) -> "torch.device":
    """The device of ``--device`` (auto: CUDA when available, unless the fast engine is asked
    for), with a one-line error where it, or ``--engine``, cannot be had. The names themselves
    are checked by the config."""
    import torch

    if device == "cuda" and engine == "fast":
        raise ProbsentError("--engine fast runs on the CPU; use --engine torch with --device cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise ProbsentError("--device cuda: no CUDA device is available to torch here "
                            "(torch.cuda.is_available() is False); use --device cpu")
    if device == "auto":
        device = "cuda" if engine != "fast" and torch.cuda.is_available() else "cpu"
    return torch.device(device)
