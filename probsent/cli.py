"""The ``probsent`` command line."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence


from probsent.inputs import positive_int
from probsent.readouts.readout_table import READOUTS
from probsent.readouts.similarity import MEASURES as MEASURE_NAMES
from probsent.version import __version__
from probsent.errors import ProbsentError
from probsent.errors import install_line
from probsent.torch_access import INSTALL_TRAIN, torch_installed
from probsent.signals import exit_status, stopping_on_signals

# Commands that score with a model's term table: their parser is built without the training
# and evaluation commands, whose flags come from modules that import torch (about 2 s).
SCORING_COMMANDS = ("specificity", "explain", "similarity", "encode")
# probsent's own commands; any other (eval) is added by another package through COMMANDS_GROUP
OWN_COMMANDS = ("train", "calibrate", "export", *SCORING_COMMANDS)
COMMANDS_GROUP = "probsent.commands"


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, with exit status 2 like every user error."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _argv_text(text: str) -> str:
    """A command-line sentence whose bytes are not UTF-8 read as U+FFFD (as on standard input),
    so that writing it out cannot fail, without a leading byte-order mark (as every input line)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace").removeprefix("\ufeff")


def _add_train(sub: argparse._SubParsersAction) -> None:
    from probsent.settings import SETTINGS, allowed_range, flag_name, setting_rules, setting_type

    parser = sub.add_parser("train", help="train a model on paraphrase pairs",
                            description="Train a sentence encoder on paraphrase pairs.")
    for name, spec in SETTINGS.items():  # one flag per declared setting (settings.py)
        kind, _ = setting_type(name)
        meta = setting_rules(name)
        options = {"type": kind, "help": meta["help"], "choices": meta["choices"]}
        notes = [allowed_range(name)]
        if meta["required"]:
            options["required"] = True
        else:
            options["default"] = spec.default
            if spec.default is not None:  # a None default is described by the help text
                notes.insert(0, "default: %(default)s")
        if any(notes):
            options["help"] += f" ({'; '.join(n for n in notes if n)})"
        parser.add_argument(flag_name(name), **options)
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    parser.add_argument("--no-validation", action="store_true",
                        help="skip validation (STS 2017 for best/, news training rows for best-news/)")


def _run_train(args: argparse.Namespace) -> int:
    from probsent.training.trainer import Trainer
    from probsent.settings import SETTINGS, TrainConfig

    config = TrainConfig(**{name: getattr(args, name) for name in SETTINGS})
    trainer = Trainer(config, resume=args.resume, progress=sys.stderr.isatty())
    if not args.no_validation:  # (the validators read the data and score through the public API)
        from probsent.training.model_selection import NewsValidator, StsValidator

        trainer.validator = StsValidator.from_data_dir(trainer.vocab)
        trainer.dev_scorer = NewsValidator.from_data_dir(trainer.vocab)
    state = trainer.train()
    best = state.get("best")
    summary = f"step {state['step']:,}"
    if best:
        summary += f"; best STS 2017 Pearson {best['score']:.4f} at step {best['step']:,}"
    from probsent.training.diagnostics import unit_note

    print(f"{'finished' if state['finished'] else 'stopped'} at {summary}; model in {config.out}/best"
          + unit_note(config.model, config.dim))
    return 0


def _add_corpus_input(parser: argparse.ArgumentParser) -> None:
    """The input flags of the commands that read a corpus (specificity, encode)."""
    parser.add_argument("sentences", nargs="*", help="sentences (default: one a line from --input or stdin)")
    parser.add_argument("--model", help="model directory or probsent train output directory "
                                        "(default: the WLO model shipped with probsent)")
    parser.add_argument("--input", help="one sentence a line ('-' for stdin), or a .parquet / .jsonl "
                                        "file, or a directory of Parquet files (a dataset)")
    parser.add_argument("--column", help="the text column of a .parquet / .jsonl input (default: text)")


