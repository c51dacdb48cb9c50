"""The negative miner of a mega-batch: for every sentence, the most similar other sentence that
is not its paraphrase (by the similarity the loss uses), then, where asked, the hardness capped
(``--hardness-cap``).

The plain searches (:mod:`probsent.training.mining`, :mod:`probsent.training.false_negatives`)
are the specification; the compiled engine's and kernels' results are tested equal to them.
"""
from __future__ import annotations

import numpy as np
import torch

from probsent.models.base import Encoding, SentenceEncoder
from probsent.models.batching import encode_by_length
from probsent.training.config import TrainConfig
from probsent.training.false_negatives import remine, similarity_ceilings
from probsent.training.fast.engine import FastWLOEngine, fast_engine_available
from probsent.training.mining import mine_negatives, partners_of_stacked_pairs


def megabatch_negatives(config: TrainConfig, sentences: np.ndarray, count: int, encoder: SentenceEncoder,
                        ids: np.ndarray, offsets: np.ndarray, fast: FastWLOEngine | None) -> np.ndarray:
    """The mined negative (a row of ``sentences``: all s1 of ``count`` pairs, then all s2) of every
    sentence of the mega-batch, by the compiled engine where it runs, else by the torch model."""
    partner = partners_of_stacked_pairs(count)
    pooled = config.similarity_distance == "pooled"
    if fast is not None:
        negative, encoded = fast.negatives(sentences, count)
    else:
        encoder.eval()
        with torch.no_grad():
            encoded = encode_by_length(encoder, ids, offsets, sentences, config.batch_size)
        encoder.train()
        negative = mine_negatives(encoded, partner, pooled=pooled).numpy()
    if config.hardness_cap is None:
        return negative
    encoded = encoded.for_similarity()
    on_cpu = Encoding(encoded.mean.cpu(), None if encoded.logvar is None else encoded.logvar.cpu())
    partner = partner.numpy()
    ceiling = similarity_ceilings(on_cpu, partner, config.hardness_cap, pooled)
    found = None
    if fast_engine_available() and not pooled:
        from probsent.training.fast.false_negative_kernels import remine_fast
        found = remine_fast(on_cpu, partner, negative, ceiling)
    return found if found is not None else remine(on_cpu, partner, negative, ceiling, pooled)
