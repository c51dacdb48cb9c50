"""The fast WLO training engine: a mega-batch (encoding, mining, steps) by compiled kernels.

It trains, in place, the :class:`probsent.models.WLO` tensors and lazy-Adam state of the torch loop
of :class:`probsent.training.trainer.Trainer` (the reference), with the random numbers of its generator
in the reference's order, so checkpoints, resuming (with either engine) and models are the same files.
Only rounding differs (the kernels sum in their own order, partly in float64), and so a negative may
differ where two candidates' similarities are within float32 rounding of each other.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Callable

import numpy as np
import torch

from probsent.models import WLO
from probsent.models.base import Encoding, SentenceEncoder
from probsent.training.losses import KLPrior, Loss, MarginLoss, RarityAnchor
from probsent.training.mining import mine_negatives, partners_of_stacked_pairs

NO_TARGETS = np.zeros(0)  # the kernel's anchor targets when --rarity-anchor is off


def mine_fastest(encoded: Encoding, partner: torch.Tensor) -> np.ndarray:
    """:func:`probsent.training.mining.mine_negatives` of Gaussians on the CPU by the compiled
    brute-force kernel where float32's range suffices, else by the reference."""
    if encoded.logvar is not None and encoded.mean.device.type == "cpu":
        from probsent.training.fast.mining_kernels import mine_gaussian_negatives

        found = mine_gaussian_negatives(encoded.mean.numpy(), encoded.logvar.numpy(), partner.numpy())
        if found is not None:
            return found
    return mine_negatives(encoded, partner).numpy()


def compile_kernels() -> float:
    """Compile (or load from numba's cache) every kernel on a tiny problem; returns seconds."""
    from probsent.training.fast import mining_kernels, wlo_kernels

    start = time.perf_counter()
    scale = np.ones((3, 2), np.float32)
    shift = np.zeros((3, 2), np.float32)
    ids = np.array([1, 2, 1, 2, 1, 2, 1, 2], np.int64)
    starts, lengths = np.arange(0, 8, 2, dtype=np.int64), np.full(4, 2, np.int64)
    mean, logvar = wlo_kernels.encode_final(ids, starts, lengths, scale, shift)
    mining_kernels.mine_gaussian_negatives(mean, logvar, np.array([2, 3, 0, 1]))
    moments = [np.zeros_like(scale) for _ in range(4)]
    wlo_kernels.pack_scrambled(ids, np.arange(0, 9, 2, dtype=np.int64), np.arange(4), np.array([4]),
                               np.array([2]), np.linspace(0, 1, 12).astype(np.float32), 0.5)
    wlo_kernels.train_steps(ids, starts, lengths, np.array([1], np.int64), scale, shift, *moments, 0,
                            1e-3, 0.9, 0.999, 1e-8, 1.0, 1e-4, np.full(3, -1, np.int64),
                            1e-2, np.zeros(3))
    return time.perf_counter() - start


COMPILE_NOTE_AFTER = 2.0  # seconds of compiling before the note (numba's cache loads in well under one)


def compile_kernels_saying_so(log: Callable[[str], None], after: float | None = None) -> float:
    """:func:`compile_kernels`, telling ``log`` what is going on: a first run on a machine compiles
    for most of a minute, silent until now (issue 50), so a note goes out once compiling has lasted
    ``after`` seconds (default :data:`COMPILE_NOTE_AFTER`; a load from numba's cache stays silent),
    and the time it took at the end. Returns the seconds."""
    note = threading.Timer(COMPILE_NOTE_AFTER if after is None else after, log,
                           ["fast engine: compiling its kernels, once per machine (up to about a minute; "
                            "cached for later runs) ..."])
    note.daemon = True
    note.start()
    try:
        seconds = compile_kernels()
    finally:
        note.cancel()
        note.join()  # a note being written ends before anything else is
    if seconds > 1.0:
        log(f"fast engine: compiled its kernels in {seconds:.0f} s (cached for later runs)")
    return seconds