def _add_specificity(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("specificity", help="score how specific sentences are",
                            description="Print one line per sentence, in input order: its "
                                        "specificity score and the sentence, tab-separated (or a "
                                        "JSON object with --format json). Higher = more specific: "
                                        "minus the entropy (probabilistic models) or the vector "
                                        "norm (deterministic models). Blank input lines get nan / "
                                        "null; undecodable bytes are read as U+FFFD. A Parquet "
                                        "(.parquet) or JSON Lines (.jsonl) input keeps all its "
                                        "columns and rows, in order, and gains a specificity "
                                        "column (null where --column is null or blank). "
                                        f"Columns in order: specificity, {', '.join(READOUTS)} "
                                        "(the ones asked for), then the sentence.")
    _add_corpus_input(parser)
    parser.add_argument("--output", help="write to this file, atomically: .parquet, .jsonl, or text "
                                         "as --format says (default: stdout; JSON Lines for a "
                                         ".parquet / .jsonl input). A symbolic link is written "
                                         "through; a FIFO or device is written to directly")
    parser.add_argument("--force", action="store_true", help="replace an existing --output file "
                                                             "(it keeps its permissions)")
    _add_workers(parser, "scoring")
    parser.add_argument("--format", choices=["tsv", "json"], default="tsv",
                        help="text output format (default: tsv)")
    parser.add_argument("--header", action="store_true",
                        help="tsv: first a line of the column names (specificity, ..., sentence)")
    for readout in READOUTS.values():  # each read-out's flag, declared in probsent/readouts/readout_table.py
        parser.add_argument(readout.flag, dest=readout.name, action="store_true", help=readout.help)
    parser.add_argument("--batch-size", type=positive_int, default=256,
                        help="sentences encoded together (default: %(default)s)")


def _add_encode(sub: argparse._SubParsersAction) -> None:
    description = ("Encode every sentence of the input, in order, into --output: a .parquet file (the input's "
                   "columns, or 'sentence' for one sentence a line, then 'mean' and, for a probabilistic model, "
                   "'variance': fixed-size lists of float32) or a .npy file (float32 [n, 2, dim]: [:, 0] the means, "
                   "[:, 1] the variances; [n, dim] for a deterministic model). A row without a sentence (null or "
                   "blank) is null (Parquet) or NaN (.npy). The file records the model that wrote it: probsent "
                   "similarity --corpus FILE searches it with that model, without encoding the sentences again.")
    parser = sub.add_parser("encode", help="write sentences' encodings (means and variances) to a file",
                            description=description)
    _add_corpus_input(parser)
    parser.add_argument("--output", required=True,
                        help="the .parquet or .npy file to write, atomically. An interrupted run over an input "
                             "file leaves its rows beside it (.NAME.partial); the same command continues from there")
    parser.add_argument("--force", action="store_true", help="replace an existing --output file (and discard the "
                                                             "partial output of a run with another input or model)")
    _add_workers(parser, "encoding", default=1, default_text="1: this process, whose compiled tokenizer and "
                                                             "encoder use every core; more send each row back")


def _add_workers(parser: argparse.ArgumentParser, what: str, default: int | None = None,
                 default_text: str | None = None) -> None:
    """``--workers`` of a corpus command: ``default`` None (said: the cores available) or a number
    (said by ``default_text``)."""
    said = ("default, and at most: the cores available" if default is None else
            f"default: {default_text}; at most the cores available")
    parser.add_argument("--workers", type=positive_int, default=default,
                        help=f"processes {what} in parallel, one core each ({said})")


def _workers(asked: int | None) -> int:
    """The worker processes for ``--workers asked`` (see capped_workers), with a note where fewer."""
    from probsent.corpus_scoring.workers import capped_workers

    workers = capped_workers(asked)
    if asked is not None and workers < asked:
        print(f"probsent: --workers {asked} is more than the {workers} cores available; "
              f"using {workers}", file=sys.stderr)
    return workers


def _run_encode(args: argparse.Namespace) -> int:
    from probsent.api import load
    from probsent.corpus_scoring.encode_command import encode_corpus, encoding_format
    from probsent.corpus_scoring.formats import check_output, open_corpus
    from probsent.corpus_scoring.resumable import input_identity, model_identity

    encoding_format(args.output)
    check_output(args.output, args.input, args.force)
    sentences = [_argv_text(s) for s in args.sentences] if args.sentences else args.sentences
    corpus = open_corpus(args.input, args.column, sentences=sentences)
    model = load(args.model)
    given = None if args.sentences else input_identity(args.input, args.column)
    identity = None if given is None else {"input": given, "model": model_identity(model.path)}
    done = encode_corpus(model, corpus, args.output, args.force, progress=sys.stderr.isatty() and not args.sentences,
                         workers=_workers(args.workers), identity=identity, column=args.column)
    if done.restarted:
        print("probsent: the partial output of an earlier run had no footer (killed?); started over",
              file=sys.stderr)
    resumed = f" ({done.resumed:,} of them by an earlier, interrupted run)" if done.resumed else ""
    print(f"probsent: {done.rows:,} rows encoded into {args.output}{resumed}", file=sys.stderr)
    return 0


def _add_calibrate(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("calibrate", help="fit P(specific) and the percentile table of a model",
                            description="Build the percentile table for the sentence's length from a "
                                        "fixed sample of training sentences (--reference), then fit "
                                        "P(specific), the chance that a news annotator calls the sentence "
                                        "specific, by maximum likelihood on the labelled news training "
                                        "sentences (every row but those equal to test sentences), as a "
                                        "logistic function of the score and the sentence's length; store them in the model "
                                        "directory (percentiles.json, calibration.json). The same model and "
                                        "data give the same files, byte for byte.")
    parser.add_argument("--model", required=True, help="model directory or probsent train output directory")
    parser.add_argument("--data-dir", help="evaluation data root (default: $PROBSENT_DATA_DIR or ../shared/data)")
    parser.add_argument("--reference", help="paraphrase pairs file whose first sides are the percentile "
                                            "reference (default: DATA_DIR/paraphrase/pairs.tsv.gz)")


def open_vocabulary_line(model: Any) -> str:
    """What ``calibrate`` and ``export`` say of the model's open vocabulary (estimated_words.safetensors)."""
    estimates = model.word_estimates
    if estimates is not None:
        return (f"open vocabulary: {estimates.english_count:,} English words and {len(estimates)} classes "
                f"in {model.path / 'estimated_words.safetensors'}")
    return ("open vocabulary: none written (it needs a WLO model of at least 1,000 words, and wordfreq: "
            "pip install 'probsent[eval]'); words without an entry read as <unk>")


def _run_calibrate(args: argparse.Namespace) -> int:
    from probsent.api import load
    from probsent.training.model_calibration import calibrate

    model = load(args.model)
    calibration, table, reference_sentences = calibrate(model, args.data_dir, args.reference)
    terms = " ".join(f"{'-' if c < 0 else '+'} {abs(c):.4g} * {name}"
                     for name, c in zip(calibration.features, calibration.coefficients))
    print(f"P(specific) = sigmoid({calibration.intercept:.4g} {terms}), fitted on {calibration.sentences:,} "
          f"news sentences; percentile table from {reference_sentences:,} reference sentences "
          f"({sum(map(len, table.scores)):,} kept in {len(table.starts)} length bins); written to {model.path}")
    print(open_vocabulary_line(model))
    return 0


def _run_specificity(args: argparse.Namespace) -> int:
    from probsent.corpus_scoring.formats import check_output, open_corpus, open_sink
    from probsent.api import load, scoring_engine
    from probsent.files.user_output import standard_output
    from probsent.corpus_scoring.score import score_columns, score_corpus
    from probsent.text.token_ids import LOW_COVERAGE

    check_output(args.output, args.input, args.force)
    if args.output in (None, "-"):
        standard_output("--output FILE")
    sentences = [_argv_text(s) for s in args.sentences] if args.sentences else args.sentences
    corpus = open_corpus(args.input, args.column, sentences=sentences)
    engine = scoring_engine(load(args.model))
    readouts = [name for name in READOUTS if getattr(args, name)]
    for name in readouts:
        READOUTS[name].require(engine)
    progress = sys.stderr.isatty() and not args.sentences
    workers = _workers(args.workers)
    columns = score_columns(readouts)
    with open_sink(args.output, corpus, columns, args.format, force=args.force, header=args.header) as sink:
        scored = score_corpus(engine, corpus.chunks, sink, workers, args.batch_size, readouts, progress)
    if scored.low_coverage:
        print(f"probsent: warning: {scored.low_coverage:,} of {scored.rows:,} sentences have fewer than "
              f"{LOW_COVERAGE:.0%} of their tokens in the model's vocabulary (technical terms, another language, emoji, a URL?); "
              f"their scores say little (see --coverage)", file=sys.stderr)
    if scored.withheld:
        print(f"probsent: warning: {scored.withheld:,} of {scored.rows:,} sentences have no percentile or "
              f"P(specific) (nan): another language, mostly unknown words, mostly repetition, or fewer than three words "
              f"(probsent.load().note(sentences) says which)", file=sys.stderr)
    return 0


# Each command's parser is declared on its own (the same add_parser/add_argument shape, different
# flags): one small function per command, read beside the function that runs it.
def _add_explain(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("explain", help="each word's share of a sentence's entropy (WLO)",
                            description="WLO's entropy is the prior's plus one exact term per word, "
                                        "sum_d log|A_w,d|; list the words, most specific (most "
                                        "negative term) first, with their translation norms ||B_w||.")
    parser.add_argument("sentences", nargs="*", help="the sentences to explain (default: one a line from --input)")
    parser.add_argument("--input", help="one sentence a line ('-' for stdin); blank lines are skipped")
    parser.add_argument("--model", help="a WLO model directory or probsent train output directory "
                                        "(default: the model shipped with probsent)")
    parser.add_argument("--format", choices=["text", "json"], default="text",
                        help="text (default), or one JSON object a line per sentence: its entropy, "
                             "the prior's, the word terms' total and each token's share")
    parser.add_argument("--html", metavar="FILE", help="also write a page with each word shaded by its share")
    parser.add_argument("--force", action="store_true", help="replace an existing --html file")


def _explain_sentences(args: argparse.Namespace) -> list[str]:
    """The sentences of ``probsent explain``: its arguments, or --input's non-blank lines."""
    if args.sentences and args.input:
        raise ProbsentError("give sentences as arguments or with --input, not both")
    if args.sentences:
        return [_argv_text(s) for s in args.sentences]
    if not args.input:
        raise ProbsentError("no sentence to explain: give one as an argument or with --input FILE")
    return _lines(args.input)


def _lines(path: str) -> list[str]:
    """The non-blank lines of a file ('-': standard input), each read within MAX_LINE_BYTES
    (:mod:`probsent.files.untrusted`), undecodable bytes as U+FFFD."""
    return [line for _, line in _numbered_lines(path)]


def _numbered_lines(path: str) -> list[tuple[int, str]]:
    """(line number from 1, blank lines counted; line) of each non-blank line of a file, as :func:`_lines`."""
    from probsent.files.untrusted import iter_lines, open_input

    stream = open_input(path)
    try:
        return [(number, line) for number, line in
                enumerate(iter_lines(stream, "standard input" if path == "-" else path), start=1) if line.strip()]
    finally:
        if path != "-":
            stream.close()


def _run_explain(args: argparse.Namespace) -> int:
    import json

    from probsent.readouts.explanation import explanations_page
    from probsent.files.user_output import check_output_target, standard_output, writing_output
    from probsent.api import load, scoring_engine
    from probsent.readouts.explanation import explanation_text

    out = standard_output()
    sentences = _explain_sentences(args)
    if args.html:
        check_output_target(args.html, args.input, args.force)  # before any work
    engine = scoring_engine(load(args.model))
    explanations = [engine.explain(sentence) for sentence in sentences]
    color = out.isatty()
    paint = (lambda text, code: f"\033[{code}m{text}\033[0m") if color else (lambda text, code: text)
    for number, explanation in enumerate(explanations):
        if args.format == "json":
            out.write(json.dumps(explanation.to_dict(), ensure_ascii=False) + "\n")
            continue
        if number:
            out.write("\n")
        out.write(explanation_text(explanation, paint, with_sentence=len(explanations) > 1))
    if args.html:
        with writing_output(args.html, args.force) as path:
            path.write_text(explanations_page(explanations), encoding="utf-8")
    return 0


def _add_similarity(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("similarity", help="the corpus sentences most similar to each query",
                            description="Semantic search: for each query, the --top-k sentences of the corpus "
                                        "(text, one sentence a line; JSON Lines; Parquet) of highest similarity, "
                                        "reading the corpus chunk by chunk. Output: one hit a line, query number "
                                        "(its line in --queries, blank lines counted, or its place among the "
                                        "arguments, from 1), rank, corpus row (from 0), score, query and sentence, "
                                        "tab-separated; or one JSON object a line per query with --format json. "
                                        "A blank query has no hits and no output. The similarity is a "
                                        "bag of words': word order and negation barely move it (docs/USE_WITH.md).")
    parser.add_argument("queries", nargs="*", help="the queries (default: one a line from --queries)")
    parser.add_argument("--queries", dest="queries_file", metavar="FILE",
                        help="a file of queries, one a line ('-' for stdin); blank lines are skipped")
    parser.add_argument("--corpus", required=True, help="the corpus: a text file (one sentence a line), "
                                                        ".jsonl or .parquet (or a Parquet directory); or the "
                                                        ".parquet / .npy file probsent encode wrote, searched "
                                                        "without encoding it again (with the model that wrote it)")
    parser.add_argument("--column", help="the text field of a JSON Lines or Parquet corpus (default: text)")
    parser.add_argument("--top-k", type=positive_int, default=10, help="hits per query (default: %(default)s)")
    parser.add_argument("--measure", choices=MEASURE_NAMES, default=None,
                        help="the similarity (default: the model's default, the cosine of the means)")
    parser.add_argument("--model", help="a model directory or probsent train output directory "
                                        "(default: the model shipped with probsent)")
    parser.add_argument("--format", choices=["tsv", "json"], default="tsv", help="output format (default: tsv)")
    parser.add_argument("--output", help="write to this file (atomically) instead of standard output")
    parser.add_argument("--force", action="store_true", help="replace an existing --output file")
    parser.add_argument("--batch-size", type=positive_int, default=256,
                        help="sentences encoded together (default: %(default)s)")


def _run_similarity(args: argparse.Namespace) -> int:
    from probsent.api import load
    from probsent.corpus_scoring.formats import open_corpus
    from probsent.corpus_scoring.encoded_corpus import open_encoded_corpus
    from probsent.corpus_scoring.search import search_corpus, search_encoded, write_hits
    from probsent.files.user_output import check_output_target, standard_output, writing_output

    if not args.output:
        standard_output("--output FILE")
    if args.queries and args.queries_file:
        raise ProbsentError("give queries as arguments or with --queries, not both")
    if args.queries:  # a query's number: its position among the arguments, or its line in the file, from 1
        numbered = [(number, _argv_text(q)) for number, q in enumerate(args.queries, start=1) if q.strip()]
    elif args.queries_file:
        numbered = _numbered_lines(args.queries_file)
    else:
        raise ProbsentError("no query: give one as an argument or with --queries FILE")
    numbers, queries = [n for n, _ in numbered], [q for _, q in numbered]
    if args.output:
        check_output_target(args.output, args.corpus, args.force)  # before any work
    progress = sys.stderr.isatty()
    encoded = open_encoded_corpus(args.corpus, args.column)  # probsent encode's output: searched as it is
    corpus = open_corpus(args.corpus, args.column) if encoded is None else None
    model = load(args.model)
    if encoded is not None:
        hits = search_encoded(model, queries, encoded, args.top_k, args.measure, args.batch_size, progress)
    else:
        hits = search_corpus(model, queries, corpus.chunks, args.top_k, args.measure, args.batch_size, progress)
    if args.output:
        with writing_output(args.output, args.force) as path, open(path, "w", encoding="utf-8") as out:
            write_hits(out, queries, hits, args.format, numbers)
    else:
        write_hits(sys.stdout, queries, hits, args.format, numbers)
    return 0


def _add_export(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("export", help="write a smaller copy of a model (trimmed vocabulary, float16)",
                            description="Write a model directory for shipping: only the most "
                                        "frequent words (the others become <unk>) and optionally "
                                        "float16 weights; then calibrate it (P(specific) and the "
                                        "percentile table, as probsent calibrate) where the data are found.")
    parser.add_argument("--model", required=True, help="model directory or probsent train output directory")
    parser.add_argument("--out", required=True, help="new model directory (must not exist)")
    parser.add_argument("--max-words", type=positive_int, help="keep <unk> plus this many most frequent words")
    parser.add_argument("--float16", action="store_true", help="store the weights as float16")
    parser.add_argument("--start-variance", type=float, metavar="S",
                        help="WLO: write means and variances in the unit where a sentence starts as "
                             "N(0, S I) (means x sqrt(S), variances x S): no ranking changes, every entropy moves by one constant")
    parser.add_argument("--data-dir", help="evaluation data root for the calibration (default: $PROBSENT_DATA_DIR "
                                           "or ../shared/data)")
    parser.add_argument("--reference", help="pairs file of the percentile reference (as probsent calibrate)")


def _run_export(args: argparse.Namespace) -> int:
    from probsent.api import load
    from probsent.export import export_model

    from probsent.errors import MissingFileError
    from probsent.training.model_calibration import CannotFit, calibrate, word_estimates_of

    small = export_model(load(args.model), args.out, args.max_words, args.float16, str(args.model),
                         args.start_variance)
    try:
        calibrate(load(args.out), args.data_dir, args.reference)
        calibrated = "calibrated"
    except MissingFileError as exc:  # no data here: the model works, without P(specific) and percentiles
        calibrated = f"not calibrated ({exc}); run probsent calibrate --model {args.out} where the data are"
        with contextlib.suppress(CannotFit):  # the open vocabulary needs no data files
            estimates = word_estimates_of(load(args.out))
            if estimates is not None:
                estimates.save(args.out)
    size = sum(f.stat().st_size for f in Path(args.out).iterdir())
    print(f"wrote {args.out}: {len(small.vocab):,} words, {size / 1e6:.1f} MB, {calibrated}")
    print(open_vocabulary_line(load(args.out)))
    return 0


def _plugin_commands() -> dict[str, Any]:
    """The commands other packages add to ``probsent``, by name: each entry point of the group
    :data:`COMMANDS_GROUP` names a ``register(subparsers)`` that adds its subparser and returns
    the function that runs it (``args -> exit status``). The research wing (``reproduction/``)
    adds ``probsent eval`` this way; probsent itself never imports it."""
    from importlib.metadata import entry_points

    return {point.name: point for point in entry_points(group=COMMANDS_GROUP)}


def build_parser(scoring_only: bool = False, plugins: bool = True) -> argparse.ArgumentParser:
    """The argument parser of the ``probsent`` command (``scoring_only``: without ``train``
    and the added commands, whose flags need torch; ``plugins``: with the commands other
    packages add (:func:`_plugin_commands`), which ``main`` loads only when the command is not
    probsent's own: a training run does not import the research harness). The runner of each
    added command is in the parser's ``plugin_runners``."""
    parser = _Parser(prog="probsent", description="Probabilistic sentence representations.")
    parser.add_argument("--version", action="version", version=f"probsent {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    parser.plugin_runners = {}
    if not scoring_only and torch_installed():  # the core install has no torch: no train, no eval
        _add_train(sub)
        if plugins:
            for name, point in _plugin_commands().items():
                parser.plugin_runners[name] = point.load()(sub)
    _add_specificity(sub)
    _add_encode(sub)
    _add_explain(sub)
    _add_similarity(sub)
    _add_calibrate(sub)
    _add_export(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: runs a subcommand; user errors print one line and exit with status 2;
    Ctrl-C, SIGTERM and SIGHUP print one line and exit with 128 + the signal."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["train"], ["eval"]) and not torch_installed():
        print(f"probsent: error: probsent {argv[0]} needs PyTorch, which is not installed: "
              f"{INSTALL_TRAIN if argv[0] == 'train' else install_line('eval')}", file=sys.stderr)
        return 2
    if argv[:1] == ["eval"] and "eval" not in _plugin_commands():
        print("probsent: error: probsent eval is the research wing's command, which is not installed: "
              "from a clone of the repository, pip install -e ./reproduction", file=sys.stderr)
        return 2
    parser = build_parser(scoring_only=argv[:1] in ([c] for c in SCORING_COMMANDS),
                          plugins=not argv[:1] or argv[0] not in OWN_COMMANDS)
    args = parser.parse_args(argv)
    runners = {"train": _run_train, "specificity": _run_specificity, "encode": _run_encode, "explain": _run_explain,
               "similarity": _run_similarity, "calibrate": _run_calibrate, "export": _run_export,
               **parser.plugin_runners}
    try:
        with stopping_on_signals():
            return runners[args.command](args)
    except ProbsentError as exc:
        print(f"probsent: error: {exc}", file=sys.stderr)
        try:
            if sys.stdout is not None:
                sys.stdout.flush()  # what was written before the error stays written
        except OSError:  # standard output itself failed (a full disk)
            _quiet_stdout()
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (probsent.signals.Stopped)
        status, message = exit_status(exc)
        print(f"probsent: {message}", file=sys.stderr)
        return status
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly, as Unix tools do
        _quiet_stdout()
        return 141
    except OSError as exc:  # any other operating-system error: one line naming the file
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"probsent: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


def _quiet_stdout() -> None:
    """Point standard output at the null device, so that Python's final flush of what is left
    in its buffer (to a closed pipe, a full disk) cannot fail again."""
    if sys.stdout is None:
        return
    try:
        fileno = sys.stdout.fileno()
    except (OSError, ValueError):  # not a real file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
