"""``probsent eval``: every experiment of the paper on trained models and baselines, one command.

Writes into ``--out``: ``evaluation.json`` (every number, the data files' sha256, each model's
config, the probsent version and the command), ``report.md`` (the paper's tables with our
numbers beside the paper's), ``plots/*.png`` and, per model with a lexical analysis (WLO),
``lexical-<model>.tsv``.
Each file is written atomically; a non-empty output directory is refused unless ``--force``
(which replaces only the files named above).
"""
from __future__ import annotations

import argparse
import datetime as dt
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch

import probsent
from probsent.errors import ProbsentError
from reproduction.evaluation import baselines as bl
from reproduction.evaluation import datasets as ds
from probsent.errors import needs_extra
from reproduction.evaluation import tables
from reproduction.evaluation import paper
from reproduction.evaluation.model_scorer import ModelScorer
from reproduction.evaluation.report import render_report
from reproduction.evaluation.results import EvaluationRun, save_evaluation
from reproduction.evaluation.suite import Options, Outcome, System, SharedTrainingPairs, run_suite
from probsent.files.atomic_writes import write_text
from probsent.inputs import positive_int

JSON_NAME, REPORT_NAME, PLOT_DIR = "evaluation.json", "report.md", "plots"
DEFAULT_OUT = "probsent-eval"
TRANSFORMER_BASELINES = ("minilm-cls", "minilm-mean")


CountsFrom = tuple[System, SharedTrainingPairs]
"""The model whose training counts the information-content baseline uses, and the training pairs."""


def information_content(counts_from: CountsFrom | None) -> tuple[bl.InformationContentScorer, str]:
    """The information-content baseline and a note saying where its counts come from: the
    training mixture of ``counts_from``'s model where its training file is found, else wordfreq."""
    if counts_from is not None:
        system, shared_pairs = counts_from
        if system.model is None:
            raise ValueError(f"{system.name} is not a trained model: it has no training counts")
        loaded = shared_pairs.get(system.model)
        mixture = shared_pairs.mixture(system.model)
        if mixture is not None:
            information = bl.CountInformation(mixture.words, mixture.counts, loaded.note)
            return (bl.InformationContentScorer(information, f"training counts of {system.name}"),
                    f"Information content: -log p(w) summed over a sentence's tokens, p from the word counts of "
                    f"{system.name}'s training mixture ({int(mixture.counts.sum()):,} tokens of {mixture.num_pairs:,}"
                    f" pairs; {loaded.note}), add-one smoothed.")
        why = f"{system.name}'s training counts are not at hand ({loaded.note})"
    else:
        why = "no --model was given"
    return (bl.InformationContentScorer(bl.WordfreqInformation(), "wordfreq"),
            f"Information content: -log p(w) summed over a sentence's tokens, p from {bl.WordfreqInformation.source}"
            f" ({why}); an unseen word gets half the rarest listed frequency, punctuation is skipped.")


def _baseline_factories(data: ds.DataDir, counts_from: CountsFrom | None = None,
                        notes: list[str] | None = None) -> dict[str, Callable[[], Any]]:
    """Constructor of each untrained baseline, by its command-line name (notes some add go
    to ``notes``)."""
    shared: dict[str, bl.MiniLMEncoder] = {}

    def minilm(pooling: str) -> bl.MiniLMScorer:
        if "encoder" not in shared:
            shared["encoder"] = bl.MiniLMEncoder()
        return bl.MiniLMScorer(pooling, shared["encoder"])  # type: ignore[arg-type]

    def information() -> bl.InformationContentScorer:
        scorer, note = information_content(counts_from)
        if notes is not None:
            notes.append(note)
        return scorer

    return {
        "length": bl.LengthScorer,
        "wordfreq-sum": lambda: bl.WordFrequencyScorer("sum"),
        "wordfreq-avg": lambda: bl.WordFrequencyScorer("avg"),
        "information-content": information,
        "glove-sum": lambda: bl.GloveScorer("sum", data),
        "glove-avg": lambda: bl.GloveScorer("avg", data),
        "minilm-cls": lambda: minilm("cls"),
        "minilm-mean": lambda: minilm("mean"),
    }


BASELINE_NAMES = ("length", "wordfreq-sum", "wordfreq-avg", "information-content", "glove-sum", "glove-avg",
                  *TRANSFORMER_BASELINES)
_BASELINE_PAPER_ROWS = {"length": "Length", "glove-sum": "GloVe sum", "glove-avg": "GloVe avg"}


def _lengths(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)-(\d+)", text.strip())
    if not match or int(match[1]) < 1 or int(match[1]) > int(match[2]):
        raise argparse.ArgumentTypeError(f"expected MIN-MAX token counts with 1 <= MIN <= MAX, not {text!r}")
    return int(match[1]), int(match[2])


