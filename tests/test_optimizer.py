"""probsent.training.optimizer: lazy Adam moves only the rows a step uses; WordAwareAdam resumes
from a checkpoint's state (the earlier RowAdam's layout included) exactly."""
from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import torch

from probsent.models import WLO, build_model
from probsent.data.vocab import Vocabulary
from probsent.training.checkpoint import LAST, load_checkpoint, save_checkpoint
from probsent.training.optimizer import WordAwareAdam

REPO = Path(__file__).resolve().parents[1]


def test_lazy_adam_moves_only_the_rows_a_step_uses() -> None:
    # WLO's word tables: a step on words 3..9 changes their rows (weights and moments) and no other
    torch.manual_seed(14)
    model = WLO(50, dim=6, scale_init_std=0.3, shift_init_std=0.5)
    optimizer = WordAwareAdam(model, lr=0.01)
    assert [type(o) for o in optimizer.optimizers] == [torch.optim.SparseAdam]
    before = [p.detach().clone() for p in model.parameters()]
    for _ in range(2):
        optimizer.zero_grad()
        out = model(torch.randint(3, 10, (4, 5)), torch.tensor([5, 4, 3, 1]), with_kl=True)
        (out.mean.sum() - out.logvar.square().sum() + 0.01 * out.kl.sum()).backward()
        optimizer.step()
    for param, start in zip(model.parameters(), before):
        moments = optimizer.optimizers[0].state[param]
        assert (param[3:10] != start[3:10]).all() and (moments["exp_avg_sq"][3:10] > 0).all()
        for rows in (slice(0, 3), slice(10, None)):
            assert torch.equal(param[rows], start[rows]) and not moments["exp_avg"][rows].any()


def test_word_aware_adam_resumes_from_a_checkpoint_bit_for_bit(tmp_path) -> None:
    # an LSTM model has both kinds of weights: a sparse word table (lazy Adam) and dense ones
    # (Adam); the model and optimizer read back from a checkpoint (every slot a tensor there, the
    # step too) continue exactly as the ones that saved it
    torch.manual_seed(3)
    models = [build_model({"type": "lstmavg", "vocab_size": 50, "dim": 4, "hidden": 3}) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    start = copy.deepcopy(models[0].state_dict())
    optimizers = [WordAwareAdam(models[0], lr=0.01), WordAwareAdam(models[1], lr=0.01)]
    assert [type(o) for o in optimizers[0].optimizers] == [torch.optim.SparseAdam, torch.optim.Adam]
    for step in range(4):
        ids, lengths = torch.randint(1, 50, (5, 6)), torch.randint(1, 7, (5,))
        for model, optimizer in zip(models, optimizers):
            optimizer.zero_grad()
            model(ids, lengths).mean.square().sum().backward()
            optimizer.step()
        if step == 1:
            vocab = Vocabulary(["<unk>"] + [f"w{i}" for i in range(1, 50)])
            save_checkpoint(tmp_path, models[0], vocab, optimizers[0], torch.Generator(), {}, {})
            models[1], _, optimizers[1], _, _ = load_checkpoint(tmp_path / LAST,
                                                                lambda encoder: WordAwareAdam(encoder, lr=0.01))
    assert all(torch.equal(p, q) for p, q in zip(models[0].parameters(), models[1].parameters()))
    assert not any(torch.equal(start[k], v) for k, v in models[0].state_dict().items())  # every weight moved


def test_the_earlier_row_adams_checkpoint_state_loads() -> None:
    # RowAdam (the word tables' optimizer until issue 35) saved SparseAdam's layout: a step and
    # two moments per table, SparseAdam's group settings; that state loads and is used
    model = WLO(20, dim=3)
    saved = {"state": {f"0.{i}": {"step": torch.tensor(7), "exp_avg": torch.full((20, 3), 0.1),
                                  "exp_avg_sq": torch.full((20, 3), 0.01)} for i in range(2)},
             "param_groups": [[{"lr": 0.01, "betas": [0.9, 0.999], "eps": 1e-8, "maximize": False,
                                "params": [0, 1]}]]}
    optimizer = WordAwareAdam(model, lr=0.01)
    optimizer.load_state_dict(saved)
    optimizer.zero_grad()
    model(torch.tensor([[2, 4]]), torch.tensor([2])).mean.sum().backward()
    optimizer.step()
    state = optimizer.optimizers[0].state[model.scale.weight]
    assert state["step"] == 8 and isinstance(state["step"], int)
    assert torch.equal(state["exp_avg"][0], torch.full((3,), 0.1))  # row 0 unused: as loaded
    assert not torch.equal(state["exp_avg"][2], torch.full((3,), 0.1))


def test_the_optimizer_never_imports_torchs_compiler() -> None:
    # torch.optim wraps add_param_group, state_dict, load_state_dict and zero_grad in a shield
    # whose first call imports torch._dynamo (70 MB resident); WordAwareAdam skips that import and
    # the methods still do their work (the state read back equals the state saved)
    code = ("import sys, torch\n"
            "from probsent.models import WLO\n"
            "from probsent.training.optimizer import WordAwareAdam\n"
            "model = WLO(20, dim=3)\n"
            "optimizer = WordAwareAdam(model, lr=0.01)\n"
            "optimizer.zero_grad()\n"
            "model.scale.weight.grad = torch.ones(20, 3).to_sparse()\n"
            "optimizer.optimizers[0].state[model.scale.weight].update(step=1, exp_avg=torch.ones(20, 3),\n"
            "                                                         exp_avg_sq=torch.full((20, 3), 2.0))\n"
            "saved = optimizer.state_dict()\n"
            "other = WordAwareAdam(WLO(20, dim=3), lr=0.01)\n"
            "other.load_state_dict(saved)\n"
            "assert torch.equal(other.state_dict()['state']['0.0']['exp_avg_sq'], torch.full((20, 3), 2.0))\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]
