"""Run every experiment of the paper on a set of systems, with progress and timings.

A *system* is a trained model or an untrained baseline. Each runs the specificity
experiments (Tables 2-4) and, if it can encode, STS (Table 8); trained models also get the
sentential analysis (Table 6) and models with per-word entropy terms (WLO) the lexical analysis
(Table 5). The Majority and SPECITELLER rows are always computed, and a second WLO trained
without the prior gives the ablation (Table 7). The outcome is the typed :class:`Results`
(:mod:`reproduction.evaluation.results`), plus the arrays the plots need.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

from probsent.api import SentenceModel
from reproduction.evaluation import datasets as ds
from reproduction.evaluation import tables
from reproduction.evaluation import baselines as bl
from reproduction.evaluation.generality import model_generality
from reproduction.evaluation.wordnet import HypernymPair, hypernym_pairs
from reproduction.evaluation.lexical import WordTable, lexical_analysis
from reproduction.evaluation.results import (Ablation, AblationEntry, AnalysisOptions, Diagnostics, Generality, Lexical, Results,
                                         Sentential, Skipped, SystemResult)
from reproduction.evaluation.sentential import sentential_analysis
from reproduction.evaluation.training_pairs import TrainingPairs, load_training_pairs, trained_with
from probsent.training import TrainConfig
from probsent.training import MappedPairs
from probsent.training import apply_mixture
from probsent.integrations.research_facade import DiagnosticSample, diagnose


@dataclass
class System:
    """One row of the tables: a scorer, maybe an encoder (STS) and, for trained models, the model."""

    name: str
    kind: str  # "model" or "baseline"
    scorer: tables.Scorer
    encoder: tables.Encoder | None = None
    model: SentenceModel | None = None
    path: str | None = None
    paper_label: str | None = None  # the paper's row this system stands for


@dataclass
class Options(AnalysisOptions):
    """Settings of the analyses (Tables 5 and 6), and whether to show progress."""

    progress: bool = True

    def recorded(self) -> AnalysisOptions:
        """The settings a run records (progress aside)."""
        return AnalysisOptions(**{spec.name: getattr(self, spec.name) for spec in dataclasses.fields(AnalysisOptions)})


@dataclass
class Outcome:
    """Everything the suite computed: ``results`` goes into evaluation.json, the rest feeds the plots."""

    results: Results
    ratings: dict[str, np.ndarray] = field(default_factory=dict)  # Ko et al. domain -> ratings
    scores: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # domain -> system -> scores
    word_tables: dict[str, WordTable] = field(default_factory=dict)  # model name -> lexical table


def _prior_weight(model: SentenceModel | None) -> float | None:
    settings = trained_with(model.config) if model is not None else None
    return settings.prior_weight if settings is not None else None


class SharedTrainingPairs:
    """Training pairs, loaded once per (file, settings) however many models (and the
    information-content baseline) share one; a file not found is said once on standard error
    (its analyses are skipped)."""

    def __init__(self, options: Options, data_root: Path) -> None:
        self.options = options
        self.data_root = data_root
        self._loaded: dict[str, TrainingPairs] = {}
        self._hypernym_pairs: list[HypernymPair] | None = None
        self._mixtures: dict[tuple[str, str], MappedPairs] = {}

    def hypernym_pairs(self, data: ds.DataDir) -> list[HypernymPair]:
        """WordNet's direct hypernym pairs, read once."""
        if self._hypernym_pairs is None:
            self._hypernym_pairs = hypernym_pairs(data)
        return self._hypernym_pairs

    def mixture(self, model: SentenceModel) -> MappedPairs | None:
        """The part of a model's training pairs its training drew from (:func:`training_mixture`),
        built once per pair file and mixture settings; None where the pairs are not at hand."""
        loaded = self.get(model)
        if loaded.pairs is None:
            return None
        settings = trained_with(model.config) or TrainConfig()
        key = (self._pairs_key(settings),
               repr((settings.source_caps, settings.min_tokens, settings.min_overlap, settings.max_overlap)))
        if key not in self._mixtures:
            self._mixtures[key] = training_mixture(model, loaded.pairs)
        return self._mixtures[key]

    def _pairs_key(self, settings: TrainConfig) -> str:
        """What makes two models' training pairs one: the pairs and how training read them."""
        return repr((self.options.train_data or settings.data, settings.columns, settings.max_pairs))

    def get(self, model: SentenceModel) -> TrainingPairs:
        settings = trained_with(model.config) or TrainConfig()
        key = self._pairs_key(settings)
        if key not in self._loaded:
            loaded = load_training_pairs(model.config, self.options.train_data, self.options.progress,
                                          self.data_root)
            if loaded.pairs is None:
                tqdm.write(f"probsent eval: {loaded.note}; the lexical and sentential analyses are "
                           f"skipped (give the pairs with --train-data)", file=sys.stderr)
            self._loaded[key] = loaded
        return self._loaded[key]


