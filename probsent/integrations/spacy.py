"""A spaCy pipeline component (the ``probsent[spacy]`` extra)::

    nlp = spacy.blank("en"); nlp.add_pipe("sentencizer")
    nlp.add_pipe("probsent", config={"model": "default"})
    doc = nlp("The Dow fell 2.3 % on Tuesday. Things happen.")
    doc._.specificity, [s._.specificity for s in doc.sents], doc[1]._.specificity_share

It sets, as TextDescriptives does, document attributes that do not grow with the number of
sentences: ``doc._.specificity_mean`` and ``doc._.probability_mean`` (the mean over the doc's
sentences, or the whole text's where no sentence was split) beside ``doc._.specificity_total``
(their sum); ``doc._.specificity`` and ``doc._.probability`` score the whole text read as one
sentence (which grows with its length), ``doc._.percentile`` gives its percentile for its length
(None without a percentile table) and ``doc._.coverage`` the share of its words with an entry of
their own. The means and the total are over the sentences that can be read: a blank sentence
(the sentencizer's whitespace between two), or a short one whose P(specific) is withheld
("Thanks!"), is left out of them, not made their NaN (NaN only where no sentence can be read).
Each of ``doc.sents`` gets ``span._.specificity``, ``span._.probability``, ``span._.percentile``
and ``span._.coverage`` when the pipeline has split sentences; any other span of an annotated
doc (``doc[0:4]``) is scored as its text reads when the attribute is read. A blank text is NaN,
as in the API. For models with per-word entropy terms (WLO) each token gets
``token._.entropy_share`` (its share of its sentence's entropy: negative makes the sentence
more specific), ``token._.specificity_share`` (minus it: its share of ``span._.specificity``,
positive makes the sentence more specific, the same sign as the score), and
``token._.specificity_rank`` (where that share falls among the terms of the model's own
vocabulary, 0-1: the scale ``explain`` colours on, so the same word has the same rank in every
sentence; None for a token that starts no probsent token) and ``token._.unknown`` (True where
one of its probsent tokens has no entry of its own). Probabilities and percentiles are None
unless the model is calibrated, and NaN where :mod:`probsent.readouts.withheld` withholds them.
``nlp.to_disk`` keeps the model's name as "default" (the shipped model, whatever the working
directory holds) or an absolute path, so ``spacy.load`` from any directory scores with the same model.

Tokens: probsent scores text with its own Treebank tokenizer, never spaCy's tokens. Each
sentence's text (or the whole text where no sentence was split) is tokenized by probsent, and
every probsent token's entropy term goes to the spaCy token where that probsent token starts
(matched by character offset). A spaCy token that starts no probsent token gets 0; one that
holds several (``can't`` is ``ca`` + ``n't``) gets their sum. So within a sentence (or a doc
without sentences) the shares plus the prior's entropy add up exactly to ``model.entropy`` of
its text. Importing this module registers the factory; so does spaCy's ``spacy_factories``
entry point, without any import.
"""
from __future__ import annotations

import bisect
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from probsent.errors import needs_extra

with needs_extra("spacy", "probsent's spaCy component"):
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token
    from spacy.util import minibatch

from probsent.api import MAX_TOKENS, SentenceModel, load, scoring_engine
from probsent.errors import InvalidValueError, ProbsentError
from probsent.files.atomic_writes import write_json
from probsent.model_directory import DEFAULT_NAME, MAX_JSON_BYTES
from probsent.files.untrusted import read_json_file
from probsent.readouts.readout_table import READOUTS, ScoredTexts
from probsent.text.token_spans import token_spans
from probsent.text.tokenize import tokenize

FACTORY = "probsent"
_DOC_MEANS = ("specificity_mean", "specificity_total", "probability_mean")
_TOKEN = ("entropy_share", "specificity_share", "specificity_rank", "unknown")


def attributes() -> dict[str, tuple[str, ...]]:
    """Every attribute the component sets, by owner: a doc's and a span's specificity and each
    read-out of :mod:`probsent.readouts.readout_table` (its name), a doc's means, a token's shares."""
    scored = ("specificity", *READOUTS)
    return {"doc": scored + _DOC_MEANS, "span": scored, "token": _TOKEN}


ATTRIBUTES = attributes()  # as declared when this module was imported (spaCy's ``assigns``)
_SOURCE_FILE = "model.json"  # in the pipe's folder of a saved pipeline: {"model": source}
_ANNOTATED_BY = "probsent_model"  # doc.user_data key: the source of the model that annotated the doc
_MODELS: dict[str, SentenceModel] = {}  # each annotating model by its source (this process)


