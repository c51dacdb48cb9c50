"""The training loop: mega-batches, mined negatives, the loss (``training/losses/``), validations, checkpoints."""
from __future__ import annotations

import copy
import json
import math
import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch import Tensor
from tqdm import tqdm

from probsent.version import __version__
from probsent.models.batching import encode_by_length
from probsent.torch_access import resolve_device
from probsent.errors import ProbsentError
from probsent.model_directory import read_config
from probsent.models import SentenceEncoder, model_class, with_word_entropy_terms
from probsent.training.checkpoint import (BEST, BEST_NEWS, LAST, LOG, checkpoint_dir, load_checkpoint,
                                          save_best, save_checkpoint)
from probsent.settings import MAY_CHANGE_ON_RESUME, SCRAMBLE, TrainConfig, flag_name, resume_differences
from probsent.training.run_directory import claim_run_directory, release_unused
from probsent.training.training_data import TrainingData, build_training_data
from probsent.training.diagnostics import DiagnosticSample, diagnose
from probsent.training.fast.engine import FastWLOEngine, compile_kernels_saying_so, numba_threads_like_torch
from probsent.training.losses import (Loss, LossSetup, MarginLoss, TrainingStep, build_losses, named_parts,
                                      total_loss)
from probsent.training.losses.rarity_anchor import rarity_terms
from probsent.training.negatives import megabatch_negatives
from probsent.training.optimizer import WordAwareAdam

Validator = Callable[[SentenceEncoder], float]
StepLoss = tuple[float, dict[str, float]]  # a step's loss and its named parts


def scramble(ids: Tensor, lengths: Tensor, probability: float, generator: torch.Generator) -> Tensor:
    """Shuffle the words of each sentence with ``probability``; padding stays at the end."""
    if probability <= 0:
        return ids
    rows, width = ids.shape
    chosen = torch.rand(rows, generator=generator) < probability
    keys = torch.rand(rows, width, generator=generator)
    keys = torch.where(torch.arange(width)[None, :] < lengths[:, None], keys, 2.0)  # pads last
    keys[~chosen] = torch.arange(width, dtype=keys.dtype) / width  # identity order
    return ids.gather(1, keys.argsort(1))


def build_encoder(config: TrainConfig, vocab_size: int) -> SentenceEncoder:
    """A freshly initialized model of ``config.model``: each hyper-parameter the model declares
    (:meth:`SentenceEncoder.hyper_parameters`) takes the training setting of the same name, or
    the model's own default where ``TrainConfig`` has no such setting."""
    cls = model_class(config.model)
    settings = config.to_dict()
    return cls(vocab_size, **{name: settings.get(name, default) for name, default in cls.hyper_parameters().items()})


