"""What a training loss is: an object built from the run's settings that returns its named parts.

A loss class declares its ``name``, whether it reads the encoders' KL terms (``needs_kl``), and
:meth:`Loss.from_setup`, which builds it from a run's :class:`LossSetup` (or returns None where the
settings turn it off). ``@register_loss`` adds it to :data:`LOSS_TYPES`; the trainer builds every
registered loss that applies (:func:`build_losses`), sums the parts they return (in that order) and
logs each part by its name.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np
import torch
from torch import Tensor

from probsent.models.base import Encoding, SentenceEncoder

if TYPE_CHECKING:
    from probsent.settings import TrainConfig


@dataclass(frozen=True)
class LossSetup:
    """What a loss may read to build itself: the run's settings, its model (new or resumed), the
    training count of every vocabulary word."""

    config: "TrainConfig"
    encoder: SentenceEncoder
    word_counts: np.ndarray


@dataclass
class TrainingStep:
    """One mini-batch as the losses see it: ``encoded`` holds s1, s2, n1 and n2 (``pairs`` rows each, in
    that order; with their KL terms where a loss ``needs_kl``), sentence k being ``ids[offsets[k]:offsets[k + 1]]``
    and the step's sentences ``sentences``."""

    encoder: SentenceEncoder
    encoded: Encoding
    pairs: int
    ids: np.ndarray
    offsets: np.ndarray
    sentences: np.ndarray
    device: torch.device

    def sides(self) -> tuple[Encoding, Encoding, Encoding, Encoding]:
        """The encodings of s1, s2, n1 and n2."""
        s1, s2, n1, n2 = (self.encoded.index(slice(i * self.pairs, (i + 1) * self.pairs)) for i in range(4))
        return s1, s2, n1, n2

    @cached_property
    def words(self) -> Tensor:
        """The distinct vocabulary ids of the step's sentences, on the model's device."""
        ids, offsets = self.ids, self.offsets
        unique = np.unique(np.concatenate([ids[offsets[k]:offsets[k + 1]] for k in self.sentences]))
        return torch.from_numpy(unique).to(self.device)


class Loss:
    """A term of the training objective; called on a :class:`TrainingStep`, it returns its parts by name."""

    name: ClassVar[str]
    """The loss's name in messages (the engine's refusal)."""
    needs_kl: ClassVar[bool] = False
    """Whether it reads the KL terms of the encodings (the model then computes them)."""

    @classmethod
    def from_setup(cls, setup: LossSetup) -> "Loss | None":
        """The loss for a run, or None where its settings (or its model) turn it off."""
        raise NotImplementedError

    def __call__(self, step: TrainingStep) -> dict[str, Tensor]:
        """Its named parts on ``step``, each a scalar tensor; the objective is the sum of every loss's parts."""
        raise NotImplementedError


LOSS_TYPES: dict[str, type[Loss]] = {}
"""Every registered loss by its name, in the order the trainer adds their parts."""

L = TypeVar("L", bound=type[Loss])


def register_loss(cls: L) -> L:
    """Class decorator: make ``cls`` a loss the trainer builds (after those registered before it)."""
    if cls.name in LOSS_TYPES:
        raise ValueError(f"a loss named {cls.name!r} is already registered")
    LOSS_TYPES[cls.name] = cls
    return cls


def unregister_loss(name: str) -> None:
    """Remove the loss ``name`` (a test's toy)."""
    del LOSS_TYPES[name]


def build_losses(setup: LossSetup) -> list[Loss]:
    """Every registered loss that applies to the run of ``setup``, in registration order."""
    built = (cls.from_setup(setup) for cls in LOSS_TYPES.values())
    return [loss for loss in built if loss is not None]


def named_parts(losses: list[Loss], step: TrainingStep) -> dict[str, Tensor]:
    """Every part of ``losses`` on ``step`` by name, in their order; two parts of one name are a
    ValueError (the second would hide the first from the sum)."""
    parts: dict[str, Tensor] = {}
    for loss in losses:
        for name, value in loss(step).items():
            if name in parts:
                raise ValueError(f"two losses return a part named {name!r}")
            parts[name] = value
    return parts


def total_loss(parts: dict[str, Tensor]) -> Tensor:
    """The sum of ``parts``, added in their order (the first part, plus the second, ...)."""
    values = iter(parts.values())
    total = next(values)
    for value in values:
        total = total + value
    return total
