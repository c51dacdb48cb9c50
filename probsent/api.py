"""The Python API: ``model = probsent.load(path)``, then encode / entropy / specificity / similarity."""
from __future__ import annotations

import os
import re
import sys
import textwrap
import warnings
from collections.abc import Iterable
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np

from probsent.readouts.calibration import Calibration
from probsent.data.vocab import Vocabulary, WordEstimates
from probsent.errors import InvalidValueError, ProbsentError
from probsent.readouts.explanation import Attribution, Explanation
from probsent.inference.array_encoder import NUMPY_TYPES, ArrayEncoder
from probsent.inference.arrays import ArrayEncoding, saturated, saturated_variance, unit_means
from probsent.torch_access import INSTALL_TRAIN, require_torch, tensor_converter, torch_installed
from probsent.inputs import Texts, texts
from probsent.model_directory import CONFIG as CONFIG_FILE, DEFAULT_MODEL, read_consistently, read_model, resolve_model_dir
from probsent.readouts.percentiles import PercentileTable
from probsent.readouts.readout_table import READOUTS, Readout, ScoredTexts
from probsent.readouts.scoring_engine import ScoringEngine
from probsent.readouts.similarity import (MEASURES, check_measure, expected_inner_product_blocks, measure_matrix,
                                         measure_pairs, paired_expected_inner_product)
from probsent.text.language_id import language_of
from probsent.text.token_ids import LOW_COVERAGE, TokenIds
from probsent.text.tokenize import tokenize
from probsent.inputs import check_batch_size
from probsent.readouts.semantic_search import CORPUS_CHUNK, TopHits
from probsent.readouts.word_terms import MAX_TOKENS

if TYPE_CHECKING:
    import torch

    from probsent.models import SentenceEncoder

__all__ = ["Attribution", "DEFAULT_MODEL", "Explanation", "LOW_COVERAGE", "MAX_TOKENS", "MEASURES", "SentenceModel",
           "load", "scoring_engine", "Vocabulary", "tokenize", "language_of"]  # the last two: the tokens a model
# reads (``explain`` shows them) and the language the identifier behind ``note`` finds ("en", "fr", ...)

# a str, or any iterable of str and nulls: list, generator, NumPy array, pandas Series, datasets column
Sentences = Union[str, Iterable[Any]]
# what ``encode`` returned: vectors (or means) [n, dim] or [dim], or a (mean, variance) tuple
Encoded = Union[np.ndarray, tuple]

# A sentence is encoded (and explained) as its first MAX_TOKENS tokens (probsent.readouts.word_terms):
# the encoding's memory per sentence stays bounded (about 3 KB a token) whatever the input.
# Sentences are encoded in batches of at most this many padded token positions (or one
# sentence), so memory per call is bounded too, whatever the batch size asked for.
MAX_BATCH_CELLS = 32_768
# ``encode`` works through its input this many sentences at a time (the progress bar's steps;
# results never depend on it).
ENCODE_CHUNK = 8192
# A similarity matrix is computed in blocks of at most about this many float64 numbers of work
# (a block of r x c pairs of a probabilistic model holds r x c x dim), whatever N x M.
MAX_SIMILARITY_CELLS = 1 << 21

# The Parameters entries that several methods share, each written once as (numpydoc's "name :
# type" line, its description): a method's docstring holds "{name}" alone on a line of its
# Parameters section, and @_shared_parameters writes the entry there.
SHARED_PARAMETERS = {
    "sentences": ("sentences : str, iterable of str, or pandas Series",
                  "One sentence (a str) or many: a list, a generator, a NumPy array, a pandas Series or a "
                  "datasets column. A null (None, NaN) or blank item is a missing sentence, never an error "
                  "(Returns says what it gives)."),
    "batch_size": ("batch_size : int, default 256",
                   "Sentences encoded together. A WLO model's scores are the same bits for any batch size; "
                   "``encode``'s values and other models' scores can differ in their last float32 bits."),
    "show_progress_bar": ("show_progress_bar : bool, optional",
                          "A tqdm bar on standard error (default: only when it is a terminal)."),
    "a, b": ("a, b : str, iterable of str, pandas Series, or encodings",
             "Sentences (as ``sentences`` of :meth:`entropy`), or what :meth:`encode` returned for them "
             "earlier: an array [n, dim] or [dim] (vectors, or a probabilistic model's means), or a "
             "(mean, variance) tuple."),
    "measure": ("measure : str, optional",
                '``"cosine"`` (the default: the cosine of the means, or of the vectors), ``"cosine_concat"``, '
                '``"kernel"`` or ``"expected_inner_product"`` (the model\'s training similarity, unbounded); '
                "see :mod:`probsent.readouts.similarity`. The default was chosen on development sets "
                "(reproduction/docs/RESULTS.md)."),
}


def _shared_parameters(method: Any) -> Any:
    """``method`` with each line ``{name}`` of its docstring replaced by the entry of ``name`` in
    :data:`SHARED_PARAMETERS`, indented as that line (an unknown name is a KeyError at import)."""
    def entry(line: re.Match) -> str:
        indent, (head, text) = line.group(1), SHARED_PARAMETERS[line.group(2)]
        body = textwrap.fill(text, 96, initial_indent=indent + "    ", subsequent_indent=indent + "    ",
                             break_on_hyphens=False, break_long_words=False)
        return f"{indent}{head}\n{body}"

    if method.__doc__ is not None:  # None under python -OO, which drops docstrings
        method.__doc__ = re.sub(r"^( *)\{([\w, ]+)\}$", entry, method.__doc__, flags=re.MULTILINE)
    return method


