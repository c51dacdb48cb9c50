"""Training from Python: the public names behind ``probsent train`` (docs/TRAINING.md).

``Trainer(TrainConfig(model="wlo", data="pairs.tsv", out="run")).train()`` is
``probsent train --model wlo --data pairs.tsv --out run``: the same settings (``SETTINGS``, every
one declared once; ``SCRAMBLE``, the recipe's fixed word-order scrambling probability), files and
checkpoints. ``load_mapped_pairs`` reads pairs as ``--data`` does (a ``MappedPairs``),
``apply_mixture`` keeps those the mixture settings keep, ``build_vocabulary`` picks the words that
get an entry, so an untrained model can be built exactly as training starts one;
``tune_threshold``, ``predict_specific`` and ``accuracy_at_tuned_threshold`` are the measure
``best-news/`` is chosen by (specific iff score > a threshold tuned on labelled rows), for a
user's own labelled sentences; ``pearson`` is the correlation ``best/`` is chosen by (on STS 2017).

The names are imported on first use: ``import probsent.training`` loads neither torch nor the
trainer.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from probsent.data.mapped_pairs import MappedPairs, load_mapped_pairs
    from probsent.data.mixture import apply_mixture
    from probsent.settings import SCRAMBLE, SETTINGS, TrainConfig
    from probsent.training.model_selection import accuracy_at_tuned_threshold, pearson, predict_specific, tune_threshold
    from probsent.training.trainer import Trainer
    from probsent.training.training_data import build_vocabulary

__all__ = ["Trainer", "TrainConfig", "SETTINGS", "SCRAMBLE", "MappedPairs", "load_mapped_pairs", "apply_mixture",
           "build_vocabulary", "tune_threshold", "predict_specific", "accuracy_at_tuned_threshold", "pearson"]


def __getattr__(name: str) -> Any:
    """Each public name, imported from the module that defines it when first asked for."""
    if name == "Trainer":
        from probsent.training import trainer as module
    elif name in ("TrainConfig", "SETTINGS", "SCRAMBLE"):
        from probsent import settings as module
    elif name in ("MappedPairs", "load_mapped_pairs"):
        from probsent.data import mapped_pairs as module
    elif name == "apply_mixture":
        from probsent.data import mixture as module
    elif name == "build_vocabulary":
        from probsent.training import training_data as module
    elif name in ("tune_threshold", "predict_specific", "accuracy_at_tuned_threshold", "pearson"):
        from probsent.training import model_selection as module
    else:
        raise AttributeError(f"module 'probsent.training' has no attribute {name!r}")
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted(__all__)