def _register_extensions() -> None:
    """The ``._.`` attributes the component sets (default None until it runs); a span's read the
    values stored for a sentence, or score any other span of an annotated doc (:func:`_span_value`)."""
    declared = attributes()
    for owner, names in ((Doc, declared["doc"]), (Token, declared["token"])):
        for name in names:
            if not owner.has_extension(name):
                owner.set_extension(name, default=None)
    for name in declared["span"]:
        if not Span.has_extension(name):
            Span.set_extension(name, getter=lambda span, name=name: _span_value(span, name),
                               setter=lambda span, value, name=name: span.doc.user_data.__setitem__(
                                   _span_key(span, name), value))


def _span_key(span: Span, name: str) -> tuple:
    """Where a span's stored value lives in ``doc.user_data`` (saved with the doc, as spaCy's own)."""
    return ("._.", name, span.start_char, span.end_char)


def _span_value(span: Span, name: str) -> float | None:
    """``span._.name``: the value stored when the doc was annotated (its sentences), else, in a doc
    the component annotated, the span's text scored by the same model; None in a doc it has not."""
    stored = span.doc.user_data.get(_span_key(span, name), _MISSING)
    if stored is not _MISSING:
        return stored
    source = span.doc.user_data.get(_ANNOTATED_BY)
    if source is None:
        return None
    model = _MODELS.get(source) or _shared_model(source)
    engine, text = scoring_engine(model), span.text
    scores = np.atleast_1d(model.specificity([text]))  # the API's: NaN for a blank text
    if name == "specificity":
        return float(scores[0])
    readout = READOUTS.get(name)  # None: a read-out taken away since its attribute was made
    if readout is None or not readout.available(engine):
        return None
    return float(readout.of(ScoredTexts(engine, [text], scores=scores))[0])


_MISSING = object()


def _readable_mean(values: np.ndarray) -> float:
    """The mean of the values that are not NaN (a blank or withheld sentence's); NaN if none is."""
    readable = values[~np.isnan(values)]
    return float(readable.mean()) if len(readable) else float("nan")


@lru_cache(maxsize=8)
def _shared_model(name: str) -> SentenceModel:
    """One loaded model per name, shared by every pipeline that names it."""
    return load(name)


def token_starts(text: str, tokens: list[str]) -> list[int]:
    """The character offset in ``text`` where each of its probsent ``tokens`` starts
    (:func:`probsent.text.token_spans.token_spans`)."""
    return [start for start, _ in token_spans(text, tokens)]


