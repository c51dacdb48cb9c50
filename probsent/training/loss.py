"""The margin loss on paraphrase pairs and their mined negatives."""
from __future__ import annotations

import torch
from torch import Tensor

from probsent.models.base import Encoding
from probsent.similarity import paired_similarity


def margin_loss(s1: Encoding, s2: Encoding, n1: Encoding, n2: Encoding, margin: float) -> Tensor:
    """Per pair: max(0, margin - d(s1,s2) + d(s1,n1)) + max(0, margin - d(s1,s2) + d(s2,n2))."""
    positive = paired_similarity(s1, s2)
    return (torch.relu(margin - positive + paired_similarity(s1, n1))
            + torch.relu(margin - positive + paired_similarity(s2, n2)))
