"""Training and encoding throughput of every model on shared paraphrase pairs.

Prints, per model: training pairs/s (mining included: the whole loop over the pairs, after
the pairs are loaded; WLO with its default engine, the fast one) and encoding sentences/s
from raw text (tokenization included); and the same for a WLO computed by a naive loop over
positions (with the torch engine), as a ratio. Only prints; no asserts.
benchmarks/bench_engines.py compares the two WLO training engines.

    python benchmarks/bench_training.py [--pairs 20000] [--models wlo,wordsum,...]
"""
from __future__ import annotations

import argparse
import gzip
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from probsent.api import SentenceModel  # noqa: E402
from probsent.gaussian import kl_to_standard_normal  # noqa: E402
from probsent.models.base import Encoding, padding_mask  # noqa: E402
from probsent.models import MODEL_TYPES  # noqa: E402
from probsent.models.wlo import WLO  # noqa: E402
from probsent.settings import TrainConfig  # noqa: E402
from probsent.training.trainer import Trainer  # noqa: E402


class NaiveLoopWLO(WLO):
    """WLO with the recurrence mu_i = A_i (mu_{i-1} + B_i) run one position at a time."""

    type_name = "wlo"

    def trajectory(self, ids, lengths, final_only=False):
        real = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).unsqueeze(-1)
        a = torch.where(real, self.scale(ids), 1.0)
        b = self.shift(ids) * real
        mean = torch.zeros(ids.shape[0], self.dim)
        logvar = torch.zeros(ids.shape[0], self.dim)
        means, logvars = [], []
        for i in range(ids.shape[1]):
            mean = a[:, i] * (mean + b[:, i])
            logvar = logvar + 2 * a[:, i].abs().log()
            means.append(mean)
            logvars.append(logvar)
        if final_only:
            return mean, logvar
        return torch.stack(means, 1), torch.stack(logvars, 1)

    def forward(self, ids, lengths, with_kl=False):
        """Training's prior from the trajectory above, as autograd differentiates it."""
        if not with_kl:
            return Encoding(*self.trajectory(ids, lengths, final_only=True))
        mean, logvar = self.trajectory(ids, lengths)
        kl = (kl_to_standard_normal(mean, logvar) * padding_mask(ids, lengths)).sum(1)
        return Encoding(mean[:, -1], logvar[:, -1], kl)

    def encode_batches(self, batches, with_kl=False):
        """Batch by batch through the forward above."""
        return [self(ids, lengths, with_kl=with_kl) for ids, lengths in batches]


def read_sentences(path: Path, count: int) -> list[str]:
    sentences = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            sentences.extend(fields[:2])
            if len(sentences) >= count:
                break
    return sentences[:count]


def bench_model(name: str, data: Path, pairs: int, workdir: Path, naive: bool = False) -> tuple[float, float]:
    config = TrainConfig(model=name, data=str(data), out=str(workdir / f"{name}{'-naive' if naive else ''}"),
                         max_pairs=pairs, eval_every=10**9, engine="torch" if naive else "auto")
    trainer = Trainer(config, progress=False, log=lambda _: None)
    if naive:
        naive_model = NaiveLoopWLO(len(trainer.vocab))
        naive_model.load_state_dict(trainer.encoder.state_dict())
        trainer.encoder = naive_model
        trainer.optimizer = trainer._optimizer(naive_model)
    start = time.perf_counter()
    trainer.train()
    train_rate = trainer.data.num_pairs / (time.perf_counter() - start)
    model = SentenceModel(trainer.encoder, trainer.vocab)
    sentences = read_sentences(data, 20_000)
    model.encode(sentences[:500])  # warm-up
    start = time.perf_counter()
    model.encode(sentences)
    encode_rate = len(sentences) / (time.perf_counter() - start)
    return train_rate, encode_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data/paraphrase/pairs.tsv.gz"))
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--models", default=",".join(MODEL_TYPES))
    parser.add_argument("--naive", action="store_true", help="also time the naive-loop WLO")
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads, "
          f"torch {torch.__version__}, {args.pairs:,} training pairs, 20,000 sentences encoded\n")
    print("| model | training pairs/s (mining included) | encoding sentences/s (raw text) |")
    print("|---|---:|---:|")
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            rates[name] = bench_model(name, Path(args.data), args.pairs, Path(tmp))
            print(f"| {name} | {rates[name][0]:,.0f} | {rates[name][1]:,.0f} |", flush=True)
        if args.naive:
            naive = bench_model("wlo", Path(args.data), args.pairs, Path(tmp), naive=True)
            print(f"| wlo, naive loop over positions | {naive[0]:,.0f} | {naive[1]:,.0f} |")
            if "wlo" in rates:
                print(f"\nWLO closed form / naive loop: training x{rates['wlo'][0] / naive[0]:.2f}, "
                      f"encoding x{rates['wlo'][1] / naive[1]:.2f}")


if __name__ == "__main__":
    main()