class SpecificityComponent:
    """The ``probsent`` pipe: scores each doc (and its sentences) with a probsent model.

    ``source`` names the model for ``nlp.to_disk``: "default" (the shipped model) or an absolute
    path, which the saved pipeline keeps, so that ``spacy.load`` from any directory reads the
    same model (a relative name in its config.cfg is read against the directory it was saved
    from, by :meth:`from_disk`)."""

    def __init__(self, model: SentenceModel | None = None, batch_size: int = 256, source: str = DEFAULT_NAME) -> None:
        self._model = model
        self.source = source
        self.batch_size = batch_size
        self._terms: np.ndarray | None | bool = False  # float64 entropy term per word (WLO); False: not read yet
        self.scale = None  # the model's term scale (probsent.readouts.explanation.TermScale), for the ranks
        _register_extensions()

    @property
    def model(self) -> SentenceModel:
        """The model, read on first use (or after :meth:`from_disk` named another)."""
        if self._model is None:
            self._model = _shared_model(self.source)
        return self._model

    @property
    def terms(self) -> np.ndarray | None:
        """Each vocabulary word's float64 entropy term (WLO), for the token shares (and, once read,
        ``scale`` for their ranks); None for models without per-word terms."""
        if self._terms is False:
            self._terms = None
            if self.model.probabilistic:
                try:
                    table = scoring_engine(self.model).term_table("token shares")
                except ProbsentError:  # no per-word terms (LSTMGaussian)
                    pass
                else:
                    self._terms, self.scale, self._ids_of = table.terms, table.scale, table.ids_of
        return self._terms

    def to_disk(self, path: str | os.PathLike[str], exclude: Iterable[str] = ()) -> None:
        """Write which model the pipe scores with (``source``) into its folder of a saved pipeline."""
        Path(path).mkdir(parents=True, exist_ok=True)
        write_json(Path(path) / _SOURCE_FILE, {"model": self.source})

    def from_disk(self, path: str | os.PathLike[str], exclude: Iterable[str] = ()) -> "SpecificityComponent":
        """Score with the model the saved pipeline named (a pipeline saved without it keeps its config's)."""
        saved = Path(path) / _SOURCE_FILE
        if saved.is_file():
            source = read_json_file(saved, MAX_JSON_BYTES, "probsent pipe settings")
            if not (isinstance(source, dict) and isinstance(source.get("model"), str)):
                raise InvalidValueError(f"{saved}: damaged probsent pipe settings (no model name)")
            if source["model"] != self.source:
                self.source, self._model, self._terms = source["model"], None, False
        return self

    def __call__(self, doc: Doc) -> Doc:
        """Annotate one doc."""
        return self._annotate([doc])[0]

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """Annotate docs in batches: one model call scores a batch's docs and sentences."""
        for batch in minibatch(docs, size=batch_size):
            yield from self._annotate(list(batch))

    def _annotate(self, docs: list[Doc]) -> list[Doc]:
        sentences = [list(doc.sents) if doc.has_annotation("SENT_START") else [] for doc in docs]
        texts = [doc.text for doc in docs] + [s.text for spans in sentences for s in spans]
        _register_extensions()  # a read-out declared since this pipe was made has its attributes too
        engine = scoring_engine(self.model)
        scores = np.atleast_1d(self.model.specificity(texts, self.batch_size))
        batch = ScoredTexts(engine, texts, self.batch_size, scores)
        read = {r.name: r.of(batch) if r.available(engine) else None for r in READOUTS.values()}  # None: not calibrated
        probabilities = read.get("probability")
        calibrated = probabilities is not None
        _MODELS.setdefault(self.source, self.model)
        start = len(docs)
        for k, (doc, spans) in enumerate(zip(docs, sentences)):
            if _MODELS[self.source] is self.model:  # other spans are scored by this model when read
                doc.user_data[_ANNOTATED_BY] = self.source
            doc._.specificity = float(scores[k])
            for name, values in read.items():
                setattr(doc._, name, None if values is None else float(values[k]))
            parts = slice(start, start + len(spans)) if spans else slice(k, k + 1)  # no sentences: the text
            start += len(spans)
            readable = scores[parts][~np.isnan(scores[parts])]  # a blank sentence is no part of them
            doc._.specificity_mean = _readable_mean(scores[parts])
            doc._.specificity_total = float(readable.sum()) if len(readable) else float("nan")
            doc._.probability_mean = _readable_mean(probabilities[parts]) if calibrated else None
            for row, span in zip(range(parts.start, parts.stop), spans):
                span._.specificity = float(scores[row])
                for name, values in read.items():
                    setattr(span._, name, None if values is None else float(values[row]))
            if self.terms is not None:
                for span in spans or [doc[:]]:
                    self._assign_shares(span)
        return docs

    def _assign_shares(self, span: Span) -> None:
        """Each token of ``span`` gets the entropy terms of the probsent tokens starting in it."""
        tokens = tokenize(span.text)[:MAX_TOKENS]
        ids = self._ids_of(tokens)  # as every scoring path reads them (the open vocabulary's classes included)
        token_offsets = [token.idx - span.start_char for token in span]
        owners = np.asarray([max(bisect.bisect_right(token_offsets, start) - 1, 0)
                             for start in token_starts(span.text, tokens)], dtype=np.int64)
        shares, owned, unknown = np.zeros(len(span)), np.zeros(len(span), dtype=bool), np.zeros(len(span), dtype=bool)
        np.add.at(shares, owners, self.terms[ids])
        owned[owners] = True
        unknown[owners[(ids == 0) | (ids >= len(self.model.vocab))]] = True  # no entry of its own
        for token, share, has, missing in zip(span, shares.tolist(), owned.tolist(), unknown.tolist()):
            token._.entropy_share, token._.specificity_share = share, -share
            token._.specificity_rank = self.scale.rank(share) if has else None
            token._.unknown = missing


@Language.factory(FACTORY, default_config={"model": "default", "batch_size": 256},
                  assigns=[f"{owner}._.{name}" for owner, names in ATTRIBUTES.items() for name in names])
def make_probsent(nlp: Language, name: str, model: str, batch_size: int) -> SpecificityComponent:
    """spaCy's factory for the ``probsent`` pipe: ``model`` is a model directory or "default"
    (the shipped WLO), loaded once per process and name. A relative directory is read against
    the working directory and stored as an absolute path, so ``nlp.to_disk`` keeps it; it is read
    on first use (``spacy.load`` then reads the path the saved pipeline names)."""
    if model == DEFAULT_NAME or Path(model).is_absolute():
        return SpecificityComponent(_shared_model(model), batch_size, model)
    return SpecificityComponent(None, batch_size, str(Path(model).absolute()))
