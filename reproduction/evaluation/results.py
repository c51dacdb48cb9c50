"""What ``probsent eval`` computes, as typed objects, and the one module that knows the layout
of ``evaluation.json``.

An :class:`EvaluationRun` holds the run's provenance and its :class:`Results`: one
:class:`SystemResult` per system (a trained model or a baseline), holding one typed result per
experiment (:class:`Specificity` for Table 2, :class:`LengthNormalizedNews` for Table 3, ...),
and the prior ablation (:class:`Ablation`). The experiment functions return these objects; the
report, the plots and the experiment summaries read their fields.

The file is format ``probsent-eval``, version :data:`FORMAT_VERSION`. Its layout follows the
classes: an object per dataclass with a key per field (named by the field unless its ``key``
says otherwise), an analysis that did not run is ``{"skipped": why}``, and a field that is None
is an absent key. On reading, a field may be absent only where it may be None; every other
missing or mistyped field, an unknown key, another format or version is a one-line
:class:`~probsent.errors.InvalidValueError` naming the file and the place in it. (The Python
defaults below are for building results in code, not for reading files.)
"""
from __future__ import annotations

import json
import os
import platform
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from probsent.errors import InvalidValueError, MissingFileError
from reproduction.evaluation import paper
from probsent.files.atomic_writes import write_json
from probsent.version import __version__

FORMAT_NAME = "probsent-eval"
FORMAT_VERSION = 1


def _key(name: str) -> Any:
    """A field written under the JSON key ``name`` (one that is not a Python name)."""
    return field(metadata={"key": name})


# --- one result per experiment -----------------------------------------------------------

@dataclass
class Skipped:
    """An analysis that did not run, and why (e.g. the training pairs were not found)."""

    skipped: str


@dataclass
class NewsAccuracy:
    """News accuracy and F1 (x100) on the test sentences (Tables 2 and 7)."""

    accuracy: float
    f1: float
    threshold: float | None = None  # tuned on the news training rows; None: +-infinity, or none tuned
    n_train: int | None = None
    n_test: int | None = None
    majority: str | None = None  # the Majority baseline: the class it predicts


@dataclass
class RatedCorrelation:
    """Spearman correlation (x100) of the scores with the human ratings of a Ko et al. domain."""

    spearman: float
    n: int


@dataclass
class Specificity:
    """Table 2: News, and the three Ko et al. (2019) domains (absent for News-only systems)."""

    news: NewsAccuracy
    twitter: RatedCorrelation | None = None
    yelp: RatedCorrelation | None = None
    movie: RatedCorrelation | None = None

    def domain(self, name: str) -> RatedCorrelation | None:
        """The result of Ko et al. domain ``name`` (twitter, yelp or movie)."""
        return getattr(self, name)


@dataclass
class LengthNormalizedNews:
    """Table 3: News accuracy with sentence length factored out (x100; counts of sentences)."""

    accuracy: float
    majority_floor: float
    tested_group_majority: float
    pool_size: int
    n_tested: int
    n_untested: int
    n_groups_tested: int
    duplicate_label_conflicts: int


@dataclass
class SnliEntailment:
    """Table 4: per SNLI label, % of equal-length pairs whose hypothesis is less specific."""

    entailment: float
    neutral: float
    contradiction: float
    n: dict[str, int]  # pairs per label

    def less_specific(self, label: str) -> float:
        """The % of ``label`` (entailment, neutral or contradiction)."""
        return getattr(self, label)


@dataclass
class ShorterSpecific:
    """% of probsent's own pairs whose specific (shorter) sentence scores higher."""

    accuracy: float
    n: int


@dataclass
class GeneralityShare:
    """% of WordNet hypernym pairs whose specific word scores higher, by the system and by the
    baselines on the same pairs (ties half)."""

    n: int
    model: float | None  # None: no pairs
    information_content_wordfreq: float | None
    wordfreq_rank: float | None
    information_content_training: float | None = None  # None also: the training counts were not at hand


