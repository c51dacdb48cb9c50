"""The model registry: every sentence encoder by the name used on the command line and in
model files.

A model is one file: a :class:`~probsent.models.base.SentenceEncoder` subclass that declares
its name, label, capabilities and hyper-parameters (its constructor's keywords), decorated
with :func:`register_model`. The built-in models are registered when :mod:`probsent.models`
imports their files; a model defined elsewhere (a plug-in, a test) registers itself the same
way and can be removed again with :func:`unregister_model`.
"""
from __future__ import annotations

import inspect
from typing import Any, TypeVar, cast

from probsent.errors import InvalidValueError, ProbsentError
from probsent.models.base import SentenceEncoder, WordEntropyTerms

MODEL_TYPES: dict[str, type[SentenceEncoder]] = {}
"""Every registered model class by its ``type_name``, in the order of registration."""

Model = TypeVar("Model", bound=type[SentenceEncoder])


def register_model(cls: Model) -> Model:
    """Register ``cls`` under its ``type_name`` (a class decorator). Registering another class
    under a name already taken is a ValueError; registering the same class again does nothing."""
    for declared in ("type_name", "label", "probabilistic", "default_margin"):
        if not hasattr(cls, declared):
            raise TypeError(f"{cls.__name__} must declare {declared} to be registered")
    no_default = [p.name for p in inspect.signature(cls.__init__).parameters.values()
                  if p.name in cls.hyper_parameters() and p.default is p.empty]
    if no_default:
        raise TypeError(f"{cls.__name__}: hyper-parameters need defaults ({', '.join(no_default)})")
    known = MODEL_TYPES.get(cls.type_name)
    if known is not None and known is not cls:
        raise ValueError(f"model type {cls.type_name!r} is already registered to {known.__name__}")
    MODEL_TYPES[cls.type_name] = cls
    return cls


def unregister_model(type_name: str) -> None:
    """Remove a registered model type (no error if it is not registered)."""
    MODEL_TYPES.pop(type_name, None)


def model_class(type_name: Any) -> type[SentenceEncoder]:
    """The registered class of ``type_name``; InvalidValueError naming the known ones otherwise."""
    if type_name not in MODEL_TYPES:
        raise InvalidValueError(f"unknown model type {type_name!r}; expected one of {', '.join(MODEL_TYPES)}")
    return MODEL_TYPES[type_name]


def model_types() -> tuple[str, ...]:
    """The registered model names, in registration order."""
    return tuple(MODEL_TYPES)


def build_model(config: dict[str, Any]) -> SentenceEncoder:
    """Rebuild an encoder from :meth:`SentenceEncoder.config` output."""
    config = dict(config)
    return model_class(config.pop("type", None))(**config)


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
