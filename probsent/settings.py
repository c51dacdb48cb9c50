"""Every training setting, declared once: its default (the paper's), help text and allowed range.

Each field of :class:`TrainConfig` is an :func:`option`. From these declarations the CLI builds
the ``probsent train`` flags, and :func:`check_setting` checks every value, whether it comes from
a flag, from Python, or from a model directory's ``config.json``; a value out of range is a
one-line :class:`~probsent.errors.InvalidValueError`. Adding a setting is one declaration.
"""
from __future__ import annotations

import math
import numbers
import types
import typing
from dataclasses import Field, asdict, dataclass, field, fields
from typing import Any, Callable

from probsent.data.pairs import MAX_TOKENS
from probsent.errors import InvalidValueError, ProbsentError
from probsent.model_descriptions import model_names


def option(default: Any, help: str, *, low: float | None = None, high: float | None = None, above: float | None = None,
           choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None, required: bool = False) -> Any:
    """A setting with its help text and allowed values: ``low <= value <= high``, ``value >
    above``, or one of ``choices`` (a tuple, or a function giving the tuple when asked: the
    described models, :mod:`probsent.model_descriptions`). ``required``: a flag the command line must give. The type (and whether
    None is allowed) comes from the field's annotation."""
    return field(default=default, metadata={"help": help, "low": low, "high": high, "above": above,
                                            "choices": choices, "required": required})


_NO_RULES = {"help": "", "low": None, "high": None, "above": None, "choices": None, "required": False}


def is_declared(name: str) -> bool:
    """Whether ``name`` is a declared setting (of training, or of model files only)."""
    return name in _DECLARED


def setting_rules(name: str) -> dict[str, Any]:
    """The :func:`option` declaration of a setting (help, range, choices, required); a plain
    field (declared without option) has no help text and no range."""
    rules = {**_NO_RULES, **_DECLARED[name].metadata}
    if callable(rules["choices"]):
        rules["choices"] = rules["choices"]()
    return rules