@dataclass
class Generality:
    """Lexical generality (:mod:`reproduction.evaluation.generality`): each half of the WordNet split,
    over all its pairs and over those whose general word is the rarer one in general English."""

    dev: GeneralityShare
    dev_general_rarer: GeneralityShare
    test: GeneralityShare
    test_general_rarer: GeneralityShare
    vocabulary: str = ""  # whose entries the pairs' words have


@dataclass
class StsTable:
    """Pearson r x100 of one similarity measure on every STS set."""

    stsb_test: float = _key("STSB-test")
    sts17: float = _key("STS17")
    sets_mean: float = _key("STS12-16 sets mean")
    years_mean: float = _key("STS12-16 years mean")
    years: dict[str, dict[str, float]] = field(metadata={"rest": True})  # STS12..16: set -> r, and "mean"


@dataclass
class Sts:
    """Table 8: per similarity measure ("cosine"; probabilistic models add "cosine_mean" and
    "expected_inner_product"), its :class:`StsTable`."""

    is_probabilistic: bool
    pearson: dict[str, StsTable]


@dataclass
class LexicalWord:
    """One word of a Table 5 list: its training count, ||B_w|| and one-word sentence entropy."""

    word: str
    count: int
    norm: float
    entropy: float


@dataclass
class Lexical:
    """Table 5: the four top lists of words and summary figures."""

    min_count: int
    top_k: int
    norm_fraction: float
    n_words: int
    pool_size: int
    lists: dict[str, list[LexicalWord]]
    spearman_norm_entropy: float | None = None  # these three: with at least two words
    norm_range: list[float] | None = None
    entropy_range: list[float] | None = None
    corpus: str | None = None  # the training pairs the counts are from (evaluation.json's key)


@dataclass
class Extreme:
    """A sentence and its measure (entropy or norm)."""

    sentence: str
    value: float


@dataclass
class LengthGroup:
    """The sentences of one length: how many, and the most general and most specific one."""

    n: int
    most_general: Extreme
    most_specific: Extreme


@dataclass
class Sentential:
    """Table 6: the extreme training sentences of each length in a random sample."""

    measure: str  # "entropy" or "norm"
    sample_size: int
    seed: int
    lengths: list[int]
    n_drawn: int
    n_kept: int
    by_length: dict[str, LengthGroup]  # by length, as a string, increasing
    corpus: str | None = None

    @staticmethod
    def _layout_in(data: dict[str, Any]) -> dict[str, Any]:
        """Lengths in increasing order (JSON written with sorted keys puts "10" before "3")."""
        groups = data.get("by_length")
        if not isinstance(groups, dict) or not all(str(key).isdigit() for key in groups):
            return data
        return {**data, "by_length": dict(sorted(groups.items(), key=lambda item: int(item[0])))}


@dataclass
class Diagnostics:
    """What moved inside a model (:mod:`probsent.training.diagnostics`); a value is None where
    it does not apply to the model."""

    term_count_spearman: float | None = None
    frequent_term: float | None = None
    negatives_sharing_more: float | None = None
    active_hinge: float | None = None
    prior_gradient_share: float | None = None
    corpus: str | None = None


# --- systems and the run ----------------------------------------------------------------

@dataclass
class SystemResult:
    """One row of the tables: what ``probsent eval`` measured of one system."""

    kind: str  # "model" or "baseline"
    specificity: Specificity
    path: str | None = None  # a model's directory as given
    paper_row: str | None = None  # the paper's row this system stands for
    config: dict[str, Any] | None = None  # a model's config.json
    length_normalized_news: LengthNormalizedNews | None = None
    snli: SnliEntailment | None = None
    shorter_specific: ShorterSpecific | None = None
    generality: Generality | Skipped | None = None
    sts: Sts | None = None
    lexical: Lexical | Skipped | None = None
    sentential: Sentential | Skipped | None = None
    diagnostics: Diagnostics | Skipped | None = None

    @property
    def training(self) -> dict[str, Any]:
        """A model's training record (``config["training"]``: its settings, step, dev scores), or {}."""
        return (self.config or {}).get("training", {})


@dataclass
class AblationEntry:
    """One side of the prior ablation (Table 7)."""

    system: str
    accuracy: float
    f1: float
    path: str | None = None
    prior_weight: float | None = None
    config: dict[str, Any] | None = None  # the model without the prior: its config.json


