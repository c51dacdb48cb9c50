"""Adding a loss touches one file plus its flag: this one defines a toy loss and its setting,
registers the loss (undone after each use), trains a WLO with the real Trainer, and checks the
toy's part in ``log.jsonl`` and its effect on the weights against the formula, worked by hand.

The toy pulls each word's translation B_w toward zero:

    T = w / B sum_{w in the step's distinct words} ||B_w||^2      (w: ``--toy-weight``, B: pairs)

Its gradient, 2 w / B * B_w, dwarfs the margin loss's and the prior's when w is huge, and Adam's
first step moves each weight by lr * g / (|g| + eps') = lr * sign(g): every translation of the
step's words then moves by exactly lr toward zero, the others not at all.
"""
from __future__ import annotations

import copy
import json
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Iterator

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

import probsent.settings as settings
from probsent.errors import InvalidValueError
from probsent.models import WLO
from probsent.settings import TrainConfig, option
from probsent.training.losses import (LOSS_TYPES, Loss, LossSetup, TrainingStep, build_losses, register_loss,
                                      unregister_loss)
from probsent.training.trainer import Trainer
from tests.helpers import write_toy_pairs

LR = 1e-3
HUGE = 1e6


@dataclass
class ToyConfig(TrainConfig):
    """The settings plus the toy's flag, ``--toy-weight``."""

    toy_weight: float = option(0.0, "(toy) w of the pull of the translations toward zero; 0 = off",
                               low=0.0, high=1e9)


class ToyPull(Loss):
    """T above, for a model with per-word translations (``word_shifts``)."""

    name = "toy"

    def __init__(self, weight: float) -> None:
        self.weight = weight

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "ToyPull | None":
        weight = getattr(setup.config, "toy_weight", 0.0)
        return cls(weight) if weight else None

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        shifts = F.embedding(step.words, step.encoder.word_shifts(), sparse=True)  # sparse gradient
        return {"toy": self.weight * shifts.square().sum() / step.pairs}


@contextmanager
def toy_loss() -> Iterator[None]:
    """The toy loss registered and its setting declared (as ``probsent/settings.py`` declares one)
    for a while, both removed again whatever happens meanwhile."""
    register_loss(ToyPull)
    try:
        with pytest.MonkeyPatch.context() as patch:
            for spec in fields(ToyConfig):
                if spec.name not in settings.SETTINGS:
                    patch.setitem(settings._DECLARED, spec.name, spec)
                    patch.setitem(settings._HINTS, spec.name, float)
            yield
    finally:
        unregister_loss(ToyPull.name)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, np.ndarray, dict]:
    """The translations before and after one step with ``--toy-weight`` HUGE on the toy pairs, by the
    real Trainer (the engine chosen automatically), and the log's record."""
    root = tmp_path_factory.mktemp("toy")
    with toy_loss(), pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBSENT_CACHE", str(root / "cache"))
        config = ToyConfig(data=str(write_toy_pairs(root / "pairs.tsv", 2)), out=str(root / "out"), dim=8,
                           batch_size=8, megabatch=1, max_steps=1, lr=LR, toy_weight=HUGE)
        trainer = Trainer(config, progress=False, log=lambda _: None)
        assert [loss.name for loss in trainer.losses] == ["margin", "prior", "toy"]
        before = copy.deepcopy(trainer.encoder.shift.weight.detach()).double().numpy()
        trainer.train()
        after = trainer.encoder.shift.weight.detach().double().numpy()
    assert trainer.config.engine == "torch"  # auto: the fast engine does not implement the toy
    return before, after, json.loads((root / "out" / "log.jsonl").read_text().splitlines()[-1])


def test_the_toy_is_known_only_while_registered_its_flag_checked_and_at_0_off() -> None:
    with toy_loss():
        assert LOSS_TYPES["toy"] is ToyPull
        with pytest.raises(InvalidValueError, match="--toy-weight: must be from 0 to "):
            ToyConfig(toy_weight=-1.0)
        setup = LossSetup(ToyConfig(), WLO(10), np.ones(10, np.int64))
        assert [loss.name for loss in build_losses(setup)] == ["margin", "prior"]
    assert "toy" not in LOSS_TYPES


def test_the_toy_part_is_logged_with_its_value_by_hand(trained) -> None:
    before, after, record = trained
    used = np.flatnonzero((after != before).any(axis=1))  # the step's words: only their rows move
    assert len(used) > 5
    by_hand = HUGE / 8 * float((before[used] ** 2).sum())
    assert record["loss_parts"]["toy"] == pytest.approx(by_hand, rel=1e-5)
    assert set(record["loss_parts"]) == {"margin", "prior", "toy"}
    assert record["loss"] == pytest.approx(sum(record["loss_parts"].values()), rel=1e-6)


def test_the_toy_moves_every_translation_of_the_step_by_lr_toward_zero(trained) -> None:
    before, after, _ = trained
    used = (after != before).any(axis=1)
    clear = np.abs(before[used]) > 1e-3  # where the toy's gradient dwarfs the others' (nearly all)
    assert clear.mean() > 0.95
    expected = before[used] - LR * np.sign(before[used])
    np.testing.assert_allclose(after[used][clear], expected[clear], atol=1e-6)
    np.testing.assert_array_equal(after[~used], before[~used])
