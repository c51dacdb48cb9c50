"""Adam for models whose word tables get sparse gradients.

A step touches only the few thousand words of its batch, so the word tables (sparse
gradients) use lazy Adam (``torch.optim.SparseAdam``: moments of a word are updated when the
word occurs) and every other weight uses ordinary Adam. Updating the full tables every step
would cost more than the rest of the step together.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from probsent.models import SentenceEncoder


class WordAwareAdam:
    """Lazy Adam on the word tables, Adam on the rest, with one learning rate."""

    def __init__(self, encoder: SentenceEncoder, lr: float) -> None:
        sparse = [m.weight for m in encoder.modules() if isinstance(m, nn.Embedding) and m.sparse]
        sparse_ids = {id(p) for p in sparse}
        others = [p for p in encoder.parameters() if id(p) not in sparse_ids]
        self.optimizers: list[torch.optim.Optimizer] = []
        if sparse:
            self.optimizers.append(torch.optim.SparseAdam(sparse, lr=lr))
        if others:
            self.optimizers.append(torch.optim.Adam(others, lr=lr))

    def zero_grad(self, set_to_none: bool = True) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        for optimizer in self.optimizers:
            optimizer.step()

    def state_dict(self) -> dict[str, Any]:
        """{"state": {"k.i": slots}, "param_groups": [...]} over the inner optimizers."""
        state, groups = {}, []
        for k, optimizer in enumerate(self.optimizers):
            inner = optimizer.state_dict()
            state.update({f"{k}.{i}": slots for i, slots in inner["state"].items()})
            groups.append(inner["param_groups"])
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        if len(saved["param_groups"]) != len(self.optimizers):
            raise ValueError("optimizer state does not match the model")
        for k, optimizer in enumerate(self.optimizers):
            prefix = f"{k}."
            state = {int(key[len(prefix):]): slots for key, slots in saved["state"].items()
                     if key.startswith(prefix)}
            optimizer.load_state_dict({"state": state, "param_groups": saved["param_groups"][k]})
            if isinstance(optimizer, torch.optim.SparseAdam):
                for slots in optimizer.state.values():
                    # SparseAdam counts in an int; a checkpoint gives a tensor back, whose
                    # beta ** step would be float32: an int keeps the resumed run's numbers
                    slots["step"] = int(slots["step"])