@dataclass
class Ablation:
    """Table 7: News with the prior and without it."""

    with_prior: AblationEntry | Skipped
    without_prior: AblationEntry | Skipped


@dataclass
class Results:
    """Every system's results, in evaluation order, with the seconds each experiment took."""

    systems: dict[str, SystemResult] = field(default_factory=dict)
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # system -> experiment -> s
    seconds_total: float = 0.0
    ablation: Ablation | None = None

    def first_model(self) -> SystemResult | None:
        """The first trained model's result (None: only baselines were evaluated)."""
        return next((entry for entry in self.systems.values() if entry.kind == "model"), None)

    @staticmethod
    def _layout_in(data: dict[str, Any]) -> dict[str, Any]:
        """The systems in ``system_order``: JSON written with sorted keys loses dict order."""
        if "system_order" not in data:
            raise _Problem("missing field 'system_order'")
        data = dict(data)
        order = data.pop("system_order")
        systems = data.get("systems")
        if isinstance(systems, dict) and isinstance(order, list):
            data["systems"] = {**{n: systems[n] for n in order if n in systems}, **systems}
        return data

    @staticmethod
    def _layout_out(data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "system_order": list(data["systems"])}


@dataclass
class Environment:
    """The machine and library versions of a run."""

    platform: str
    python: str
    cpu_count: int | None
    torch: str
    numpy: str
    torch_threads: int

    @classmethod
    def current(cls) -> "Environment":
        """This machine's."""
        return cls(platform.platform(), platform.python_version(), os.cpu_count(), torch.__version__,
                   np.__version__, torch.get_num_threads())


@dataclass
class AnalysisOptions:
    """Settings of the analyses (Tables 5 and 6), as a run records them."""

    min_count: int = 100
    top_k: int = 20
    norm_fraction: float = 0.1
    sentence_sample: int = 20000
    sentence_lengths: tuple[int, int] = (3, 15)
    seed: int = 0
    train_data: str | None = None


@dataclass
class EvaluationRun:
    """Everything in ``evaluation.json``: the results and how they were made."""

    results: Results
    command: str = "probsent eval"
    probsent_version: str = __version__
    created: str = ""  # ISO 8601, UTC
    data_root: str = ""
    data_sha256: dict[str, str] = field(default_factory=dict)  # every evaluation file read
    environment: Environment = field(default_factory=Environment.current)
    options: AnalysisOptions = field(default_factory=AnalysisOptions)
    notes: list[str] = field(default_factory=list)
    paper: dict[str, Any] = field(default_factory=paper.as_json)  # the paper's numbers
    plots: list[str] = field(default_factory=list)  # relative paths of the PNG files
    seconds_command: float = 0.0


# --- the layout --------------------------------------------------------------------------