@dataclass
class TrainConfig:
    """Settings of one training run; each field is also a ``probsent train`` flag."""

    model: str = option("wlo", "model to train", choices=model_names)
    data: str = option("", "the pairs: a TSV file (s1<TAB>s2[<TAB>source] per line, plain or .gz), a Parquet "
                           "(.parquet) or JSON Lines (.jsonl) file, several joined by ':' (os.pathsep), or a "
                           "directory of such files (parts)", required=True)
    columns: str | None = option(None, "the columns of Parquet / JSON Lines pairs: A,B[,SOURCE] (default: "
                                       "s1,s2,source, the source where present)")
    max_pairs: int | None = option(None, "train on the first N pairs of --data only (default: all)",
                                   low=1, high=10**12)
    out: str = option("", "output directory (last/ checkpoint, best/ and best-news/ models, log.jsonl)",
                      required=True)
    epochs: int = option(1, "passes over the pairs", low=1, high=10_000)
    seed: int = option(1, "random seed", low=0, high=2**32 - 1)
    source_caps: str | None = option(
        None, "keep at most N pairs of a source (third column), evenly spaced over it: NAME=N[,NAME=N...] "
              "(N = 0 drops the source; *=N caps every source not named; default: no cap)")
    min_tokens: int = option(1, "drop pairs with a side of fewer tokens", low=1, high=MAX_TOKENS)
    max_overlap: float = option(1.0, "drop pairs whose sides' word sets overlap more than this "
                                     "(Jaccard; 1 keeps all)", low=0.0, high=1.0)
    min_overlap: float = option(0.0, "drop pairs whose sides' word sets overlap less than this "
                                     "(Jaccard; 0 keeps all)", low=0.0, high=1.0)
    vocab_size: int = option(50_000, "most frequent words kept (plus <unk>)", low=1, high=10_000_000)
    min_count: int = option(1, "words seen fewer times in the training pairs become <unk> (ours; 1 keeps "
                               "every word, as the paper)", low=1, high=10**12)
    dim: int = option(50, "word dimension k", low=1, high=4096)
    batch_size: int = option(100, "pairs per step", low=1, high=100_000)
    megabatch: int = option(20, "mini-batches per mega-batch (negatives are mined across it; "
                                "1 = within the batch)", low=1, high=10_000)
    lr: float = option(1e-3, "Adam learning rate", above=0.0, high=10.0)
    margin: float | None = option(None, "margin delta (default: 1.0 for wlo/lstmgaussian, 0.4 otherwise)",
                                  low=0.0, high=1e6)
    prior_weight: float = option(1e-4, "lambda: weight of the KL prior terms (probabilistic models)",
                                 low=0.0, high=1e6)
    l2_weight: float = option(1e-6, "L2 weight (deterministic models)", low=0.0, high=1e6)
    scale_init_mean: float = option(1.0, "WLO: A initialized as N(mean, std^2)", low=-1e3, high=1e3)
    scale_init_std: float = option(0.1, "WLO: A initialized as N(mean, std^2)", low=0.0, high=1e3)
    shift_init_std: float = option(0.1, "WLO: B initialized as N(0, std^2)", low=0.0, high=1e3)
    rarity_init: float = option(0.0, "WLO (ours): each word's entropy term sum_d log|A_w,d| starts at X * "
                                     "(log of its training count - the average token's), rare words specific "
                                     "and frequent ones general; 0 = the paper's random initialization",
                                low=-100.0, high=100.0)
    rarity_anchor: float = option(0.0, "WLO (ours): each step adds X / 2 (T_w - t_w)^2 per pair for each word w it "
                                       "uses, pulling the word's entropy term T_w = sum_d log|A_w,d| toward the "
                                       "term --rarity-init starts it at, t_w = --rarity-init x (log count - the "
                                       "average token's) + dim x log|--scale-init-mean|; 0 = off (the paper)",
                                  low=0.0, high=1e6)
    hardness_cap: float | None = option(None, "(ours) a mined negative may score at most this much above "
                                              "the sentence's partner; one above it is replaced by the "
                                              "hardest that is not (default: no cap, the paper)",
                                        low=-1e6, high=1e6)
    mean_init_gain: float = option(1.0, "LSTMGaussian: factor on the mean map's initial weights "
                                        "(larger spreads the initial means)", low=0.0, high=1e6)
    eval_every: int = option(500, "steps between STS 2017 validations and checkpoints", low=1)
    max_steps: int | None = option(None, "stop once this many steps are done, checked after each "
                                         "mega-batch (a checkpoint is written; default: no limit)", low=1)
    engine: str = option("auto", "training engine: fast (WLO's compiled kernels, on the CPU) or torch (the "
                                 "reference; any model; on a GPU where torch sees one); auto = torch on a "
                                 "GPU, else fast for WLO",
                         choices=("auto", "fast", "torch"))

    def __post_init__(self) -> None:
        """Check every setting (and the pairs that must agree): InvalidValueError naming the first
        bad one by its flag."""
        for spec in fields(self):
            problem = check_setting(spec.name, getattr(self, spec.name))
            if problem:
                raise InvalidValueError(f"{flag_name(spec.name)}: {problem}")
        if self.min_overlap > self.max_overlap:
            raise InvalidValueError(f"{flag_name('min_overlap')} {self.min_overlap} is above "
                                    f"{flag_name('max_overlap')} {self.max_overlap}: no pair could be kept")
        # (imported here: these parsers' modules load the compiled tokenizer, which reading a
        # model directory, importing this module for the settings' ranges, does not need)
        from probsent.data.mixture import parse_source_caps
        from probsent.data.pair_files import parse_columns

        if self.columns is not None:
            parse_columns(self.columns)
        if self.source_caps is not None:
            try:
                parse_source_caps(self.source_caps)
            except ProbsentError as exc:
                raise InvalidValueError(str(exc)) from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        """The config of recorded settings (a checkpoint's, a model's, a record's), checked: a key
        that is no setting is a one-line InvalidValueError (:func:`unknown_settings`), never
        dropped, so that a recorded run never reads as another one."""
        problem = unknown_settings(values)
        if problem:
            raise InvalidValueError(problem)
        return cls(**{name: value for name, value in values.items() if name not in RETIRED_AT_DEFAULT})


SETTINGS: dict[str, Field] = {spec.name: spec for spec in fields(TrainConfig)}


@dataclass
class ModelFileSettings:
    """Model hyper-parameters that no training setting sets (a model takes its own default; export
    sets start_variance) but a model directory's config.json holds: checked as the settings are."""

    hidden: int = option(100, "LSTM hidden size", low=1, high=4096)
    init_std: float = option(0.1, "word vector initialization std (other models)", low=0.0, high=1e3)
    start_variance: float = option(1.0, "WLO: a sentence starts as z_0 ~ N(0, S I)", low=1e-30, high=1e6)


_DECLARED: dict[str, Field] = {**SETTINGS, **{spec.name: spec for spec in fields(ModelFileSettings)}}

SCRAMBLE = 0.4  # the paper's probability of shuffling a training sentence's word order (LSTMs, WLO)


