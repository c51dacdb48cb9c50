"""Adam for models whose word tables get sparse gradients.

A step touches only the few thousand words of its batch, so the word tables (sparse
gradients) use lazy Adam (``torch.optim.SparseAdam``: moments of a word are updated when the
word occurs) and every other weight uses ordinary Adam. Updating the full tables every step
would cost more than the rest of the step together.
"""
from __future__ import annotations

import sys
from typing import Any

import torch
from torch import nn

from probsent.models import SentenceEncoder


# torch.optim.Optimizer's methods that torch wraps with torch._disable_dynamo: the first call of
# each imports torch._dynamo (the compiler, with sympy: about 70 MB of resident memory) only to
# shield the method from a torch.compile trace, which probsent never runs.
COMPILER_SHIELDED = ("add_param_group", "state_dict", "load_state_dict", "zero_grad")


def skip_compiler_import() -> None:
    """Let :data:`COMPILER_SHIELDED` run without importing torch._dynamo, where it is not imported
    yet: each method's shield is set to the method itself (what the shield does outside a
    torch.compile trace). The methods compute what they did; the compiled engine's training run
    saves the compiler's memory (the torch loop's ``step`` imports it anyway). Nothing happens on a
    torch whose methods are not shielded this way."""
    if "torch._dynamo" in sys.modules:
        return
    for name in COMPILER_SHIELDED:
        method = getattr(getattr(torch.optim.Optimizer, name, None), "__wrapped__", None)
        if method is not None and getattr(method, "__dynamo_disable", None) is None:
            setattr(method, "__dynamo_disable", method)


class WordAwareAdam:
    """Lazy Adam on the word tables, Adam on the rest, with one learning rate."""

    def __init__(self, encoder: SentenceEncoder, lr: float) -> None:
        skip_compiler_import()
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
