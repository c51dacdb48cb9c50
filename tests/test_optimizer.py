"""probsent.training.optimizer: RowAdam against torch's SparseAdam, WordAwareAdam's resume."""
from __future__ import annotations

import copy

import torch

from probsent.models import WLO, build_model
from probsent.training.optimizer import RowAdam, WordAwareAdam


def test_row_adam_is_sparse_adam_bit_for_bit() -> None:
    # the word tables' optimizer (WLO's scale and shift): SparseAdam's update on the touched
    # rows, the same numbers and the same state dict, whichever of the two saved it
    torch.manual_seed(14)
    models = [WLO(300, dim=6, scale_init_std=0.3, shift_init_std=0.5) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    optimizers = [torch.optim.SparseAdam(list(models[0].parameters()), lr=0.01),
                  RowAdam(list(models[1].parameters()), lr=0.01)]
    for step in range(6):
        ids = torch.randint(0, 40 if step % 2 else 300, (8, 9))  # repeated words: duplicate rows
        lengths = torch.randint(1, 10, (8,))
        for model, optimizer in zip(models, optimizers):
            optimizer.zero_grad(set_to_none=True)
            out = model(ids, lengths, with_kl=True)
            (out.mean.sum() - out.logvar.square().sum() + 0.01 * out.kl.sum()).backward()
            optimizer.step()
        assert all(torch.equal(p, q) for p, q in zip(models[0].parameters(), models[1].parameters()))
        if step == 2:  # a RowAdam resumed from SparseAdam's state dict continues identically
            optimizers[1] = RowAdam(list(models[1].parameters()), lr=0.01)
            optimizers[1].load_state_dict(copy.deepcopy(optimizers[0].state_dict()))  # unshared
    saved = optimizers[1].state_dict()
    reference = optimizers[0].state_dict()
    for key, slots in reference["state"].items():
        assert saved["state"][key]["step"] == slots["step"]
        assert torch.equal(saved["state"][key]["exp_avg"], slots["exp_avg"])
        assert torch.equal(saved["state"][key]["exp_avg_sq"], slots["exp_avg_sq"])


def test_word_aware_adam_resumes_from_its_state_dict_bit_for_bit() -> None:
    # an LSTM model has both kinds of weights: a sparse word table (RowAdam) and dense ones (Adam);
    # a fresh optimizer given the saved state continues exactly as the one that saved it
    torch.manual_seed(3)
    models = [build_model({"type": "lstmavg", "vocab_size": 50, "dim": 4, "hidden": 3}) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    start = copy.deepcopy(models[0].state_dict())
    optimizers = [WordAwareAdam(models[0], lr=0.01), WordAwareAdam(models[1], lr=0.01)]
    assert [type(o) for o in optimizers[0].optimizers] == [RowAdam, torch.optim.Adam]
    for step in range(4):
        ids, lengths = torch.randint(1, 50, (5, 6)), torch.randint(1, 7, (5,))
        for model, optimizer in zip(models, optimizers):
            optimizer.zero_grad()
            model(ids, lengths).mean.square().sum().backward()
            optimizer.step()
        if step == 1:
            optimizers[1] = WordAwareAdam(models[1], lr=0.01)
            optimizers[1].load_state_dict(copy.deepcopy(optimizers[0].state_dict()))
    assert all(torch.equal(p, q) for p, q in zip(models[0].parameters(), models[1].parameters()))
    assert not any(torch.equal(start[k], v) for k, v in models[0].state_dict().items())  # every weight moved
