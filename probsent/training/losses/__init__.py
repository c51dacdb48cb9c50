"""Training losses, one file each with its formula, arguments and reference.

``LOSS`` names the loss the trainer optimizes (the torch loop, the reference); a compiled
engine declares the losses its kernels implement (``FastWLOEngine.losses``) and refuses any
other by name. To add a loss: a file here with its formula and reference and a ``NAME``, its
use in ``Trainer._step``, and either the kernels' version or nothing (the fast engine then
refuses it and the torch loop trains it).
"""
from probsent.training.losses.margin import NAME as LOSS
from probsent.training.losses.margin import margin_loss, probabilistic_batch_loss
from probsent.training.losses.rarity_anchor import rarity_anchor_penalty

__all__ = ["LOSS", "margin_loss", "probabilistic_batch_loss", "rarity_anchor_penalty"]
