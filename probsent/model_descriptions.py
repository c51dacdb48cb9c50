"""What each model type is, without torch: the one description that the torch classes
(:mod:`probsent.models`), the NumPy encoder (:mod:`probsent.inference.array_encoder`), the
settings' checks (:mod:`probsent.settings`) and the model-file checks
(:mod:`probsent.model_directory`) all read.

A description is data: its name, label, whether sentences are Gaussians, its settings with
their defaults (the ranges are the settings' own, declared once in :mod:`probsent.settings`),
and its weights' names with their shapes in terms of those settings. The built-in models are
described here; a model defined elsewhere (a plug-in, a test) describes itself and is added by
:func:`probsent.models.register_model`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["DESCRIPTIONS", "ModelDescription", "describe", "forget", "model_names"]


@dataclass(frozen=True)
class ModelDescription:
    """One model type.

    ``settings``: each setting (a constructor keyword after ``vocab_size``) with its default, in
    order. ``weights``: each tensor's name and shape, a dimension written as a number, a
    setting's name (``"dim"``, ``"vocab_size"``) or a multiple of one (``"4*hidden"``).
    ``word_entropy_terms``: a sentence's entropy is its start's plus one exact term per word.
    ``order_sensitive``: False where word order cannot matter (training then does not scramble).
    """

    name: str
    label: str
    probabilistic: bool
    default_margin: float
    settings: Mapping[str, Any]
    weights: Mapping[str, tuple[int | str, ...]]
    word_entropy_terms: bool = False
    order_sensitive: bool = True


DESCRIPTIONS: dict[str, ModelDescription] = {}
"""Every described model type by its name, in the order described."""


def describe(description: ModelDescription) -> ModelDescription:
    """Add ``description``; another description under a name already taken is a ValueError,
    the same one again does nothing."""
    known = DESCRIPTIONS.get(description.name)
    if known is not None and known != description:
        raise ValueError(f"model type {description.name!r} is already described otherwise")
    DESCRIPTIONS[description.name] = description
    return description


def forget(name: str) -> None:
    """Remove a model type's description (no error if there is none)."""
    DESCRIPTIONS.pop(name, None)


def model_names() -> tuple[str, ...]:
    """The described model types' names, in order (the choices of ``--model``)."""
    return tuple(DESCRIPTIONS)


_TABLE = ("vocab_size", "dim")  # one row of dim numbers per word
_LSTM = {"embedding.weight": _TABLE, "lstm.weight_ih_l0": ("4*hidden", "dim"),
         "lstm.weight_hh_l0": ("4*hidden", "hidden"), "lstm.bias_ih_l0": ("4*hidden",), "lstm.bias_hh_l0": ("4*hidden",)}

WLO = describe(ModelDescription(
    "wlo", "WLO", True, 1.0,
    {"dim": 50, "scale_init_std": 0.1, "shift_init_std": 0.1, "scale_init_mean": 1.0, "start_variance": 1.0},
    {"scale.weight": _TABLE, "shift.weight": _TABLE}, word_entropy_terms=True))
WORDAVG = describe(ModelDescription("wordavg", "Wordavg", False, 0.4, {"dim": 50, "init_std": 0.1},
                                    {"embedding.weight": _TABLE}, order_sensitive=False))
WORDSUM = describe(ModelDescription("wordsum", "Wordsum", False, 0.4, {"dim": 50, "init_std": 0.1},
                                    {"embedding.weight": _TABLE}, order_sensitive=False))
LSTMAVG = describe(ModelDescription("lstmavg", "LSTMavg", False, 0.4, {"dim": 50, "hidden": 100, "init_std": 0.1},
                                    _LSTM))
LSTMGAUSSIAN = describe(ModelDescription(
    "lstmgaussian", "LSTMGaussian", True, 1.0, {"dim": 50, "hidden": 100, "init_std": 0.1, "mean_init_gain": 1.0},
    {**_LSTM, "to_mean.weight": ("hidden", "hidden"), "to_mean.bias": ("hidden",),
     "to_logvar.weight": ("hidden", "hidden"), "to_logvar.bias": ("hidden",)}))
