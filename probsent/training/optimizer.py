"""Adam for models whose word tables get sparse gradients.

A step touches only the few thousand words of its batch, so the word tables (sparse
gradients) use lazy Adam (``torch.optim.SparseAdam``'s update, run by :class:`RowAdam`:
moments of a word are updated when the word occurs) and every other weight uses ordinary
Adam. Updating the full tables every step would cost more than the rest of the step together.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from probsent.models import SentenceEncoder


class RowAdam(torch.optim.SparseAdam):
    """``torch.optim.SparseAdam``, step for step and bit for bit (the same operations on the
    same numbers, the same state and state dict), with the touched rows read by
    ``index_select`` and written back by ``index_copy_`` instead of sparse-tensor arithmetic:
    SparseAdam builds four sparse tensors and masks two dense ones per step, which costs more
    than the update."""

    def state_of(self, param: torch.Tensor) -> dict:
        """The state of ``param``, set up as SparseAdam's first step does where it has none."""
        state = self.state[param]
        if len(state) == 0:
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
        return state

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            eps, lr = group["eps"], float(group["lr"])
            for param in group["params"]:
                if param.grad is None:
                    continue
                if not param.grad.is_sparse:
                    raise RuntimeError("RowAdam does not support dense gradients, use Adam instead")
                state = self.state_of(param)
                # an int, also after a checkpoint gave it back as a tensor: beta ** step is
                # then computed in float64, as in an uninterrupted run
                state["step"] = int(state["step"]) + 1
                grad = param.grad if not group.get("maximize", False) else -param.grad
                grad = grad.coalesce()  # unique rows, duplicates summed as SparseAdam sums them
                values = grad._values()
                if values.numel() == 0:
                    continue
                rows = grad._indices()[0]
                exp_avg, exp_avg_sq, step = state["exp_avg"], state["exp_avg_sq"], state["step"]
                # old <- b * old + (1 - b) * new, as old += (1 - b) * (new - old); the rows
                # are unique, so each sum is written back whole (index_copy_)
                old_exp_avg = exp_avg.index_select(0, rows)
                numer = values.sub(old_exp_avg).mul_(1 - beta1).add_(old_exp_avg)
                exp_avg.index_copy_(0, rows, numer)
                old_exp_avg_sq = exp_avg_sq.index_select(0, rows)
                new_exp_avg_sq = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2).add_(old_exp_avg_sq)
                exp_avg_sq.index_copy_(0, rows, new_exp_avg_sq)
                denom = new_exp_avg_sq.sqrt_().add_(eps)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr * math.sqrt(bias_correction2) / bias_correction1
                param.index_copy_(0, rows, param.index_select(0, rows).add_(-step_size * numer.div_(denom)))
        return loss


class WordAwareAdam:
    """Lazy Adam on the word tables, Adam on the rest, with one learning rate."""

    def __init__(self, encoder: SentenceEncoder, lr: float) -> None:
        sparse = [m.weight for m in encoder.modules() if isinstance(m, nn.Embedding) and m.sparse]
        sparse_ids = {id(p) for p in sparse}
        others = [p for p in encoder.parameters() if id(p) not in sparse_ids]
        self.optimizers: list[torch.optim.Optimizer] = []
        if sparse:
            self.optimizers.append(RowAdam(sparse, lr=lr))
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