def add_eval_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``probsent eval`` on the ``probsent`` command's subparsers."""
    parser = subparsers.add_parser(
        "eval", help="run the paper's experiments on models and baselines",
        description="Run every experiment of Chen & Gimpel (2020) on trained models and untrained"
                    " baselines; write a JSON of every number, a Markdown report beside the paper's"
                    " numbers, and PNG plots.")
    parser.add_argument("--model", action="append", default=[], metavar="DIR",
                        help="trained model directory (or probsent train output); repeatable")
    parser.add_argument("--baseline", action="append", default=[], choices=[*BASELINE_NAMES, "all"],
                        metavar="NAME", help=f"untrained baseline: {', '.join(BASELINE_NAMES)} or all; repeatable"
                        " (Majority and SPECITELLER rows are always computed)")
    parser.add_argument("--ablation-model", metavar="DIR",
                        help=f"{paper.TABLE7_MODEL} trained without the KL prior (lambda = 0), compared with the first"
                             f" {paper.TABLE7_MODEL} of --model (Table 7)")
    parser.add_argument("--data-dir", metavar="DIR", help=f"evaluation data root (default: ${ds.DATA_DIR_ENV} or ../shared/data)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help="output directory (default: %(default)s)")
    parser.add_argument("--force", action="store_true",
                        help="write into a non-empty output directory, replacing earlier report files")
    parser.add_argument("--skip-transformer", action="store_true",
                        help="leave out the all-MiniLM-L6-v2 baselines (also from --baseline all)")
    parser.add_argument("--min-count", type=positive_int, default=100, metavar="N",
                        help="lexical analysis: words seen at least this often in training (default: %(default)s)")
    parser.add_argument("--sentence-sample", type=positive_int, default=20000, metavar="N",
                        help="sentential analysis: training sentences drawn (default: %(default)s)")
    parser.add_argument("--sentence-lengths", type=_lengths, default=(3, 15), metavar="MIN-MAX",
                        help="sentential analysis: token counts shown (default: 3-15)")
    parser.add_argument("--train-data", metavar="PAIRS",
                        help="the training pairs as --data names them (a file, several joined by ':', or a "
                             "directory of parts), if not those recorded in the model's config")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the sentence sample (default: %(default)s)")
    parser.add_argument("--threads", type=positive_int, default=1, metavar="N",
                        help="torch threads (default: %(default)s; the evaluation's tensors are small, and on a"
                             " busy machine more threads mostly wait on each other)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def command_line(args: argparse.Namespace) -> str:
    """The ``probsent eval`` command that reproduces ``args`` (defaults left out)."""
    parts = ["probsent", "eval"]
    for path in args.model:
        parts += ["--model", path]
    for name in args.baseline:
        parts += ["--baseline", name]
    optional = [("--ablation-model", args.ablation_model, None), ("--data-dir", args.data_dir, None),
                ("--out", args.out, None), ("--min-count", args.min_count, 100),
                ("--sentence-sample", args.sentence_sample, 20000),
                ("--sentence-lengths", "-".join(map(str, args.sentence_lengths)), "3-15"),
                ("--train-data", args.train_data, None), ("--seed", args.seed, 0), ("--threads", args.threads, 1)]
    for flag, value, default in optional:
        if value is not None and value != default:
            parts += [flag, str(value)]
    parts += [flag for flag, on in (("--force", args.force), ("--skip-transformer", args.skip_transformer),
                                    ("--quiet", args.quiet)) if on]
    return shlex.join(parts)


def _check_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ProbsentError(f"{out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ProbsentError(f"{out}: output directory is not empty; choose another --out or pass --force"
                            " to replace its report files")


def _check_data(data: ds.DataDir) -> None:
    """Read every evaluation file once, so a missing one fails before any model runs."""
    ds.load_news_train(data)
    ds.load_news_test(data)
    for domain in ds.KO2019_DOMAINS:
        ds.load_ko2019(data, domain)
    tables.snli_equal_length_pairs(data)
    ds.load_sts_benchmark(data, "test")
    ds.load_sts17(data)
    for year in ds.SENTEVAL_STS_SETS:
        ds.load_senteval_sts(data, year)


def _model_system(path: str, name: str, model: probsent.SentenceModel) -> System:
    scorer = ModelScorer(name, model)
    return System(name, "model", scorer, encoder=scorer, model=model, path=path,
                  paper_label=paper.paper_row(model.encoder.label))


def _model_names(paths: list[str], models: list[probsent.SentenceModel]) -> list[str]:
    """Paper labels (WLO, Wordsum, ...) of the models, with the path added where one repeats."""
    types = [m.encoder.label for m in models]
    return [t if types.count(t) == 1 else f"{t} ({p})" for t, p in zip(types, paths)]


def baseline_systems(names: list[str], skip_transformer: bool, data: ds.DataDir,
                      counts_from: CountsFrom | None = None) -> tuple[list[System], list[str]]:
    """The baselines ``names`` asks for and the report's notes on them; the information-content
    baseline counts words as ``counts_from``'s model was trained (wordfreq without one)."""
    chosen = list(BASELINE_NAMES) if "all" in names else list(dict.fromkeys(names))
    notes = []
    if skip_transformer and any(n in TRANSFORMER_BASELINES for n in chosen):
        chosen = [n for n in chosen if n not in TRANSFORMER_BASELINES]
        notes.append("The pretrained-transformer baselines (all-MiniLM-L6-v2) were skipped (--skip-transformer).")
    factories = _baseline_factories(data, counts_from, notes)
    systems = []
    for name in chosen:
        scorer = factories[name]()
        # STS for the vector baselines; the transformer only stands in for the paper's BERT rows of
        # Table 2 and would triple its own running time on STS.
        has_encode = callable(getattr(scorer, "encode", None))
        encoder = scorer if has_encode and name not in TRANSFORMER_BASELINES else None
        systems.append(System(scorer.name, "baseline", scorer, encoder=encoder, paper_label=_BASELINE_PAPER_ROWS.get(name)))
    return systems, notes


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model"


def _write_plots(out: Path, outcome: Outcome) -> list[str]:
    """Scatter plots (and the lexical word tables); returns the files' paths relative to ``out``."""
    with needs_extra("eval", "probsent eval's plots"):
        from reproduction.evaluation import plots  # matplotlib loads only when plots are drawn

    written = []
    systems = outcome.results.systems
    for domain, by_system in outcome.scores.items():
        spearman = {name: systems[name].specificity.domain(domain).spearman for name in by_system}
        relative = f"{PLOT_DIR}/specificity-{domain}.png"
        plots.specificity_scatter(out / relative, domain, outcome.ratings[domain], by_system, spearman)
        written.append(relative)
    for name, table in outcome.word_tables.items():
        relative = f"{PLOT_DIR}/lexical-{_slug(name)}.png"
        plots.lexical_scatter(out / relative, name, table, systems[name].lexical.lists)
        written.append(relative)
        write_text(out / f"lexical-{_slug(name)}.tsv", table.to_tsv())
        written.append(f"lexical-{_slug(name)}.tsv")
    return written


def run_eval(args: argparse.Namespace) -> int:
    """Run ``probsent eval``; user errors raise :class:`ProbsentError` (one line, exit 2).

    Torch runs with ``args.threads`` threads meanwhile; the caller's setting is restored after.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return _evaluate(args)
    finally:
        torch.set_num_threads(previous)


def _evaluate(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    if not args.model and not args.baseline:
        raise ProbsentError("nothing to evaluate: give --model DIR and/or --baseline NAME")
    out = Path(args.out)
    _check_out(out, args.force)
    data = ds.DataDir(args.data_dir)
    _check_data(data)

    paths = list(dict.fromkeys(args.model))  # a model given twice is evaluated once
    models = [probsent.load(path) for path in paths]
    systems = [_model_system(path, name, model) for path, name, model in zip(paths, _model_names(paths, models), models)]
    ablation = None
    if args.ablation_model:
        # the paper's Table 7 is an ablation of one model: its numbers are for that model only
        without_prior = probsent.load(args.ablation_model)
        if without_prior.encoder.label != paper.TABLE7_MODEL:
            raise ProbsentError(f"{args.ablation_model}: the prior ablation needs a {paper.TABLE7_MODEL} model,"
                                f" not {without_prior.encoder.type_name}")
        ablation = _model_system(args.ablation_model, f"{paper.TABLE7_MODEL} (no prior)", without_prior)
        if not any(s.model is not None and s.model.encoder.type_name == without_prior.encoder.type_name
                   for s in systems):
            raise ProbsentError(f"--ablation-model needs a {paper.TABLE7_MODEL} model with the prior, given with --model")
    options = Options(min_count=args.min_count, sentence_sample=args.sentence_sample,
                      sentence_lengths=args.sentence_lengths, seed=args.seed, train_data=args.train_data,
                      progress=not args.quiet and sys.stderr.isatty())
    shared_pairs = SharedTrainingPairs(options, data.root)
    counts_from = (systems[0], shared_pairs) if systems else None  # the first --model's training counts
    baselines, notes = baseline_systems(args.baseline, args.skip_transformer, data, counts_from)
    systems += baselines
    outcome = run_suite(systems, data, options, ablation, shared_pairs)

    out.mkdir(parents=True, exist_ok=True)
    evaluation = EvaluationRun(
        results=outcome.results, command=command_line(args), probsent_version=probsent.__version__,
        created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), data_root=str(data.root),
        data_sha256=dict(sorted(data.sha256.items())), options=options.recorded(), notes=notes)
    evaluation.plots = [p for p in _write_plots(out, outcome) if p.endswith(".png")]
    evaluation.seconds_command = time.perf_counter() - started  # loading, checks and plots included
    save_evaluation(out / JSON_NAME, evaluation)
    write_text(out / REPORT_NAME, render_report(evaluation))
    if not args.quiet:
        print(f"wrote {out / REPORT_NAME}, {out / JSON_NAME} and {len(evaluation.plots)} plots"
              f" in {evaluation.seconds_command:.1f} s")
    return 0


def register(subparsers: argparse._SubParsersAction) -> Callable[[argparse.Namespace], int]:
    """The wing's entry point in the group ``probsent.commands`` (reproduction/pyproject.toml):
    adds ``probsent eval`` to the ``probsent`` command and returns the function that runs it."""
    add_eval_parser(subparsers)
    return run_eval
