"""Training checkpoints: a model directory plus optimizer and loop state, written atomically.

Layout of a training output directory:
  last/   the latest checkpoint: model files, optimizer.safetensors, trainer_state.json
  best/, best-news/  the models of the best STS 2017 and news-train scores so far
  log.jsonl  one JSON record per validation
  probsent-run.txt  written before anything else: the directory belongs to a training run
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError
from probsent.files.atomic_writes import atomic_path
from probsent.model_directory import read_model
from probsent.model_directory import write_model_dir, write_safetensors
from probsent.models import SentenceEncoder, build_model

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


_COUNTS = ("epoch", "pairs_done", "step")  # whole numbers, 0 or more


def loop_state_problem(state: Any) -> str | None:
    """What is wrong with a checkpoint's loop state (``trainer_state.json``), or None: a JSON
    object whose counts are whole numbers >= 0, seconds a number >= 0, ``finished`` a boolean,
    each best None or {"score": number, "step": count}, and ``param_groups`` a list."""
    if not isinstance(state, dict):
        return "not a JSON object"
    whole = lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0  # noqa: E731
    number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)  # noqa: E731
    for key in _COUNTS:
        if key in state and not whole(state[key]):
            return f"{key} must be a whole number >= 0, not {state[key]!r}"
    if "seconds" in state and not (number(state["seconds"]) and state["seconds"] >= 0):
        return f"seconds must be a number >= 0, not {state['seconds']!r}"
    if "finished" in state and not isinstance(state["finished"], bool):
        return f"finished must be true or false, not {state['finished']!r}"
    for key in ("best", "best_news"):
        best = state.get(key)
        if best is not None and not (isinstance(best, dict) and number(best.get("score")) and whole(best.get("step"))):
            return f"{key} must be null or {{\"score\": number, \"step\": count}}, not {best!r}"
    if not isinstance(state.get("param_groups"), list):
        return "param_groups must be a list"
    return None


def load_checkpoint(directory: Path, optimizer_factory) -> tuple[SentenceEncoder, Vocabulary, Any, torch.Tensor, dict[str, Any]]:
    """Model, vocabulary, optimizer (built by ``optimizer_factory(encoder)``), RNG state and loop state."""
    config, vocab, weights = read_model(directory)
    encoder = build_model(config["model"], weights)
    try:
        state = json.loads((directory / STATE).read_text())
        tensors = load_file(str(directory / OPTIMIZER))
    except Exception as exc:  # noqa: BLE001 - any damage is reported the same way
        raise InvalidValueError(f"{directory}: damaged checkpoint ({exc})") from None
    problem = loop_state_problem(state)
    if problem:
        raise InvalidValueError(f"{directory / STATE}: damaged checkpoint ({problem})")
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
