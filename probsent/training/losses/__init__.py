"""Training losses, one file each with its formula, arguments and reference.

Each is a :class:`~probsent.training.losses.base.Loss`: built from a run's settings, it returns
its named parts on a mini-batch; the trainer sums the parts of every loss that applies and logs
each by name. Importing this package registers them, in the order their parts are added:
margin, prior, L2, rarity anchor. To add a loss: a file here with its formula, reference and
``@register_loss`` class, imported below, and its setting (``probsent/settings.py``). The fast
engine trains only the losses of ``FastWLOEngine.losses`` (else the torch loop trains the run).
"""
from probsent.training.losses.base import (LOSS_TYPES, Loss, LossSetup, TrainingStep, build_losses, named_parts,
                                           register_loss, total_loss, unregister_loss)
from probsent.training.losses.margin import MarginLoss
from probsent.training.losses.prior import KLPrior
from probsent.training.losses.l2 import L2Penalty
from probsent.training.losses.rarity_anchor import RarityAnchor

__all__ = ["LOSS_TYPES", "KLPrior", "L2Penalty", "Loss", "LossSetup", "MarginLoss", "RarityAnchor",
           "TrainingStep", "build_losses", "named_parts", "register_loss", "total_loss", "unregister_loss"]
