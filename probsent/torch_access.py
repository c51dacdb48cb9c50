"""Where torch computes: the device of ``load(..., device=)``, ``SentenceModel.to`` and the torch
training engine, checked with a one-line error before any data or model is read. Light: torch is
imported only when a device is resolved (the API asks here instead of importing the trainer)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from probsent.errors import InvalidValueError, ProbsentError

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")  # as ``probsent train --device``; also "cuda:N"


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
