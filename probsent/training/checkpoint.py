"""Training checkpoints: a model directory plus optimizer and loop state, written atomically.

Layout of a training output directory:
  last/   the latest checkpoint: model files, optimizer.safetensors, trainer_state.json
  best/, best-news/  the models of the best STS 2017 and news-train scores so far
  log.jsonl  one JSON record per validation
  probsent-run.txt  written before anything else: the directory belongs to a training run
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError
from probsent.io import atomic_path
from probsent.model_files import read_model_dir, write_model_dir, write_safetensors
from probsent.models import SentenceEncoder

LAST, BEST, BEST_NEWS, LOG = "last", "best", "best-news", "log.jsonl"
OPTIMIZER, STATE, RUN_MARKER = "optimizer.safetensors", "trainer_state.json", "probsent-run.txt"


def save_checkpoint(out: Path, encoder: SentenceEncoder, vocab: Vocabulary, optimizer, generator: torch.Generator,
                    loop_state: dict[str, Any], training: dict[str, Any]) -> None:
    """Replace ``out/last`` with a complete new checkpoint in one step."""
    state = optimizer.state_dict()
    tensors = {f"{index}/{key}": value.detach().cpu().clone() if torch.is_tensor(value) else torch.tensor(value)
               for index, slots in state["state"].items() for key, value in slots.items()}
    tensors["rng_state"] = generator.get_state()
    with atomic_path(out / LAST) as tmp:
        tmp.mkdir()
        write_model_dir(tmp, encoder, vocab, training)
        write_safetensors(tensors, tmp / OPTIMIZER)
        (tmp / STATE).write_text(json.dumps({**loop_state, "param_groups": state["param_groups"]}, indent=2) + "\n")


def save_best(out: Path, encoder: SentenceEncoder, vocab: Vocabulary, training: dict[str, Any],
              name: str = BEST) -> None:
    """Replace ``out/<name>`` (default ``out/best``) with the current model."""
    with atomic_path(out / name) as tmp:
        tmp.mkdir()
        write_model_dir(tmp, encoder, vocab, training)


def checkpoint_dir(out: Path) -> Path | None:
    """The checkpoint to resume from: ``last``, or the copy set aside while it was replaced."""
    for candidate in (out / LAST, out / f".{LAST}.old"):
        if (candidate / STATE).is_file():
            return candidate
    return None


def load_checkpoint(directory: Path, optimizer_factory) -> tuple[SentenceEncoder, Vocabulary, Any, torch.Tensor, dict[str, Any]]:
    """Model, vocabulary, optimizer (built by ``optimizer_factory(encoder)``), RNG state and loop state."""
    encoder, vocab, _ = read_model_dir(directory)
    try:
        state = json.loads((directory / STATE).read_text())
        tensors = load_file(str(directory / OPTIMIZER))
    except Exception as exc:  # noqa: BLE001 - any damage is reported the same way
        raise InvalidValueError(f"{directory}: damaged checkpoint ({exc})") from None
    encoder.train()
    optimizer = optimizer_factory(encoder)
    slots: dict[str, dict[str, torch.Tensor]] = {}
    for name, value in tensors.items():
        if name != "rng_state":
            index, key = name.split("/", 1)
            slots.setdefault(index, {})[key] = value
    try:
        optimizer.load_state_dict({"state": slots, "param_groups": state.pop("param_groups")})
    except (KeyError, ValueError) as exc:
        raise InvalidValueError(f"{directory}: optimizer state does not match the model ({exc})") from None
    return encoder, vocab, optimizer, tensors["rng_state"], state