def _tasks(system: System, data: ds.DataDir, options: Options, shared_pairs: SharedTrainingPairs,
           outcome: Outcome) -> list[tuple[str, Callable[[], Any]]]:
    """The experiments of one system, as (name, thunk) pairs in report order."""
    tasks: list[tuple[str, Callable[[], Any]]] = [
        ("specificity", lambda: tables.specificity_experiment(system.scorer, data)),
        ("length_normalized_news", lambda: tables.length_normalized_news(system.scorer, data)),
        ("snli", lambda: tables.snli_entailment(system.scorer, data)),
    ]
    tasks.append(("shorter_specific", lambda: tables.shorter_specific_experiment(system.scorer)))
    if system.encoder is not None:
        tasks.append(("sts", lambda: tables.sts_experiment(system.encoder, data)))
    model = system.model
    if model is None:
        return tasks

    def lexical() -> Lexical | Skipped:
        loaded = shared_pairs.get(model)
        if loaded.pairs is None:
            return Skipped(loaded.note)
        counts = dict(zip(loaded.pairs.words, loaded.pairs.counts.tolist()))
        result, table = lexical_analysis(model, counts, options.min_count, options.top_k, options.norm_fraction)
        outcome.word_tables[system.name] = table
        return dataclasses.replace(result, corpus=loaded.note)

    def sentential() -> Sentential | Skipped:
        loaded = shared_pairs.get(model)
        if loaded.pairs is None:
            return Skipped(loaded.note)
        result = sentential_analysis(model, loaded.pairs, options.sentence_sample, options.sentence_lengths,
                                     options.seed)
        return dataclasses.replace(result, corpus=loaded.note)

    def diagnostics() -> Diagnostics | Skipped:
        loaded = shared_pairs.get(model)
        if loaded.pairs is None:
            return Skipped(loaded.note)
        return Diagnostics(**model_diagnostics(model, shared_pairs.mixture(model)), corpus=loaded.note)

    def generality() -> Generality:
        mixture = shared_pairs.mixture(model)
        information = (None if mixture is None else
                       bl.CountInformation(mixture.words, mixture.counts, shared_pairs.get(model).note))
        return model_generality(model, shared_pairs.hypernym_pairs(data), information)

    if model.encoder.has_word_entropy_terms:
        tasks.append(("lexical", lexical))
    tasks.append(("generality", generality))
    tasks.append(("sentential", sentential))
    tasks.append(("diagnostics", diagnostics))
    return tasks


def training_mixture(model: SentenceModel, pairs: MappedPairs) -> MappedPairs:
    """The part of ``pairs`` a model's training drew from: its mixture settings applied, the
    words recounted on them."""
    settings = trained_with(model.config) or TrainConfig()
    return apply_mixture(pairs, source_caps=settings.source_caps,
                         min_tokens=settings.min_tokens, min_overlap=settings.min_overlap,
                         max_overlap=settings.max_overlap).as_mapped_pairs()


def model_diagnostics(model: SentenceModel, mixture: MappedPairs) -> dict[str, float]:
    """The training diagnostics (:mod:`probsent.training.diagnostics`) of a finished model, on
    pairs of its training mixture (:meth:`SharedTrainingPairs.mixture`), mined as its training mined them."""
    settings = trained_with(model.config) or TrainConfig()
    to_model = model.vocab.ids(mixture.words)  # mapped word rank -> the model's id
    ids = to_model[mixture.tokens]
    counts = np.zeros(len(model.vocab), dtype=np.int64)
    np.add.at(counts, to_model, mixture.counts)
    sample = DiagnosticSample.draw(mixture.num_pairs, settings.batch_size * settings.megabatch, settings.seed)
    margin = settings.margin if settings.margin is not None else model.encoder.default_margin
    return diagnose(model.encoder, ids, mixture.offsets, counts, sample, margin, settings.prior_weight,
                    settings.batch_size)


