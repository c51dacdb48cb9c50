"""The negative miner of a mega-batch: for every sentence, the most similar other sentence that
is not its paraphrase (``--mine-by``), then, where asked, false negatives re-mined
(``--false-negatives remine``) and the hardness capped (``--hardness-cap``).

The plain searches (:mod:`probsent.training.mining`, :mod:`probsent.training.false_negatives`)
are the specification; the compiled engine's and kernels' results are tested equal to them.
"""
from __future__ import annotations

import numpy as np
import torch

from probsent.models.base import Encoding, SentenceEncoder
from probsent.models.batching import encode_by_length
from probsent.training.config import TrainConfig
from probsent.training.false_negatives import remine, similarity_ceilings, word_sets
from probsent.training.fast.engine import FastWLOEngine, fast_engine_available
from probsent.training.mining import mine_negatives, partners_of_stacked_pairs


def megabatch_negatives(config: TrainConfig, sentences: np.ndarray, count: int, encoder: SentenceEncoder,
                        ids: np.ndarray, offsets: np.ndarray, fast: FastWLOEngine | None) -> np.ndarray:
    """The mined negative (a row of ``sentences``: all s1 of ``count`` pairs, then all s2) of every
    sentence of the mega-batch, by the compiled engine where it runs, else by the torch model."""
    partner = partners_of_stacked_pairs(count)
    if fast is not None and config.mine_by == "loss":
        negative, encoded = fast.negatives(sentences, count)
    else:
        if fast is not None:
            mean, logvar = fast.encode(sentences)
            encoded = Encoding(torch.from_numpy(mean), torch.from_numpy(logvar))
        else:
            encoder.eval()
            with torch.no_grad():
                encoded = encode_by_length(encoder, ids, offsets, sentences, config.batch_size)
            encoder.train()
        if config.mine_by == "means":  # cosine of the means (--mine-by means)
            encoded = Encoding(encoded.mean, None)
        negative = mine_negatives(encoded, partner).numpy()
    if config.false_negatives == "keep" and config.hardness_cap is None:
        return negative
    on_cpu = Encoding(encoded.mean.cpu(), None if encoded.logvar is None else encoded.logvar.cpu())
    words = word_sets(ids, offsets, sentences) if config.false_negatives == "remine" else None
    partner = partner.numpy()
    ceiling = None if config.hardness_cap is None else similarity_ceilings(on_cpu, partner, config.hardness_cap)
    found = None
    if fast_engine_available():
        from probsent.training.fast.false_negative_kernels import remine_fast
        found = remine_fast(on_cpu, partner, negative, words, ceiling)
    return found if found is not None else remine(on_cpu, partner, negative, words, ceiling)
