"""Every training setting, with the paper's defaults."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class TrainConfig:
    """Settings of one training run; each field is also a ``probsent train`` flag."""

    model: str = "wlo"
    data: str = ""
    out: str = ""
    max_pairs: int | None = None  # None: every pair of the file
    epochs: int = 1
    seed: int = 1
    max_per_source: int | None = None  # cap on the pairs of each source (file's third column)
    source_caps: str | None = None  # "name=N,name=N": per-source caps (0 drops a source)
    min_tokens: int = 1  # pairs with a shorter side are dropped
    max_overlap: float = 1.0  # pairs whose sides' word sets overlap more (Jaccard) are dropped
    min_overlap: float = 0.0  # ... or less
    vocab_size: int = 50_000  # most frequent words kept, plus <unk>
    min_count: int = 1  # words seen fewer times in the training pairs become <unk> (ours; 1: the paper's)
    max_tokens: int = 100  # longer training sentences are cut
    dim: int = 50
    hidden: int = 100  # LSTM models
    batch_size: int = 100
    megabatch: int = 20  # mini-batches per mega-batch for negative mining
    lr: float = 1e-3
    margin: float | None = None  # None: 1.0 for probabilistic models, 0.4 otherwise
    prior_weight: float = 1e-4  # lambda on the summed KL terms (probabilistic models)
    l2_weight: float = 1e-6  # on all weights (deterministic models)
    scramble: float = 0.4  # probability of shuffling a sentence's words (LSTM models, WLO)
    scale_init_mean: float = 1.0  # WLO: A ~ N(mean, std^2)
    scale_init_std: float = 0.1
    shift_init_std: float = 0.1  # WLO: B ~ N(0, std^2)
    rarity_init: float = 0.0  # WLO (ours): word terms start at this x (log count - average token's); 0: the paper's
    false_negatives: str = "keep"  # keep (the paper's) | remine: mine again past negatives sharing >= words (ours)
    init_std: float = 0.1  # word vectors of the other models
    mean_init_gain: float = 1.0  # LSTMGaussian: the mean map's initial weights times this
    eval_every: int = 500  # steps between STS 2017 validations and checkpoints
    max_seconds: float | None = None  # stop (after a checkpoint) once this much time is spent
    max_steps: int | None = None  # stop (after a checkpoint) at the first mega-batch end past this
    data_dir: str | None = None  # evaluation data (STS 2017), for validation
    engine: str = "auto"  # fast (compiled CPU kernels, WLO only) | torch (the reference) | auto
    device: str = "auto"  # cpu | cuda (the torch engine) | auto: cuda when available

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})