def _domain_scores(system: System, data: ds.DataDir, outcome: Outcome) -> None:
    """Keep each Ko et al. domain's per-sentence scores of ``system`` for the scatter plots."""
    for domain in ds.KO2019_DOMAINS:
        rated = ds.load_ko2019(data, domain)
        outcome.ratings[domain] = rated.ratings
        outcome.scores.setdefault(domain, {})[system.name] = np.asarray(
            system.scorer.specificity(rated.sentences), dtype=np.float64)


def _ablation(with_prior: System | None, without_prior: System, data: ds.DataDir, results: Results) -> Ablation:
    """Table 7: News accuracy and F1 of the model with the prior and of the one without."""

    def side(system: System | None) -> AblationEntry | Skipped:
        if system is None:
            return Skipped("no model of the ablation's type given with --model")
        news = (results.systems[system.name].specificity.news if system.name in results.systems
                else tables.news_experiment(system.scorer, data))
        return AblationEntry(system=system.name, path=system.path, prior_weight=_prior_weight(system.model),
                             accuracy=news.accuracy, f1=news.f1)

    ablation = Ablation(with_prior=side(with_prior), without_prior=side(without_prior))
    if isinstance(ablation.without_prior, AblationEntry) and without_prior.model is not None:
        ablation.without_prior.config = without_prior.model.config
    return ablation


def run_suite(systems: list[System], data: ds.DataDir, options: Options | None = None,
              ablation_model: System | None = None, shared_pairs: SharedTrainingPairs | None = None) -> Outcome:
    """Evaluate every system; ``ablation_model`` is a model trained without the prior, compared
    with the first of ``systems`` of its type (Table 7); ``shared_pairs`` holds training pairs
    already loaded (for the same ``options``)."""
    options = options or Options()
    outcome = Outcome(results=Results())
    results = outcome.results
    start_all = time.perf_counter()
    for name, run in (("Majority", tables.majority_baseline), ("SPECITELLER", tables.speciteller_baseline)):
        results.systems[name] = SystemResult(kind="baseline", paper_row=name, specificity=run(data))
    shared_pairs = shared_pairs if shared_pairs is not None else SharedTrainingPairs(options, data.root)
    plan = [(system, task) for system in systems for task in _tasks(system, data, options, shared_pairs, outcome)]
    measured: dict[str, dict[str, Any]] = {}  # system -> experiment -> its result
    with tqdm(total=len(plan) + (ablation_model is not None), desc="evaluating", unit="step",
              disable=not options.progress, file=sys.stderr) as bar:
        for system, (experiment, run) in plan:
            bar.set_postfix_str(f"{system.name}: {experiment}", refresh=True)
            started = time.perf_counter()
            measured.setdefault(system.name, {})[experiment] = run()
            if experiment == "specificity":
                _domain_scores(system, data, outcome)
            results.seconds.setdefault(system.name, {})[experiment] = time.perf_counter() - started
            bar.update()
        for system in systems:
            if system.name in measured:
                results.systems[system.name] = SystemResult(
                    kind=system.kind, path=system.path, paper_row=system.paper_label,
                    config=system.model.config if system.model is not None else None, **measured[system.name])
        if ablation_model is not None:
            bar.set_postfix_str(f"{ablation_model.name}: prior ablation", refresh=True)
            started = time.perf_counter()
            kind = ablation_model.model.encoder.type_name if ablation_model.model else None
            with_prior = next((s for s in systems if s.model is not None and s.model.encoder.type_name == kind), None)
            results.ablation = _ablation(with_prior, ablation_model, data, results)
            results.seconds.setdefault(ablation_model.name, {})["ablation"] = time.perf_counter() - started
            bar.update()
    for name, steps in results.seconds.items():
        steps["total"] = sum(steps.values())
    results.seconds_total = time.perf_counter() - start_all
    return outcome
