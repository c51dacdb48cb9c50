"""The model registry: every sentence encoder by the name used on the command line and in
model files.

A model is one file: a :class:`~probsent.models.base.SentenceEncoder` subclass whose
``description`` (:class:`probsent.model_descriptions.ModelDescription`: its name, label,
capabilities, settings and weights) says what it is without torch, decorated with
:func:`register_model`, which adds the description to those every model reader knows. The built-in models are registered when :mod:`probsent.models`
imports their files; a model defined elsewhere (a plug-in, a test) registers itself the same
way and can be removed again with :func:`unregister_model`.
"""
from __future__ import annotations

from typing import Any, Mapping, TypeVar, cast

import numpy as np
import torch

from probsent.errors import InvalidValueError, ProbsentError
from probsent.model_descriptions import ModelDescription, describe, forget
from probsent.models.base import SentenceEncoder, WordEntropyTerms

MODEL_TYPES: dict[str, type[SentenceEncoder]] = {}
"""Every registered model class by its ``type_name``, in the order of registration."""

Model = TypeVar("Model", bound=type[SentenceEncoder])


def register_model(cls: Model) -> Model:
    """Register ``cls`` under its ``type_name`` (a class decorator), and its description with
    it. Its constructor's keywords after ``vocab_size`` must be its description's settings, with
    the same defaults (a TypeError otherwise). Registering another class under a name already
    taken is a ValueError; registering the same class again does nothing."""
    described = cls.__dict__.get("description")
    if not isinstance(described, ModelDescription):
        raise TypeError(f"{cls.__name__} must declare its description (a ModelDescription) to be registered")
    if cls.hyper_parameters() != dict(described.settings):
        raise TypeError(f"{cls.__name__}: its constructor's keywords {cls.hyper_parameters()} are not the "
                        f"settings of its description {dict(described.settings)}")
    known = MODEL_TYPES.get(cls.type_name)
    if known is not None and known is not cls:
        raise ValueError(f"model type {cls.type_name!r} is already registered to {known.__name__}")
    describe(described)
    MODEL_TYPES[cls.type_name] = cls
    return cls


def unregister_model(type_name: str) -> None:
    """Remove a registered model type and its description (no error if it is not registered)."""
    MODEL_TYPES.pop(type_name, None)
    forget(type_name)


def model_class(type_name: Any) -> type[SentenceEncoder]:
    """The registered class of ``type_name``; InvalidValueError naming the known ones otherwise."""
    if type_name not in MODEL_TYPES:
        raise InvalidValueError(f"unknown model type {type_name!r}; expected one of {', '.join(MODEL_TYPES)}")
    return MODEL_TYPES[type_name]


def build_model(config: dict[str, Any], weights: Mapping[str, np.ndarray] | None = None) -> SentenceEncoder:
    """Rebuild an encoder from :meth:`SentenceEncoder.config` output, with ``weights`` (NumPy
    arrays by name, as :func:`probsent.model_directory.read_model` gives them, checked) where
    given, in evaluation mode, else freshly initialized."""
    config = dict(config)
    encoder = model_class(config.pop("type", None))(**config)
    if weights is None:
        return encoder
    encoder.load_state_dict({name: torch.from_numpy(array) for name, array in weights.items()})
    return encoder.eval()


def labels_of(models: list[type[SentenceEncoder]]) -> str:
    """The labels of ``models`` in words ("WLO", "WLO or LSTMGaussian"), for messages."""
    labels = list(dict.fromkeys(cls.label for cls in models))
    return " or ".join(labels) if labels else "no registered"


def with_word_entropy_terms(encoder: SentenceEncoder, purpose: str) -> WordEntropyTerms:
    """``encoder`` as a model with per-word entropy terms (``has_word_entropy_terms``), for
    ``purpose`` ("explain"); a one-line ProbsentError naming the models that have them otherwise."""
    if not encoder.has_word_entropy_terms:
        able = labels_of([cls for cls in MODEL_TYPES.values() if cls.has_word_entropy_terms])
        raise ProbsentError(f"{purpose} needs a {able} model, not {encoder.type_name}")
    return cast(WordEntropyTerms, encoder)