# Settings that left probsent after runs of the current format recorded them, read only at the value
# that does what probsent does without them (a run recording it trained as probsent trains now):
# ``--rarity-from`` (issue 49; its runs train at commit 9701be6), recorded as null by every run
# trained before it left. Any other recorded value is a run of an older probsent (unknown_settings).
RETIRED_AT_DEFAULT: dict[str, Any] = {"rarity_from": None}


def unknown_settings(values: dict[str, Any]) -> str | None:
    """What is wrong with recorded settings ``values`` holding keys that are no setting (those of
    a run of an older probsent: the settings removed since, and where their runs train, are in
    docs/TRAINING.md), in one line; None where every key is a setting or a retired one at the
    value that changes nothing (:data:`RETIRED_AT_DEFAULT`)."""
    unknown = sorted(name for name in set(values) - set(SETTINGS)
                     if not (name in RETIRED_AT_DEFAULT and values[name] == RETIRED_AT_DEFAULT[name]))
    if not unknown:
        return None
    return (f"{', '.join(flag_name(name) for name in unknown)} recorded, but not a setting of this probsent: "
            f"a run of an older probsent (docs/TRAINING.md says where removed settings train)")


_HINTS = {**typing.get_type_hints(TrainConfig), **typing.get_type_hints(ModelFileSettings)}


def flag_name(name: str) -> str:
    """The command-line flag of a setting: ``max_steps`` -> ``--max-steps``."""
    return "--" + name.replace("_", "-")


def setting_type(name: str) -> tuple[type, bool]:
    """(int, float or str; whether None is allowed) of a setting, from its annotation."""
    hint = _HINTS[name]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kinds = [k for k in typing.get_args(hint) if k is not type(None)]
        return kinds[0], True
    return hint, False


def _show(name: str, value: float) -> str:
    return f"{int(value):,}" if setting_type(name)[0] is int else f"{value:g}"


def allowed_range(name: str) -> str:
    """The allowed values of a numeric setting in words ("from 1 to 4,096", "above 0"), or ""."""
    low, above, high = (None if value is None else _show(name, value)
                        for value in map(setting_rules(name).get, ("low", "above", "high")))
    if low is not None:
        return f"from {low} to {high}" if high else f"at least {low}"
    if above is not None:
        return f"above {above}, at most {high}" if high else f"above {above}"
    return f"at most {high}" if high else ""


def check_setting(name: str, value: Any) -> str | None:
    """What is wrong with ``value`` for setting ``name`` (its type, range or choices), or None."""
    meta = setting_rules(name)
    kind, optional = setting_type(name)
    if value is None:
        return None if optional else "a value is required"
    if kind is int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        return f"must be an integer, not {value!r}"
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return f"must be a number, not {value!r}"
        if not math.isfinite(value):
            return f"must be a finite number, not {value}"
    if kind is str:
        if not isinstance(value, str):
            return f"must be a string, not {value!r}"
        if meta["choices"] and value not in meta["choices"]:
            return f"must be one of {', '.join(meta['choices'])}, not {value!r}"
        return None
    outside = ((meta["low"] is not None and value < meta["low"])
               or (meta["above"] is not None and value <= meta["above"])
               or (meta["high"] is not None and value > meta["high"]))
    return f"must be {allowed_range(name)}, not {_show(name, value)}" if outside else None


# What may differ when a run is resumed: where it runs, how long, and how often it validates;
# never what it learns. ``--resume`` refuses any other setting that differs from the checkpoint's.
MAY_CHANGE_ON_RESUME = ("out", "epochs", "max_steps", "eval_every", "engine")


def resume_differences(checkpoint_config: Any, config: TrainConfig) -> list[str]:
    """The settings of ``config`` a resumed run may not change that differ from those its checkpoint's
    ``config.json`` records (``training.config``; one missing there, from an older version, counts
    as its default), each as ``--flag NEW (the run's: OLD)``; a recorded key that is no setting is
    a one-line InvalidValueError (:func:`unknown_settings`)."""
    training = checkpoint_config.get("training") if isinstance(checkpoint_config, dict) else None
    saved = training.get("config") if isinstance(training, dict) else None
    saved = saved if isinstance(saved, dict) else {}
    problem = unknown_settings(saved)
    if problem:
        raise InvalidValueError(problem)
    differences = []
    for spec in fields(TrainConfig):
        if spec.name in MAY_CHANGE_ON_RESUME:
            continue
        before, now = saved.get(spec.name, spec.default), getattr(config, spec.name)
        if before != now:
            differences.append(f"{flag_name(spec.name)} {now} (the run's: {before})")
    return differences