class Trainer:
    """Runs one training configuration, resumable from its output directory."""

    def __init__(self, config: TrainConfig, resume: bool = False, progress: bool = True,
                 validator: Validator | None = None, dev_scorer: Validator | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        self.config = config
        # the model records where it learned from (each file or directory, when there are several)
        config.data = os.pathsep.join(str(Path(entry).resolve()) for entry in config.data.split(os.pathsep))
        self.out = Path(config.out)
        self.progress = progress
        self.validator = validator  # STS 2017: selects best/
        self.dev_scorer = dev_scorer  # news training rows: selects best-news/
        self.log = log or (lambda message: print(message, file=sys.stderr))
        self.device = resolve_device("auto", config.engine)
        self.lock, created = claim_run_directory(self.out, resume)  # held for the whole run (see train)
        try:
            self._set_up(resume)
        except BaseException:
            release_unused(self.out, self.lock, created)
            raise

    def _set_up(self, resume: bool) -> None:
        config = self.config
        resume_from = checkpoint_dir(self.out) if resume else None
        if resume_from is not None:
            self._check_resumed_settings(resume_from)
        torch.manual_seed(config.seed)
        self.data: TrainingData = build_training_data(config, self.log, self.progress)
        self.vocab, self.word_counts = self.data.vocab, self.data.word_counts
        self.diagnostic_sample = DiagnosticSample.draw(self.data.num_pairs,
                                                       config.batch_size * config.megabatch, config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)
        self.state: dict[str, Any] = {"epoch": 0, "pairs_done": 0, "step": 0, "best": None,
                                      "best_news": None, "seconds": 0.0, "finished": False}
        if resume_from is not None:
            self._check_resumed_data(resume_from)
            self.encoder, vocab, self.optimizer, rng, state = load_checkpoint(resume_from, self._optimizer)
            if vocab.words != self.vocab.words:
                raise ProbsentError(f"{resume_from}: its vocabulary differs from the one built "
                                    f"from {config.data}; train with the same data and settings")
            self.generator.set_state(rng)
            self.state.update(state)
            self.log(f"resuming from {resume_from} at step {self.state['step']:,}")
        else:
            self.encoder = build_encoder(config, len(self.vocab))
            if config.rarity_init:
                terms = with_word_entropy_terms(self.encoder, "--rarity-init")
                terms.shift_entropy_terms(torch.from_numpy(rarity_terms(self.word_counts, config.rarity_init)))
            self.optimizer = self._optimizer(self.encoder)
        # the objective: every loss the settings turn on, their parts summed (training/losses/)
        self.losses: list[Loss] = build_losses(LossSetup(config, self.encoder, self.word_counts))
        self.margin = next(loss.margin for loss in self.losses if isinstance(loss, MarginLoss))
        self.fast = self._fast_engine()

    def _check_resumed_settings(self, checkpoint: Path) -> None:
        """Refuse, before any work, settings that differ from the checkpoint's (by name; those
        of ``MAY_CHANGE_ON_RESUME`` may differ)."""
        try:
            differences = resume_differences(read_config(checkpoint), self.config)
        except ProbsentError as exc:  # a recorded key that is no setting
            raise ProbsentError(f"{self.out}: {exc}") from None
        if differences:
            allowed = ", ".join(flag_name(name) for name in MAY_CHANGE_ON_RESUME)
            raise ProbsentError(f"{self.out}: --resume continues the run with its own settings, but "
                                f"{'; '.join(differences)}; only {allowed} may change on resume")

    def _check_resumed_data(self, checkpoint: Path) -> None:
        """Refuse to resume on a pair file whose content differs from the one the checkpoint
        trained on (its SHA-256, recorded since format 3 of the pairs cache)."""
        config = read_config(checkpoint)
        training = config.get("training") if isinstance(config, dict) else None
        report = training.get("data_report") if isinstance(training, dict) else None
        recorded = report.get("sha256") if isinstance(report, dict) else None
        if recorded is not None and recorded != self.data.report.get("sha256"):
            raise ProbsentError(f"{self.config.data}: its content changed since the run in {self.out} started "
                                f"(SHA-256 {str(recorded)[:12]}... then, {self.data.report.get('sha256', '')[:12]}... "
                                f"now); resume with the file it trained on, or start a new run")

    def _fast_engine(self) -> "FastWLOEngine | None":
        """The compiled engine for ``config.engine`` (fast, or auto for a model that has one, on
        the CPU; its kernels compiled now, once per machine), or None for the torch loop."""
        refusal = FastWLOEngine.refusal(self.encoder, self.losses)
        if self.config.engine == "fast" and refusal:  # a valid name: the config checked it
            raise ProbsentError(f"--engine fast {refusal}; use --engine torch for this {self.config.model} model")
        if self.config.engine == "torch" or refusal or self.device.type != "cpu":
            self.config.engine = "torch"
            return None
        self.config.engine = "fast"
        numba_threads_like_torch()
        compile_kernels_saying_so(self.log)

        return FastWLOEngine(self.encoder, self.optimizer)

    def _optimizer(self, encoder: SentenceEncoder) -> "WordAwareAdam":
        encoder.to(self.device)  # first, so the optimizer's state is made (or loaded) there
        return WordAwareAdam(encoder, lr=self.config.lr)

    def _on_cpu(self) -> SentenceEncoder:
        """The model as validation and model files use it: itself, or a copy on the CPU."""
        return self.encoder if self.device.type == "cpu" else copy.deepcopy(self.encoder).cpu()

    # -- one mega-batch ------------------------------------------------------------------

    def _megabatch(self, pairs: np.ndarray) -> list[StepLoss]:
        """Mine negatives for ``pairs`` (pair indices), then take one step per mini-batch. Only the
        mega-batch's sentences are read from the mapped pairs (``ids``, ``offsets``: row k of the
        mega-batch is sentence k there)."""
        cfg = self.config
        count = len(pairs)
        if count < 2:  # a lone pair has no other sentence to contrast with: skip it
            return []
        ids, offsets = self.data.sentences(np.concatenate([2 * pairs, 2 * pairs + 1]))  # all s1, then all s2
        rows_of_megabatch = np.arange(2 * count)
        negative = megabatch_negatives(cfg, rows_of_megabatch, count, self.encoder, ids, offsets, self.fast)
        steps = []
        for start in range(0, count, cfg.batch_size):
            rows = np.arange(start, min(count, start + cfg.batch_size))
            # s1, s2, n1, n2 of this mini-batch, as rows of the mega-batch
            steps.append((np.concatenate([rows, rows + count, negative[rows], negative[rows + count]]), len(rows)))
        if self.fast is None:
            return [self._step(ids, offsets, step_rows, batch) for step_rows, batch in steps]
        losses = self.fast.run_steps(ids, offsets, steps, SCRAMBLE, self.generator, self.losses)
        taken = len(losses) if not losses or math.isfinite(losses[-1][0]) else len(losses) - 1
        self.state["step"] += taken
        if taken < len(losses):
            raise self._bad_loss(losses[-1][0])
        return losses

    def _last_good(self) -> str:
        """Where the last good checkpoint is, in words (none before the first validation)."""
        if (self.out / LAST).is_dir():
            return f"the last good checkpoint is in {self.out / LAST}"
        return "no checkpoint was written yet"

    def _bad_loss(self, loss: float) -> ProbsentError:
        return ProbsentError(f"training stopped: the loss became {loss} at step {self.state['step'] + 1:,}; "
                             f"{self._last_good()}. Try a lower --lr or other --prior-weight/--l2-weight")

    def _step(self, ids: np.ndarray, offsets: np.ndarray, sentences: np.ndarray, batch: int) -> StepLoss:
        """One step of the torch loop on a mini-batch (``sentences``: its s1, s2, n1, n2, sentence k
        being ``ids[offsets[k]:offsets[k + 1]]``): encode, sum the parts of every loss, update. Its
        loss and the parts."""
        scrambled = partial(scramble, probability=SCRAMBLE, generator=self.generator)
        out = encode_by_length(self.encoder, ids, offsets, sentences, batch,
                               with_kl=any(loss.needs_kl for loss in self.losses),
                               transform=scrambled if self.encoder.order_sensitive else None)
        parts = named_parts(self.losses, TrainingStep(self.encoder, out, batch, ids, offsets, sentences, self.device))
        loss = total_loss(parts)
        if not torch.isfinite(loss):
            raise self._bad_loss(loss.item())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.state["step"] += 1
        return loss.item(), {name: value.item() for name, value in parts.items()}

    # -- the loop ------------------------------------------------------------------------

    def _selections(self) -> list[tuple[Validator, str, str, str, str]]:
        """Each development scorer given: (scorer, the metric it logs, the loop-state key of its best
        score, the directory of that best model, the score's name in the log)."""
        selections = ((self.validator, "sts17_pearson", "best", BEST, "STS 2017 Pearson"),
                      (self.dev_scorer, "news_train_accuracy", "best_news", BEST_NEWS, "news-train accuracy"))
        return [selection for selection in selections if selection[0] is not None]

    def _score(self, scorer: Validator) -> tuple[float, SentenceEncoder]:
        """``scorer``'s score of the model in evaluation mode (on the CPU), and the model it scored."""
        model = self._on_cpu().eval()
        score = scorer(model)
        self.encoder.train()
        return score, model

    def _training_record(self) -> dict[str, Any]:
        """What a saved model records about the training that made it."""
        state = self.state
        return {"config": self.config.to_dict(), "step": state["step"], "epoch": state["epoch"],
                "seconds": round(state["seconds"], 1), "untrained_sts17_pearson": state.get("untrained_sts17_pearson"),
                "untrained_news_train_accuracy": state.get("untrained_news_train_accuracy"),
                "probsent_version": __version__, "data_report": self.data.report}

    def _validate_and_save(self, recent: list[StepLoss]) -> None:
        """Log a validation (the mean loss and parts of the ``recent`` steps, diagnostics, development
        scores), keep the best models, write the checkpoint."""
        state, cfg = self.state, self.config
        if not all(torch.isfinite(p).all() for p in self.encoder.parameters()):
            raise ProbsentError(f"training stopped: a weight became NaN or infinite at step "
                                f"{state['step']:,}; {self._last_good()}")
        training = self._training_record()
        record: dict[str, Any] = {"step": state["step"], "epoch": state["epoch"], "pairs_done": state["pairs_done"],
                                  "loss": float(np.mean([loss for loss, _ in recent])) if recent else float("nan"),
                                  "loss_parts": {name: float(np.mean([parts[name] for _, parts in recent]))
                                                 for name in (recent[-1][1] if recent else {})},
                                  "seconds": round(state["seconds"], 2)}
        sample = self.diagnostic_sample  # its sentences read, and numbered as they are in the sample
        ids, offsets = self.data.sentences(np.stack([2 * sample.pairs, 2 * sample.pairs + 1], axis=1).ravel())
        local = DiagnosticSample(np.arange(len(sample.pairs)), sample.per_megabatch)
        record.update(diagnose(self._on_cpu(), ids, offsets, self.word_counts, local,
                               self.margin, cfg.prior_weight, cfg.batch_size))
        if self.validator is None:  # without validation data the latest model is the best one we know
            save_best(self.out, self._on_cpu(), self.vocab, training)
        for scorer, metric, key, directory, _ in self._selections():
            score, model = self._score(scorer)
            record[metric] = score
            if state[key] is None or score > state[key]["score"]:
                state[key] = {"score": score, "step": state["step"]}
                save_best(self.out, model, self.vocab, {**training, metric: score}, name=directory)
        save_checkpoint(self.out, self.encoder, self.vocab, self.optimizer, self.generator, state, training)
        with open(self.out / LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def _budget_spent(self) -> bool:
        return self.config.max_steps is not None and self.state["step"] >= self.config.max_steps

    def _epoch_order(self, epoch: int) -> np.ndarray:
        """The pairs epoch ``epoch`` trains on, in its shuffled order."""
        return torch.randperm(self.data.num_pairs, generator=torch.Generator().manual_seed(
            self.config.seed * 1_000_003 + epoch)).numpy()

    def _steps_per_epoch(self) -> int:
        """One step per mini-batch of every mega-batch of at least two pairs (see _megabatch)."""
        pairs = self.data.num_pairs
        per_mega = self.config.batch_size * self.config.megabatch
        sizes = [min(per_mega, pairs - start) for start in range(0, pairs, per_mega)]
        return sum(math.ceil(size / self.config.batch_size) for size in sizes if size >= 2)

    def train(self) -> dict[str, Any]:
        """Train until ``epochs`` (or ``max_steps``) are done, release the run directory's lock and
        return the final loop state."""
        try:
            return self._train()
        finally:
            self.lock.release()

    def _train(self) -> dict[str, Any]:
        cfg = self.config
        per_mega = cfg.batch_size * cfg.megabatch
        bar = tqdm(total=cfg.epochs * self._steps_per_epoch(), initial=self.state["step"], unit=" steps",
                   file=sys.stderr, dynamic_ncols=True, disable=not self.progress)
        if self.state["step"] == 0:  # the untrained model's development scores: what training adds
            for scorer, metric, _, _, shown in self._selections():
                self.state[f"untrained_{metric}"], _ = self._score(scorer)
                self.log(f"untrained {shown}: {self.state[f'untrained_{metric}']:.4f}")
        last_saved, recent, started = self.state["step"], [], time.monotonic()
        base_seconds = self.state["seconds"]
        stopped_early = False
        while self.state["epoch"] < cfg.epochs and not stopped_early:
            order = self._epoch_order(self.state["epoch"])
            while self.state["pairs_done"] < len(order):
                if self._budget_spent():
                    stopped_early = True  # e.g. resumed after the budget was spent
                    break
                chunk = order[self.state["pairs_done"]:self.state["pairs_done"] + per_mega]
                t0 = time.monotonic()
                losses = self._megabatch(chunk)
                recent = (recent + losses)[-50:]
                self.state["pairs_done"] += len(chunk)
                self.state["seconds"] = base_seconds + time.monotonic() - started
                bar.update(len(losses))
                if self.progress:
                    bar.set_postfix(loss=f"{np.mean([loss for loss, _ in recent]):.4f}",
                                    pairs_s=f"{len(chunk) / (time.monotonic() - t0):,.0f}")
                out_of_time = self._budget_spent()
                if self.state["step"] - last_saved >= cfg.eval_every or out_of_time:
                    self._validate_and_save(recent)
                    last_saved = self.state["step"]
                if out_of_time:
                    stopped_early = True
                    self.log(f"budget reached at step {self.state['step']:,} "
                             f"({self.state['seconds']:.0f} s of training)")
                    break
            if not stopped_early:
                self.state["epoch"] += 1
                self.state["pairs_done"] = 0
        newly_finished = not stopped_early and not self.state["finished"]
        if not stopped_early:
            self.state["finished"] = True
        if self.state["step"] != last_saved:
            self._validate_and_save(recent)
        elif newly_finished:  # the last step was just validated: only record that the run is done
            save_checkpoint(self.out, self.encoder, self.vocab, self.optimizer, self.generator,
                            self.state, self._training_record())
        bar.close()
        return self.state