class FastWLOEngine:
    """Runs WLO mega-batches through :mod:`probsent.training.fast.wlo_kernels` and
    :mod:`probsent.training.fast.mining_kernels` on ``encoder``'s weights and ``optimizer``'s state."""

    model_class = WLO
    """The model trained: the kernels compute WLO's exact recurrence (a class, not a capability)."""

    losses = (MarginLoss, KLPrior, RarityAnchor)
    """The losses of probsent/training/losses/ the kernels implement (the first two always, the rarity
    anchor where a run has it); a run with any other is refused by its name."""

    @classmethod
    def refusal(cls, encoder: SentenceEncoder, losses: list[Loss]) -> str | None:
        """Why the kernels cannot train ``encoder`` on the sum of ``losses`` (the one-line error's words
        after "--engine fast"), or None: they compute a WLO's recurrence from N(0, I) (not a subclass's)."""
        if type(encoder) is not cls.model_class or encoder.start_variance != 1.0:
            return f"trains {cls.model_class.label} only"
        names = ", ".join(loss.name for loss in cls.losses)
        for loss in losses:
            if type(loss) not in cls.losses:
                return f"implements the losses {names}, not {loss.name!r}"
        if not {MarginLoss, KLPrior} <= {type(loss) for loss in losses}:
            return f"computes the losses {names} with margin and prior always on"
        return None

    def __init__(self, encoder: WLO, optimizer) -> None:
        if type(encoder) is not self.model_class or encoder.start_variance != 1.0:
            raise TypeError("the fast engine trains WLO models that start from N(0, I) only")
        self.adam = optimizer.optimizers[0]  # SparseAdam over the two word tables
        self.params = [encoder.scale.weight, encoder.shift.weight]
        for param in self.params:  # the state SparseAdam's first step makes, where it has not taken one
            if not self.adam.state[param]:
                self.adam.state[param].update(step=0, exp_avg=torch.zeros_like(param),
                                              exp_avg_sq=torch.zeros_like(param))
        self.slot_of = np.full(encoder.vocab_size, -1, np.int64)
        self.timings = {"encoding": 0.0, "mining": 0.0, "preparing steps": 0.0, "steps": 0.0}

    def _tables(self) -> list[np.ndarray]:
        """Weights and moments as numpy views of the torch tensors (written in place)."""
        moments = [self.adam.state[p][key].numpy() for p in self.params for key in ("exp_avg", "exp_avg_sq")]
        return [param.detach().numpy() for param in self.params] + moments

    def encode(self, ids: np.ndarray, offsets: np.ndarray, sentences: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Final (mean, log-variance) of ``sentences`` (sentence k: ``ids[offsets[k]:offsets[k + 1]]``,
        int64 ids), float32 [n, dim] each."""
        from probsent.training.fast.wlo_kernels import encode_final

        starts = offsets[sentences]
        lengths = offsets[sentences + 1] - starts
        return encode_final(ids, starts, lengths, self.params[0].detach().numpy(),
                            self.params[1].detach().numpy())

    def negatives(self, ids: np.ndarray, offsets: np.ndarray, sentences: np.ndarray,
                  count: int) -> tuple[np.ndarray, Encoding]:
        """Each sentence's mined negative (a row of ``sentences``; the first ``count`` rows pair with the
        next ``count``), by :func:`mine_fastest`, and the encodings mined on."""
        start = time.perf_counter()
        mean, logvar = self.encode(ids, offsets, sentences)
        encoded = Encoding(torch.from_numpy(mean), torch.from_numpy(logvar))
        self.timings["encoding"] += time.perf_counter() - start
        start = time.perf_counter()
        found = mine_fastest(encoded, partners_of_stacked_pairs(count))
        self.timings["mining"] += time.perf_counter() - start
        return found, encoded

    @staticmethod
    def _packed(ids: np.ndarray, offsets: np.ndarray, steps: list[tuple[np.ndarray, int]], scramble_probability: float,
                generator: torch.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tokens, starts, lengths) of the sentences of ``steps``, one after the other, their
        words in the order the reference's scramble gives (the same random numbers)."""
        from probsent.training.fast.wlo_kernels import pack_scrambled

        ordered, batch_rows, widths, position = [], [], [], []
        done = 0
        for sentences, batch in steps:
            lengths = offsets[sentences + 1] - offsets[sentences]
            order = np.argsort(lengths, kind="stable")  # encode_by_length's batches: by length
            firsts = np.arange(0, len(order), batch)
            widths.append(np.maximum(np.maximum.reduceat(lengths[order], firsts), 1))  # as pad_batch
            batch_rows.append(np.minimum(batch, len(order) - firsts))
            ordered.append(sentences[order])
            position.append(np.argsort(order) + done)  # row of each sentence among the sorted ones
            done += len(order)
        batch_rows_all, widths_all = np.concatenate(batch_rows), np.concatenate(widths)
        # scramble's draws, batch by batch (rows, then rows x width keys), in one call: torch
        # draws a CPU generator's uniforms one after the other, however they are split
        draws = int((batch_rows_all * (1 + widths_all)).sum()) if scramble_probability > 0 else 0
        uniforms = torch.rand(draws, generator=generator).numpy()
        sentences_sorted = np.concatenate(ordered)
        tokens, sorted_starts = pack_scrambled(ids, offsets, sentences_sorted, batch_rows_all,
                                               widths_all, uniforms, float(scramble_probability))
        position_all = np.concatenate(position)
        lengths = offsets[sentences_sorted + 1] - offsets[sentences_sorted]
        return tokens, sorted_starts[position_all], lengths[position_all]

    def run_steps(self, ids: np.ndarray, offsets: np.ndarray, steps: list[tuple[np.ndarray, int]],
                  scramble_probability: float, generator: torch.Generator,
                  losses: list[Loss]) -> list[tuple[float, dict[str, float]]]:
        """Train on ``steps`` ((sentences s1, s2, n1, n2 stacked, pairs) each; sentence k is
        ``ids[offsets[k]:offsets[k + 1]]``) as the reference's ``Trainer._step`` with ``losses``
        (those :meth:`refusal` accepts): the same scrambles from ``generator``, the same sum.
        Returns the loss and named parts of the steps taken, then those of the first non-finite
        loss if any (its step not taken)."""
        from probsent.training.fast.wlo_kernels import train_steps

        by_type = {type(loss): loss for loss in losses}
        margin, prior = by_type[MarginLoss], by_type[KLPrior]
        anchor = by_type.get(RarityAnchor)
        names = [MarginLoss.name, KLPrior.name] + ([RarityAnchor.name] if anchor else [])  # the kernel's parts
        start = time.perf_counter()
        tokens, starts, lengths = self._packed(ids, offsets, steps, scramble_probability, generator)
        self.timings["preparing steps"] += time.perf_counter() - start
        start = time.perf_counter()
        first_step = int(self.adam.state[self.params[0]]["step"])
        group = self.adam.param_groups[0]
        beta1, beta2 = group["betas"]
        totals, parts, done = train_steps(tokens, starts, lengths, np.array([batch for _, batch in steps], np.int64),
                                          *self._tables(), first_step, float(group["lr"]), float(beta1),
                                          float(beta2), float(group["eps"]), float(margin.margin),
                                          float(prior.weight), self.slot_of,
                                          float(anchor.weight) if anchor else 0.0,
                                          anchor.targets if anchor else NO_TARGETS)
        for param in self.params:
            self.adam.state[param]["step"] = first_step + int(done)
        self.timings["steps"] += time.perf_counter() - start
        return [(float(totals[k]), dict(zip(names, parts[k].tolist())))
                for k in range(min(done + 1, len(steps)))]


def numba_threads_like_torch() -> None:
    """As many numba threads as torch's (OMP_NUM_THREADS and torch.set_num_threads apply to both),
    within numba's limit."""
    import numba

    numba.set_num_threads(max(1, min(torch.get_num_threads(), numba.config.NUMBA_NUM_THREADS,
                                     os.cpu_count() or 1)))