class _Problem(Exception):
    """Something wrong at ``where`` in the file (a path like ``results.systems.WLO``)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.message, self.where = message, where

    def at(self, place: str) -> "_Problem":
        return _Problem(self.message, f"{place}.{self.where}" if self.where else place)


def _is_optional(kind: Any) -> bool:
    return _is_union(kind) and type(None) in typing.get_args(kind)


def _is_union(kind: Any) -> bool:
    return isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union


_SCALARS: dict[Any, tuple[type, ...]] = {float: (int, float), int: (int,), str: (str,), bool: (bool,)}
_NAMES = {float: "a number", int: "an integer", str: "a string", bool: "true or false"}


def _decode(kind: Any, data: Any) -> Any:
    """``data`` (parsed JSON) as the type ``kind``; _Problem where it does not fit."""
    if kind is Any:
        return data
    if _is_union(kind):
        if data is None and _is_optional(kind):
            return None
        choices = [k for k in typing.get_args(kind) if k is not type(None)]
        skipped = isinstance(data, dict) and "skipped" in data and Skipped in choices
        return _decode(Skipped if skipped else next(k for k in choices if k is not Skipped), data)
    if is_dataclass(kind):
        return _decode_object(kind, data)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is dict:
        if not isinstance(data, dict):
            raise _Problem(f"expected an object, not {json.dumps(data)[:40]}")
        return {key: _at(key, lambda v=value: _decode(args[1], v)) for key, value in data.items()}
    if origin in (list, tuple):
        if not isinstance(data, list):
            raise _Problem(f"expected a list, not {json.dumps(data)[:40]}")
        items = [_at(str(i), lambda v=value: _decode(args[0], v)) for i, value in enumerate(data)]
        if origin is tuple:
            if len(items) != len(args):
                raise _Problem(f"expected {len(args)} values, not {len(items)}")
            return tuple(items)
        return items
    if isinstance(data, bool) and kind is not bool or not isinstance(data, _SCALARS[kind]):
        raise _Problem(f"expected {_NAMES[kind]}, not {json.dumps(data)[:40]}")
    return data


def _at(place: str, decode: Callable[[], Any]) -> Any:
    """``decode()``, its problems placed under ``place``."""
    try:
        return decode()
    except _Problem as problem:
        raise problem.at(place) from None


def _decode_object(cls: type, data: Any) -> Any:
    """An instance of dataclass ``cls`` from its JSON object (see the module's layout)."""
    if not isinstance(data, dict):
        raise _Problem(f"expected an object, not {json.dumps(data)[:40]}")
    data = getattr(cls, "_layout_in", lambda d: d)(data)
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    used: set[str] = set()
    rest = None
    for spec in fields(cls):
        if spec.metadata.get("rest"):
            rest = spec
            continue
        key = spec.metadata.get("key", spec.name)
        used.add(key)
        if key in data:
            values[spec.name] = _at(key, lambda k=key, name=spec.name: _decode(hints[name], data[k]))
        elif _is_optional(hints[spec.name]):
            values[spec.name] = None
        else:
            raise _Problem(f"missing field {key!r}")
    unknown = [key for key in data if key not in used]
    if rest is not None:
        values[rest.name] = _decode(hints[rest.name], {key: data[key] for key in unknown})
    elif unknown:
        raise _Problem(f"unknown field {unknown[0]!r}")
    return cls(**values)


def _encode(value: Any) -> Any:
    """The JSON form of a result object (see the module's layout)."""
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for spec in fields(value):
            item = getattr(value, spec.name)
            if spec.metadata.get("rest"):
                out.update(_encode(item))
            elif item is not None:
                out[spec.metadata.get("key", spec.name)] = _encode(item)
        return getattr(value, "_layout_out", lambda d: d)(out)
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(item) for item in value]
    return value


def evaluation_to_json(run: EvaluationRun) -> dict[str, Any]:
    """The JSON object of ``evaluation.json``."""
    return {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **_encode(run)}


def evaluation_from_json(data: Any, source: str = "evaluation.json") -> EvaluationRun:
    """The :class:`EvaluationRun` of a parsed ``evaluation.json`` (``source`` names it in errors)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise InvalidValueError(f"{source}: not a probsent evaluation (no \"format\": \"{FORMAT_NAME}\")")
    if data.get("format_version") != FORMAT_VERSION:
        raise InvalidValueError(f"{source}: evaluation format version {data.get('format_version')!r} is not "
                                f"supported by probsent {__version__} (it reads version {FORMAT_VERSION})")
    body = {key: value for key, value in data.items() if key not in ("format", "format_version")}
    try:
        return _decode(EvaluationRun, body)
    except _Problem as problem:
        raise InvalidValueError(f"{source}: {problem.where or 'top level'}: {problem.message}") from None


def load_evaluation(path: str | os.PathLike[str]) -> EvaluationRun:
    """Read and check an ``evaluation.json``: MissingFileError where there is none,
    InvalidValueError (one line naming the file) where it is damaged or of another version."""
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"{path}: no such evaluation file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidValueError(f"{path}: damaged evaluation file ({exc})") from None
    return evaluation_from_json(data, str(path))


def save_evaluation(path: str | os.PathLike[str], run: EvaluationRun) -> None:
    """Write ``run`` as ``evaluation.json``, atomically."""
    write_json(path, evaluation_to_json(run))