class SentenceModel:
    """A trained encoder with its vocabulary and tokenizer.

    Results come back in input order, and each sentence is encoded independently (padding
    never changes a result). Entropy, specificity, probability and explain of a WLO model (its
    per-word term table) are the same bits whatever the ``batch_size`` and the other sentences;
    ``encode``'s float32 values, and the scores of the other models, come from a batched float32
    pass and can differ in their last bits (a few 1e-7, relative) with the batch they fall in.
    """

    def __init__(self, encoder: "SentenceEncoder | ArrayEncoder", vocab: Vocabulary,
                 config: dict[str, Any] | None = None, calibration: Calibration | None = None,
                 path: Path | None = None, percentiles: PercentileTable | None = None,
                 estimates: WordEstimates | None = None) -> None:
        # encoder: an ArrayEncoder (NumPy: WLO, Wordavg, Wordsum; no torch) or a torch module
        self._arrays = encoder if isinstance(encoder, ArrayEncoder) else None
        self._module = None if self._arrays is not None else encoder.eval()
        self._torch_encoder: Any = None
        self.vocab = vocab
        self.config = config or {}
        # what scores, and holds the calibration, percentile table, directory and tokenizer: made
        # on first use (see _engine) from these parts and the files' identity load gives it
        self._scoring: ScoringEngine | None = None
        self._parts: tuple = (calibration, percentiles, path, estimates)
        self._source_files: tuple | None = None  # its files' identity when loaded (model_directory.files_identity)

    def __getstate__(self) -> dict[str, Any]:
        """A frozen copy for another process (corpus scoring's workers): the model and what its
        engine reads beside the weights, without the tokenizer's caches and lock and the term
        table, which the copy builds again."""
        engine = self._engine
        return {**self.__dict__, "_scoring": None, "_parts": (engine.calibration, engine.percentiles, engine.path,
                                                            engine.estimates),
                "_source_files": engine.source_files, "_torch_encoder": None}

    @property
    def _engine(self) -> ScoringEngine:
        """The model's one scoring engine (:mod:`probsent.readouts.scoring_engine`), made on
        first use (loading a model reads its files and makes nothing else), then the only holder
        of the calibration, the percentile table and the directory."""
        if self._scoring is None:
            self._scoring = ScoringEngine(self.vocab, self._what_encodes, *self._parts)
            self._scoring.source_files = self._source_files
        return self._scoring

    calibration = property(lambda self: self._engine.calibration,
                           lambda self, value: setattr(self._engine, "calibration", value),
                           doc="P(specific)'s calibration (probsent.readouts.calibration), None without one.")
    percentiles = property(lambda self: self._engine.percentiles,
                           lambda self, value: setattr(self._engine, "percentiles", value),
                           doc="The percentile table for the sentence's length, None without one.")
    path = property(lambda self: self._engine.path, lambda self, value: setattr(self._engine, "path", value),
                    doc="The directory the model was loaded from, if any.")
    word_estimates = property(lambda self: self._engine.estimates,
                              lambda self, value: self._engine.set_estimates(value),
                              doc="The open vocabulary (probsent.data.vocab.WordEstimates: a word "
                                  "without an entry read by its class), None without one (read as <unk>).")

    def _word_weights(self) -> tuple[np.ndarray, np.ndarray] | None:
        """A WLO model's (scales, translations) [vocab, dim] as NumPy; None for any other model."""
        if not self._encoder.has_word_entropy_terms:
            return None
        if self._arrays is not None:
            return self._arrays.weights["scale.weight"], self._arrays.weights["shift.weight"]
        state = self._module.state_dict()
        return (state["scale.weight"].detach().float().cpu().numpy(),
                state["shift.weight"].detach().float().cpu().numpy())

    @property
    def _token_ids(self) -> TokenIds:
        """Sentences to vocabulary ids, each of its first MAX_TOKENS tokens (the engine's)."""
        return self._engine.token_ids

    def _what_encodes(self) -> Any:
        """What encodes now (:attr:`_encoder`), asked by the engine at each call."""
        return self._encoder

    @property
    def encoder(self) -> "SentenceEncoder":
        """The torch module (training, evaluation, export; needs torch). A model read without
        torch builds it on first use and from then on encodes with it, so that a change to its
        weights is what every result sees."""
        if self._module is None:
            require_torch(f"the torch module of {self.path or 'this model'}")
            from probsent.inference.torch_encoder import torch_module

            self._module, self._arrays = torch_module(self._arrays), None
        return self._module

    @property
    def _encoder(self) -> Any:
        """What encodes: the NumPy :class:`ArrayEncoder`, or the torch module behind a
        :class:`probsent.inference.torch_encoder.TorchEncoder`."""
        if self._arrays is not None:
            return self._arrays
        if self._torch_encoder is None or self._torch_encoder.module is not self._module:
            from probsent.inference.torch_encoder import TorchEncoder

            self._torch_encoder = TorchEncoder(self._module, MAX_BATCH_CELLS)
        return self._torch_encoder

    @property
    def probabilistic(self) -> bool:
        """True if sentences are Gaussians (WLO, LSTMGaussian), False if vectors."""
        return self._encoder.probabilistic

    @property
    def device(self) -> "torch.device | str":
        """Where the model's weights are, and where it encodes: a torch.device, or for a model
        read without torch "cpu" (torch.device("cpu") once torch is imported anyway)."""
        if self._arrays is None:
            return self._module.device
        return sys.modules["torch"].device("cpu") if sys.modules.get("torch") is not None else "cpu"

    def to(self, device: "str | torch.device") -> "SentenceModel":
        """Move the model to ``device``; "cpu" keeps a model read without torch as it is.

        Parameters
        ----------
        device : str or torch.device
            As in :func:`load`: "cpu", "cuda", "cuda:N" or "auto".

        Returns
        -------
        SentenceModel
            The model itself.
        """
        device = _available_device(device)
        if self._arrays is not None and isinstance(device, str) and device == "cpu":
            return self
        self.encoder.to(_torch_device(device))
        return self

    def __repr__(self) -> str:
        kind = "Gaussian" if self.probabilistic else "vector"
        engine = "numpy" if self._arrays is not None else f"torch, {self.device}"
        return (f"SentenceModel({self._encoder.label}, {kind} dim={self._encoder.dim}, vocabulary={len(self.vocab)}, "
                f"calibrated={self.calibration is not None}, {engine}, path={str(self.path) if self.path else None!r})")

    def get_sentence_embedding_dimension(self) -> int:
        """The size of a sentence's vector (of its Gaussian's mean and variance), as in
        sentence-transformers.

        Returns
        -------
        int
            The number of columns :meth:`encode` returns.

        Examples
        --------
        >>> model = load()
        >>> model.get_sentence_embedding_dimension()
        50
        """
        return int(self._encoder.dim)

    def _encode(self, sentences: Sequence[str], batch_size: int) -> ArrayEncoding:
        """The sentences' encodings, each of its first MAX_TOKENS tokens, saturated to float32's
        finite range (see :func:`saturated`); log|mean| in float64 where the model has it."""
        return self._engine.encode(sentences, batch_size)

    def _read(self, name: str, sentences: Sentences, batch_size: int = 256,
              show_progress_bar: bool | None = None) -> Any:
        """The read-out ``name`` of :data:`probsent.readouts.readout_table.READOUTS` for
        ``sentences``, in the caller's shape (see :meth:`_values`); a one-line error first where
        the model lacks what it needs."""
        readout, engine = READOUTS[name], self._engine
        readout.require(engine)
        return self._values(sentences, name, lambda items: readout.of(ScoredTexts(engine, items, batch_size)),
                            show_progress_bar)

    def __getattr__(self, name: str) -> Any:
        """A read-out of the table without a method written here (a plug-in's): ``model.NAME(
        sentences, batch_size=256, *, show_progress_bar=None)``."""
        readout = None if name.startswith("_") else READOUTS.get(name)
        if readout is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return _readout_method(readout).__get__(self)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(READOUTS))

    def _values(self, sentences: Sentences, name: str, compute, show_progress_bar: bool | None = None) -> Any:
        """``compute(list of str)`` -> per-sentence values, returned in the caller's shape (see
        :meth:`probsent.inputs.Texts.scores`): NaN at null items. Computed ENCODE_CHUNK
        sentences at a time, with a progress bar (``show_progress_bar``, as in :meth:`encode`)."""
        given = texts(sentences)
        parts = self._chunked(given.items, compute, name, show_progress_bar)
        return given.scores(np.concatenate(parts) if parts else compute([]), name)

    @staticmethod
    def _chunked(items: list[str], compute, name: str, show_progress_bar: bool | None) -> list:
        """``compute`` of ``items``, ENCODE_CHUNK at a time (results never depend on it), with a tqdm
        bar on standard error (default: only when it is a terminal); the parts in order."""
        if show_progress_bar is None:
            show_progress_bar = sys.stderr.isatty()
        bar = None
        if show_progress_bar:
            from tqdm import tqdm
            bar = tqdm(total=len(items), unit=" sentences", desc=name, file=sys.stderr)
        parts = []
        for start in range(0, len(items), ENCODE_CHUNK):
            parts.append(compute(items[start:start + ENCODE_CHUNK]))
            if bar is not None:
                bar.update(min(ENCODE_CHUNK, len(items) - start))
        if bar is not None:
            bar.close()
        return parts

    @_shared_parameters
    def encode(self, sentences: Sentences, batch_size: int = 256, log_variance: bool = False, *,
               show_progress_bar: bool | None = None, convert_to_numpy: bool = True,
               convert_to_tensor: bool = False, device: "str | torch.device | None" = None,
               normalize_embeddings: bool = False):
        """Vectors [n, dim] (deterministic models) or a tuple (mean [n, dim], variance [n, dim])
        (probabilistic models), as float32 NumPy arrays; a single string gives 1-D arrays.

        With ``log_variance``, the tuple holds the log-variance instead of the variance. Every
        value is finite: one beyond float32's range (the variance, or WLO's mean, of a long
        sentence of strongly scaling words) is saturated at +-3.4e38, and a variance below
        float32's smallest positive number (a long document's) at that number, 1.4e-45, never 0;
        the log-variance is exact for every length. A sentence counts only its first MAX_TOKENS (10,000) tokens.
        A null item (None, NaN) gets a zero vector (mean), and a NaN variance and log-variance.

        The keywords mean what they mean in sentence-transformers' ``encode``:
        ``show_progress_bar``: a tqdm bar on standard error (default: only when it is a
        terminal). ``convert_to_tensor``: one torch tensor (per output) instead of an array;
        ``convert_to_numpy=False``: a list of one tensor per sentence, and for a probabilistic
        model a (means, variances) pair of such lists (both need torch).
        ``device``: move the model there first (:meth:`to`). ``normalize_embeddings``: each
        mean scaled to length 1 (a zero mean stays zero); a Gaussian's variance scales with it
        (by 1 / |mean|^2), so it stays the same distribution in the new unit.

        Parameters
        ----------
        {sentences}
        {batch_size}
        log_variance : bool, default False
            Return the log-variance instead of the variance (probabilistic models).
        {show_progress_bar}
        convert_to_numpy, convert_to_tensor, device, normalize_embeddings
            As in sentence-transformers (above).

        Returns
        -------
        numpy.ndarray or tuple of numpy.ndarray
            float32 [n, dim] vectors, or (mean, variance) [n, dim] each; [dim] for a single
            string. With ``convert_to_tensor`` torch tensors of those shapes; with
            ``convert_to_numpy=False`` lists of [dim] tensors (a pair of lists for a
            probabilistic model).

        Examples
        --------
        >>> model = load()
        >>> mean, variance = model.encode(["A man plays a guitar.", "Someone is outside."])
        >>> mean.shape, variance.shape, str(mean.dtype)
        ((2, 50), (2, 50), 'float32')
        >>> bool((variance > 0).all())
        True
        """
        given = texts(sentences)
        if device is not None:
            self.to(device)
        enc = self._encode_chunks(given.items, batch_size, show_progress_bar)
        if normalize_embeddings:
            enc = unit_means(enc)
        mean = enc.mean
        spread = None
        if self.probabilistic:
            spread = enc.logvar if log_variance else saturated_variance(enc.logvar)
        if given.any_missing:
            mean[given.missing] = 0.0
            if spread is not None:
                spread[given.missing] = np.nan
        finish = tensor_converter(convert_to_numpy, convert_to_tensor, lambda: self.device)
        pick = (lambda t: finish(t[:1])[0]) if given.single else finish  # noqa: E731
        return pick(mean) if spread is None else (pick(mean), pick(spread))

    def _encode_chunks(self, items: list[str], batch_size: int, show_progress_bar: bool | None) -> ArrayEncoding:
        """:meth:`_encode` of ``items``, ENCODE_CHUNK sentences at a time, with a progress bar."""
        check_batch_size(batch_size)
        parts = self._chunked(items, lambda chunk: self._encode(chunk, batch_size), "encode", show_progress_bar)
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return self._encode([], batch_size)
        return ArrayEncoding.joined(parts)

    @_shared_parameters
    def entropy(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """Differential entropy of each sentence's Gaussian (probabilistic models only); NaN
        for a null item; a pandas Series gives a Series with its index.

        Parameters
        ----------
        {sentences}
        {batch_size}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float64, in nats; lower = more specific. A float for a single string.

        Examples
        --------
        >>> model = load()
        >>> entropy = model.entropy(["Einstein published relativity in 1905.", "Something happened.", None])
        >>> bool(entropy[0] < entropy[1]), bool(np.isnan(entropy[2]))
        (True, True)
        """
        if not self.probabilistic:
            raise ProbsentError(f"a {self._encoder.type_name} model is deterministic: it has no entropy")
        return self._values(sentences, "entropy", lambda items: self._engine.entropy(items, batch_size),
                            show_progress_bar)

    @_shared_parameters
    def specificity(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """Higher = more specific: minus the entropy (probabilistic) or the vector norm; NaN
        for a null item; a pandas Series gives a Series with its index.

        Parameters
        ----------
        {sentences}
        {batch_size}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float64 scores, unbounded; higher = more specific. A float for a single string.

        Examples
        --------
        >>> model = load()
        >>> scores = model.specificity(["Einstein published relativity in 1905.", "Something happened."])
        >>> bool(scores[0] > scores[1])
        True
        >>> import pandas as pd
        >>> model.specificity(pd.Series(["Something happened.", None], index=["a", "b"])).isna().tolist()
        [False, True]
        """
        return self._values(sentences, "specificity", lambda items: self._engine.specificity(items, batch_size),
                            show_progress_bar)

    @_shared_parameters
    def similarity(self, a: Sentences | Encoded, b: Sentences | Encoded, batch_size: int = 256,
                   measure: str | None = None, *, show_progress_bar: bool | None = None):
        """The (N, M) matrix of ``measure`` between every a_i and every b_j, as float32.

        Parameters
        ----------
        {a, b}
        {batch_size}
        {measure}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray or float
            float32 (N, M); a single string (or 1-D encoding) on a side drops that axis, two
            give a float. Higher = more alike. Every measure but the expected inner product is
            bounded and largest for a sentence with itself. Rows and columns of null or
            blank sentences are NaN.

        Examples
        --------
        >>> model = load()
        >>> round(model.similarity("A man plays a guitar.", "A man plays a guitar."), 4)
        1.0
        """
        measure = check_measure(measure, self.probabilistic)
        side_a = self._operand(a, batch_size, show_progress_bar)
        side_b = self._operand(b, batch_size, show_progress_bar)
        matrix = self._matrix(side_a, side_b, measure)
        if side_a.single:
            return float(matrix[0, 0]) if side_b.single else matrix[0]
        return matrix[:, 0] if side_b.single else matrix

    @staticmethod
    def _matrix(side_a: "_Operand", side_b: "_Operand", measure: str) -> np.ndarray:
        """The float32 (N, M) matrix of a checked ``measure`` between two operands, NaN in the
        rows and columns of missing items."""
        if measure == "expected_inner_product":
            matrix = np.empty((len(side_a.missing), len(side_b.missing)), dtype=np.float32)
            for rows, columns, block in expected_inner_product_blocks(side_a.encoding, side_b.encoding, MAX_SIMILARITY_CELLS):
                matrix[rows, columns] = saturated(block)
        else:
            matrix = measure_matrix(measure, side_a.wide(measure), side_b.wide(measure),
                                    MAX_SIMILARITY_CELLS).astype(np.float32)
        matrix[side_a.missing, :] = np.nan
        matrix[:, side_b.missing] = np.nan
        return matrix

    @_shared_parameters
    def semantic_search(self, queries: Sentences | Encoded, corpus: Sentences | Encoded, top_k: int = 10,
                        batch_size: int = 256, measure: str | None = None, *,
                        corpus_chunk_size: int = CORPUS_CHUNK, with_text: bool = False) -> list[list[dict[str, Any]]]:
        """The ``top_k`` corpus sentences most similar to each query, as sentence-transformers'
        ``util.semantic_search``, streaming over the corpus.

        Parameters
        ----------
        queries : str, iterable of str, or encodings
            The queries (a single str is one query), or what :meth:`encode` returned for them.
        corpus : iterable of str, or encodings
            Any iterable (a generator, a file's lines), read and encoded ``corpus_chunk_size``
            sentences at a time, or :meth:`encode`'s output for it. A null or blank sentence is
            never a hit.
        top_k : int, default 10
            Hits per query.
        {batch_size}
        {measure}
        corpus_chunk_size : int, default 8192
            Corpus sentences encoded and compared at a time (the hits never depend on it).
        with_text : bool, default False
            Each hit of a corpus of sentences also holds its ``"text"``.

        Returns
        -------
        list of list of dict
            Per query, ``{"corpus_id": int, "score": float}`` (and ``"text"``), highest score
            first (ties: the lower corpus id first); corpus ids count the corpus's items from 0,
            nulls included.
            The similarity is a bag of words' (docs/USE_WITH.md#what-similarity-cannot-do).

        Examples
        --------
        >>> model = load()
        >>> corpus = ["Stocks fell sharply on Monday.", "A man plays a guitar.", "A cat sleeps."]
        >>> model.semantic_search("A man is playing the guitar.", corpus, top_k=1)[0][0]["corpus_id"]
        1
        """
        measure = check_measure(measure, self.probabilistic)
        query_side = self._operand([queries] if isinstance(queries, str) else queries, batch_size, None)
        hits = TopHits(len(query_side.missing), top_k)
        for chunk in _corpus_chunks(corpus, max(1, int(corpus_chunk_size))):
            corpus_side = self._operand(chunk, batch_size, None)
            texts = corpus_side.texts.items if with_text and corpus_side.texts is not None else None
            hits.add(lambda rows: self._matrix(query_side.rows(rows), corpus_side, measure), texts,
                     count=len(corpus_side.missing))  # a few queries at a time: memory bounded (util.TopHits)
        return hits.hits()

    @_shared_parameters
    def similarity_pairwise(self, a: Sentences | Encoded, b: Sentences | Encoded, batch_size: int = 256,
                            measure: str | None = None, *, show_progress_bar: bool | None = None):
        """``measure`` of a_i with b_i for every pair i (the diagonal of :meth:`similarity`).

        ``a`` and ``b`` are sentences or encodings, as in :meth:`similarity`, with as many
        items on each side. NaN where either item is null or blank; a pandas Series gives a
        Series with its index. The expected inner product is computed in float64 from the
        log-variances and, for WLO, the means' logarithms (exact however far a mean is beyond
        float32's range), without training's floor on the variances, then saturated to
        float32's range.

        Parameters
        ----------
        {a, b}
        {batch_size}
        {measure}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float32, one value per pair; higher = more alike (bounded for every measure but
            the expected inner product); NaN where either item is null or blank.

        Examples
        --------
        >>> model = load()
        >>> pairs = model.similarity_pairwise(["A man plays a guitar.", "A cat sleeps.", None],
        ...                                   ["A man plays guitar.", "The stock market fell.", "Hello."])
        >>> bool(pairs[0] > pairs[1]), bool(np.isnan(pairs[2]))
        (True, True)
        """
        measure = check_measure(measure, self.probabilistic)
        side_a = self._operand(a, batch_size, show_progress_bar)
        side_b = self._operand(b, batch_size, show_progress_bar)
        if len(side_a.missing) != len(side_b.missing):
            raise InvalidValueError(f"similarity_pairwise needs as many items in a ({len(side_a.missing)}) "
                                    f"as in b ({len(side_b.missing)})")
        if measure == "expected_inner_product":
            values = saturated(paired_expected_inner_product(side_a.encoding, side_b.encoding))
        else:
            values = measure_pairs(measure, side_a.wide(measure), side_b.wide(measure)).astype(np.float32)
        shape = side_a.texts if side_a.texts is not None else Texts([""] * len(values), side_a.missing, side_a.single)
        shape.missing = side_a.missing | side_b.missing
        return shape.scores(values, "similarity")

    def _operand(self, given: Sentences | Encoded, batch_size: int, show_progress_bar: bool | None) -> "_Operand":
        """Sentences encoded, or encodings given by the caller, as one side of a similarity."""
        if _is_encoding_tuple(given) or (isinstance(given, np.ndarray) and given.dtype.kind in "fiu"):
            return _Operand.of_arrays(given, self.probabilistic)
        side = texts(given)
        return _Operand(self._encode_chunks(side.items, batch_size, show_progress_bar), side.missing, side.single,
                        side)

    @_shared_parameters
    def probability(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """P(specific): the chance that a news annotator would call the sentence specific, from the
        model's calibration (``probsent calibrate``): a logistic function of the score and the
        sentence's length fitted on the news labels (:mod:`probsent.readouts.calibration`). It
        follows what annotators reward, length among it; :meth:`percentile` is the
        length-relative reading. NaN for a null or blank item, and where the percentile is
        withheld (:meth:`note` says why); a pandas Series gives a Series with its index.

        Parameters
        ----------
        {sentences}
        {batch_size}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float64 between 0 and 1; higher = more likely specific. A one-line error if the
            model has no calibration.

        Examples
        --------
        >>> model = load()
        >>> p = model.probability(["The company said its net income rose 12 % to $ 45.6 million , or 89 cents "
        ...                        "a share , from $ 40.7 million a year earlier .", "It is good."])
        >>> bool(p[1] < 0.5 < p[0] < 1)
        True
        """
        return self._read("probability", sentences, batch_size, show_progress_bar)

    @_shared_parameters
    def news_probability(self, sentences: Sentences, batch_size: int = 256, *,
                         show_progress_bar: bool | None = None):
        """Deprecated: the same as :meth:`probability`, which it was folded into (a calibration
        has one probability, of the news label). Emits a DeprecationWarning.

        Parameters
        ----------
        {sentences}
        {batch_size}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            :meth:`probability`'s values.

        Examples
        --------
        >>> import warnings
        >>> model = load()
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     folded = model.news_probability("It is good.")
        >>> folded == model.probability("It is good.")
        True
        """
        import warnings

        warnings.warn("news_probability() is probability() now (one P(specific), of the news label)",
                      DeprecationWarning, stacklevel=2)
        return self.probability(sentences, batch_size, show_progress_bar=show_progress_bar)

    @_shared_parameters
    def note(self, sentences: Sentences):
        """Why each sentence's :meth:`percentile` and :meth:`probability` are withheld (NaN):
        "looks French" (or another language: the model and its reference sentences are English),
        "low coverage", "repetition", "too short" or "no tokens"; "" where they are given (the
        rules and their thresholds: :mod:`probsent.readouts.withheld`; the language identifier:
        :mod:`probsent.text.language_id`). A null item gives "no tokens".

        Parameters
        ----------
        {sentences}

        Returns
        -------
        list of str, str or pandas.Series
            One note per sentence ("" for a sentence that is read).

        Examples
        --------
        >>> model = load()
        >>> model.note(["Einstein published relativity in 1905.", "the " * 50, "lol ok", "Der Hund bellt laut."])
        ['', 'repetition', 'too short', 'looks German']
        """
        given = texts(sentences)
        found = self._engine.note(given.items)
        if given.single:
            return found[0]
        if given.index is not None:
            return sys.modules["pandas"].Series(found, index=given.index, name="note")
        return found

    @_shared_parameters
    def percentile(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """How specific each sentence is for its length, from 0 to 100: the share of the model's
        reference sentences with the same number of tokens that score lower (ties count half;
        see :mod:`probsent.readouts.percentiles`). Comparable across kinds of text, unlike the raw score.
        NaN for a null or blank item, and withheld (NaN) for text that is no sentence of the
        reference's kind: another language, mostly unknown words, mostly repetition, or fewer
        than three words (:meth:`note` says which; :mod:`probsent.readouts.withheld`). A pandas Series gives a Series
        with its index.

        Parameters
        ----------
        {sentences}
        {batch_size}
        {show_progress_bar}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float64 from 0 to 100; higher = more specific for its length. A one-line error if
            the model has no percentile table.

        Examples
        --------
        >>> model = load()
        >>> model.percentile("Einstein published relativity in 1905.") > 90
        True
        """
        return self._read("percentile", sentences, batch_size, show_progress_bar)

    @_shared_parameters
    def coverage(self, sentences: Sentences):
        """The share of each sentence's tokens (its first MAX_TOKENS) that the model or English
        knows, from 0 to 1: an entry of their own in the vocabulary, or, with the model's open
        vocabulary (``estimated_words.safetensors``), a number or an English word, whose term is
        estimated; a token known to neither (read by its form, or as ``<unk>`` without the open
        vocabulary) is not covered. A word without an entry whose accents or compatibility
        forms fold to one (café -> cafe) counts as covered and is read as that word. NaN for a
        null or blank item. :meth:`model_coverage` counts the model's own entries only; where it
        is below LOW_COVERAGE (0.5), the sentence is read mostly from estimates, its score says
        little about the text (technical terms, another language, emoji) and the note says "low
        coverage". English's word list holds emoji and common foreign words, so ``coverage``
        alone does not flag such text.

        Parameters
        ----------
        {sentences}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float64 from 0 to 1; a pandas Series gives a Series with its index.

        Examples
        --------
        >>> model = load()
        >>> model.coverage(["A man plays a guitar.", "xqzzy blorp", ""]).tolist()
        [1.0, 0.0, nan]
        """
        return self._read("coverage", sentences)

    @_shared_parameters
    def model_coverage(self, sentences: Sentences):
        """The share of each sentence's tokens (its first MAX_TOKENS) that have an entry of their
        own in the model's vocabulary, from 0 to 1 (what the withheld rules read); NaN for a null
        or blank item.

        Parameters
        ----------
        {sentences}

        Returns
        -------
        numpy.ndarray, float or pandas.Series
            float64 from 0 to 1; a pandas Series gives a Series with its index.

        Examples
        --------
        >>> model = load()
        >>> model.model_coverage(["A man plays a guitar.", "xqzzy blorp", ""]).tolist()
        [1.0, 0.0, nan]
        """
        engine = self._engine
        return self._values(sentences, "model_coverage", engine.model_coverage)

    def explain(self, sentence: "str | Iterable[str]") -> "Explanation | list[Explanation]":
        """Models with per-word entropy terms (WLO): each word's exact additive share of the
        sentence's entropy.

        The entropy is k/2 log(2 pi e) (that of the prior N(0, I)) plus, for every word, its
        term (WLO: sum_d log|A_w,d|); a negative share makes the sentence more specific. As
        everywhere, the sentence counts its first MAX_TOKENS tokens.

        Parameters
        ----------
        sentence : str or iterable of str
            One sentence, or many (a list, a pandas Series, ...: as :meth:`specificity`; a
            null item is explained as a blank sentence).

        Returns
        -------
        probsent.readouts.explanation.Explanation or list of them
            ``prior_entropy``, ``entropy``, and ``words``: one attribution per token (its
            ``entropy`` share, negative = more specific); ``to_frame()`` gives a DataFrame.
            The prior's entropy plus the shares is the sentence's :meth:`entropy` (NaN for a
            sentence without tokens, as everywhere). ``repr()`` is the table ``probsent explain``
            prints. Many sentences give a list, in order.

        Examples
        --------
        >>> model = load()
        >>> e = model.explain("Einstein published relativity in 1905.")
        >>> [w.token for w in e.words]
        ['einstein', 'published', 'relativity', 'in', '1905', '.']
        >>> bool(np.isclose(e.prior_entropy + sum(w.entropy for w in e.words), model.entropy(e.sentence)))
        True
        """
        engine = self._engine
        engine.term_table("explain")  # a model without per-word terms: its one-line error first
        if isinstance(sentence, str):
            return engine.explain(sentence)
        if sentence is None or isinstance(sentence, (bytes, int, float)):
            raise TypeError(f"explain needs a str or an iterable of str, not {type(sentence).__name__}")
        return [engine.explain(text) for text in texts(sentence).items]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model's files: config.json, model.safetensors, vocab.txt, and the calibration,
        percentile table and open vocabulary (estimated_words.safetensors) where the model has
        them (a new directory is written atomically).
        In an existing model directory (or an empty directory) only those six names are
        replaced, or removed where the model has no such part; everything else there (a README,
        a model card, a folder of results) is kept. Any other existing path is refused (nothing
        of it is touched). The weights keep their precision: float16 where every weight is a
        float16 number (the shipped model, as loaded), else float32. Needs no torch.

        Parameters
        ----------
        path : str or os.PathLike
            The model directory to write; :func:`load` reads it back.

        Returns
        -------
        None

        Examples
        --------
        >>> import tempfile, os
        >>> model = load()
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     model.save(os.path.join(tmp, "copy"))
        ...     load(os.path.join(tmp, "copy")).entropy("A cat.") == model.entropy("A cat.")
        True
        """
        from probsent.model_directory import save_model

        save_model(path, self._module if self._module is not None else self._arrays, self.vocab,
                   self.config.get("training"),
                   extras=[x for x in (self.calibration, self.percentiles, self.word_estimates) if x is not None])


def _readout_method(readout: Readout) -> Any:
    """The API method of a read-out declared in :mod:`probsent.readouts.readout_table` without
    one written in :class:`SentenceModel`, documented from its declaration."""
    def method(self: SentenceModel, sentences: Sentences, batch_size: int = 256, *,
               show_progress_bar: bool | None = None) -> Any:
        return self._read(readout.name, sentences, batch_size, show_progress_bar)

    method.__name__ = method.__qualname__ = readout.name
    method.__doc__ = (f"The read-out {readout.name!r} of each sentence: {readout.help} "
                      f"(:mod:`probsent.readouts.readout_table`). NaN for a null or blank item; a pandas "
                      f"Series gives a Series with its index.\n\nParameters\n----------\n{{sentences}}\n"
                      f"{{batch_size}}\n{{show_progress_bar}}\n\nReturns\n-------\nnumpy.ndarray, float or "
                      f"pandas.Series\n    {readout.type}, one value per sentence.\n")
    return _shared_parameters(method)


def _is_encoding_tuple(given: Any) -> bool:
    """Whether ``given`` is the (mean, variance) tuple encode returns (arrays or tensors), not a
    tuple of sentences."""
    return isinstance(given, tuple) and len(given) > 0 and all(hasattr(x, "shape") for x in given)


class _Operand:
    """One side of a similarity: its encoding (NumPy, float32 or wider), which rows are missing,
    whether it was a single item, and the sentences it came from (None for given encodings)."""

    def __init__(self, encoding: ArrayEncoding, missing: np.ndarray, single: bool, given: Texts | None = None) -> None:
        self.encoding, self.missing, self.single, self.texts = encoding, missing, single, given

    def wide(self, measure: str) -> tuple[np.ndarray, np.ndarray | None]:
        """(mean, log-variance) as float64 NumPy arrays, missing rows zero; a one-line error
        where ``measure`` needs variances this side was given without."""
        if self.encoding.logvar is None and measure != "cosine":
            raise InvalidValueError(f"measure {measure!r} needs the variances: pass the (mean, variance) "
                                    f"tuple that encode returned, not the means alone")
        mean = self.encoding.mean.astype(np.float64)
        mean[self.missing] = 0.0
        if self.encoding.logvar is None:
            return mean, None
        logvar = self.encoding.logvar.astype(np.float64)
        logvar[self.missing] = 0.0
        return mean, logvar

    def rows(self, index: slice) -> "_Operand":
        """The items at ``index`` (a slice), as a side of their own."""
        return _Operand(self.encoding.rows(index), self.missing[index], False)

    @classmethod
    def of_arrays(cls, given: Encoded, probabilistic: bool) -> "_Operand":
        """Encodings the caller computed with :meth:`SentenceModel.encode`: checked, one line
        for anything else."""
        if isinstance(given, tuple):
            if not probabilistic:
                raise TypeError("a (mean, variance) tuple is a probabilistic model's encoding; this model "
                                "gives vectors: pass the array encode returned")
            if len(given) != 2:
                raise TypeError(f"an encoding is an array or a (mean, variance) tuple, not a tuple of {len(given)}")
            mean, variance = (np.asarray(x, dtype=np.float64) for x in given)
        else:
            mean, variance = np.asarray(given, dtype=np.float64), None
        if mean.ndim not in (1, 2) or (variance is not None and variance.shape != mean.shape):
            raise TypeError(f"an encoding is [n, dim] or [dim] (with a variance of the same shape), not "
                            f"{mean.shape if variance is None or mean.ndim not in (1, 2) else variance.shape}")
        single = mean.ndim == 1
        mean = mean[None] if single else mean
        missing = ~np.isfinite(mean).all(axis=1)
        logvar = None
        if variance is not None:
            variance = variance[None] if single else variance
            missing |= np.isnan(variance).any(axis=1)
            if (variance[~missing] <= 0).any():
                raise ValueError("variances must be positive (pass the variance encode returns, "
                                 "not its log-variance)")
            with np.errstate(divide="ignore", invalid="ignore"):
                logvar = np.where(missing[:, None], 0.0, np.log(variance))
        return cls(ArrayEncoding(np.where(missing[:, None], 0.0, mean), logvar), missing, single)


def _torch_device(device: "str | torch.device") -> "torch.device":
    """:func:`probsent.torch_access.resolve_device` for the torch engine, with the one-line error of
    a missing torch first."""
    require_torch(f"device {device!r}")
    from probsent.torch_access import resolve_device

    return resolve_device(device)


def _corpus_chunks(corpus: Sentences | Encoded, size: int) -> Iterable[Any]:
    """The corpus ``size`` items at a time: rows of encodings, or lists of an iterable's items."""
    if isinstance(corpus, tuple) or (isinstance(corpus, np.ndarray) and corpus.dtype.kind in "fiu"):
        rows = len(corpus[0]) if isinstance(corpus, tuple) else len(corpus)
        for start in range(0, rows, size):
            yield (tuple(np.asarray(part)[start:start + size] for part in corpus) if isinstance(corpus, tuple)
                   else corpus[start:start + size])
        return
    if isinstance(corpus, str):
        corpus = [corpus]
    items = iter(corpus)
    while chunk := list(islice(items, size)):
        yield chunk


def _available_device(device: "str | torch.device") -> "str | torch.device":
    """``device``, or "cpu" where it names a GPU torch cannot reach from here: "auto" without
    torch or without CUDA, and "cuda" (or "cuda:N") without torch; a note (a warning) says so
    where a GPU was named and torch is missing. Torch is imported only for "auto" with torch
    installed."""
    if not isinstance(device, str) or device.split(":", 1)[0] not in ("auto", "cuda"):
        return device
    if not torch_installed():
        warnings.warn(f"probsent: device {device!r}: PyTorch is not installed, so the model runs on the CPU "
                      f"(NumPy); for a GPU: {INSTALL_TRAIN}", stacklevel=3)
        return "cpu"
    if device == "auto":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def load(path: str | os.PathLike[str] | None = None, device: "str | torch.device" = "cpu") -> SentenceModel:
    """Load a model directory, or the best model of a ``probsent train`` output directory.

    With no argument, or the name ``"default"``, the WLO model that ships inside the package
    (whatever the working directory holds: a directory named default is ``"./default"``) (see its MODEL_CARD.md). A missing model is a
    MissingFileError (a FileNotFoundError), a damaged one an InvalidValueError (a ValueError).

    ``device``: where the model encodes, with the torch engine's rules of ``probsent train
    --device``: "cpu" (the default), "cuda" or "cuda:N" (a one-line error where torch has no
    CUDA), "auto" (CUDA when available, else the CPU). Without torch (the core install),
    "auto", "cuda" and "cuda:N" run on the CPU with NumPy, with one warning saying so.
    Results come back as CPU arrays wherever it runs.

    Parameters
    ----------
    path : str or os.PathLike, optional
        A model directory, a ``probsent train`` output directory, or None / ``"default"`` for
        the shipped model.
    device : str or torch.device, default "cpu"
        Where the model encodes (above).

    Returns
    -------
    SentenceModel
        The model; on the CPU a WLO, Wordavg or Wordsum model needs NumPy only.

    Examples
    --------
    >>> model = load()
    >>> model.probabilistic
    True
    >>> model.specificity("Einstein published relativity in 1905.") > model.specificity("Something happened.")
    True
    """
    path = resolve_model_dir(path)
    device = _available_device(device)
    model, model._source_files = read_consistently(path, lambda: _read_model(path, device))
    return model


def scoring_engine(model: SentenceModel) -> ScoringEngine:
    """The engine ``model`` scores through (:mod:`probsent.readouts.scoring_engine`): the one
    the command line, corpus scoring, Spark and spaCy score with too."""
    return model._engine


def _read_model(path: Path, device: "str | torch.device") -> SentenceModel:
    """:func:`load` of the model directory ``path``, read once: WLO, Wordavg and Wordsum on the
    CPU as NumPy tables (no torch), any other model or device as a torch module."""
    target = None if isinstance(device, str) and device == "cpu" else _torch_device(device)  # checked first
    config, vocab, weights = read_model(path)
    if target is None and config["model"]["type"] in NUMPY_TYPES:
        encoder: Any = ArrayEncoder(config["model"], weights)
    else:
        require_torch(f"{path} (a model other than a WLO, Wordavg or Wordsum, or a device other than cpu)")
        from probsent.models import build_model

        try:
            encoder = build_model(config["model"], weights).to(target or "cpu")
        except (TypeError, RuntimeError) as exc:  # a plug-in's settings that no declared range checks
            raise InvalidValueError(f"{path / CONFIG_FILE}: invalid model settings ({str(exc).splitlines()[0]})") from None
    estimates = None
    if config["model"]["type"] == "wlo":  # the open vocabulary: WLO's per-word scales and translations
        estimates = WordEstimates.load(path, len(vocab), int(config["model"]["dim"]))
    return SentenceModel(encoder, vocab, config, Calibration.load(path), path, PercentileTable.load(path), estimates)

