"""The Python API: ``model = probsent.load(path)``, then encode / entropy / specificity / similarity."""
from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence, Union

import numpy as np

from probsent.calibration import Calibration
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError, ProbsentError
from probsent.explanation import Attribution, Explanation
from probsent.inference.array_encoder import ArrayEncoder, read_array_model
from probsent.inference.arrays import (FLOAT32_MAX, ArrayEncoding as Encoding, gaussian_entropy, saturated,  # noqa: F401
                                       unit_means, vector_norms)
from probsent.inference.similarity import paired_similarity, similarity_blocks
from probsent.inference.torch_required import require_torch, tensor_converter
from probsent.inputs import texts
from probsent.model_paths import DEFAULT_MODEL, resolve_model_dir
from probsent.text.token_ids import TokenIds
from probsent.arguments import check_batch_size
from probsent.word_terms import MAX_TOKENS, WordTermTable, prior_entropy

if TYPE_CHECKING:
    import torch

    from probsent.models import SentenceEncoder

__all__ = ["Attribution", "DEFAULT_MODEL", "Explanation", "MAX_TOKENS", "SentenceModel", "load"]

# a str, or any iterable of str and nulls: list, generator, NumPy array, pandas Series, datasets column
Sentences = Union[str, Iterable[Any]]

# A sentence is encoded (and explained) as its first MAX_TOKENS tokens (probsent.word_terms):
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
DEVICES = ("auto", "cpu", "cuda")  # as ``probsent train --device``; also "cuda:N"


class SentenceModel:
    """A trained encoder with its vocabulary and tokenizer.

    Results never depend on the batch size or on the order of the sentences: sentences are
    encoded independently (padding never changes a result) and returned in input order.
    """

    def __init__(self, encoder: "SentenceEncoder | ArrayEncoder", vocab: Vocabulary,
                 config: dict[str, Any] | None = None, calibration: Calibration | None = None,
                 path: Path | None = None) -> None:
        # encoder: an ArrayEncoder (NumPy: WLO, Wordavg, Wordsum; no torch) or a torch module
        self._arrays = encoder if isinstance(encoder, ArrayEncoder) else None
        self._module = None if self._arrays is not None else encoder.eval()
        self._torch_encoder: Any = None
        self.vocab = vocab
        self.config = config or {}
        self.calibration = calibration
        self.path = path  # the directory it was loaded from, if any
        self._token_ids = TokenIds(vocab.index, MAX_TOKENS)
        self._terms: tuple[tuple, WordTermTable] | None = None  # (weights' versions, table)

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
        """Move the model to ``device`` (see :func:`load`); returns the model itself. "cpu" keeps a
        model read without torch as it is."""
        if self._arrays is not None and isinstance(device, str) and device == "cpu":
            return self
        self.encoder.to(resolve_device(device))
        return self

    def __repr__(self) -> str:
        kind = "Gaussian" if self.probabilistic else "vector"
        engine = "numpy" if self._arrays is not None else f"torch, {self.device}"
        return (f"SentenceModel({self._encoder.label}, {kind} dim={self._encoder.dim}, vocabulary={len(self.vocab)}, "
                f"calibrated={self.calibration is not None}, {engine}, path={str(self.path) if self.path else None!r})")

    def get_sentence_embedding_dimension(self) -> int:
        """The size of a sentence's vector (of its Gaussian's mean and variance), as in
        sentence-transformers."""
        return int(self._encoder.dim)

    def _encode(self, sentences: Sequence[str], batch_size: int) -> Encoding:
        """The sentences' encodings, each of its first MAX_TOKENS tokens, saturated to float32's
        finite range (see :func:`saturated`); log|mean| in float64 where the model has it."""
        batch_size = check_batch_size(batch_size)
        flat, offsets = self._token_ids(sentences)
        return self._encoder.encode(flat, offsets, batch_size).saturated()

    def _term_table(self, purpose: str) -> WordTermTable:
        """The model's per-word entropy terms as a :class:`WordTermTable` (float64: the prior's
        entropy and WLO's sum_d log|A_w,d| per word), rebuilt when the weights change.

        Scoring with it is exact: the prior plus the sentence's terms, summed in NumPy's order,
        the same bits however the sentences are batched (a batched float32 pass can differ in
        the last bit with the batch's shape)."""
        encoder = self._encoder
        if not encoder.has_word_entropy_terms:
            raise ProbsentError(f"{purpose} needs a WLO model, not {encoder.type_name}")
        version = (id(encoder), encoder.weights_version())
        if self._terms is None or self._terms[0] != version:
            table = WordTermTable(self.vocab, encoder.word_entropy_terms(),
                                  prior_entropy(encoder.dim, encoder.start_variance), encoder.word_shift_norms(),
                                  self.calibration, self.path, self._token_ids)
            self._terms = (version, table)
        return self._terms[1]

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

    def encode(self, sentences: Sentences, batch_size: int = 256, log_variance: bool = False, *,
               show_progress_bar: bool | None = None, convert_to_numpy: bool = True,
               convert_to_tensor: bool = False, device: "str | torch.device | None" = None,
               normalize_embeddings: bool = False):
        """Vectors [n, dim] (deterministic models) or a tuple (mean [n, dim], variance [n, dim])
        (probabilistic models), as float32 NumPy arrays; a single string gives 1-D arrays.

        With ``log_variance``, the tuple holds the log-variance instead of the variance. Every
        value is finite: one beyond float32's range (the variance, or WLO's mean, of a long
        sentence of strongly scaling words) is saturated at +-3.4e38; the log-variance is
        exact for every length. A sentence counts only its first MAX_TOKENS (10,000) tokens.
        A null item (None, NaN) gets a zero vector (mean), and a NaN variance and log-variance.

        The keywords mean what they mean in sentence-transformers' ``encode``:
        ``show_progress_bar``: a tqdm bar on standard error (default: only when it is a
        terminal). ``convert_to_tensor``: one torch tensor (per output) instead of an array;
        ``convert_to_numpy=False``: a list of one tensor per sentence (both need torch).
        ``device``: move the model there first (:meth:`to`). ``normalize_embeddings``: each
        mean scaled to length 1 (a zero mean stays zero); a Gaussian's variance scales with it
        (by 1 / |mean|^2), so it stays the same distribution in the new unit.
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
            with np.errstate(over="ignore"):  # saturated
                spread = enc.logvar if log_variance else saturated(np.exp(enc.logvar.astype(np.float64)))
        if given.any_missing:
            mean[given.missing] = 0.0
            if spread is not None:
                spread[given.missing] = np.nan
        finish = tensor_converter(convert_to_numpy, convert_to_tensor, lambda: self.device)
        pick = (lambda t: finish(t[:1])[0]) if given.single else finish  # noqa: E731
        return pick(mean) if spread is None else (pick(mean), pick(spread))

    def _encode_chunks(self, items: list[str], batch_size: int, show_progress_bar: bool | None) -> Encoding:
        """:meth:`_encode` of ``items``, ENCODE_CHUNK sentences at a time, with a progress bar."""
        check_batch_size(batch_size)
        parts = self._chunked(items, lambda chunk: self._encode(chunk, batch_size), "encode", show_progress_bar)
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return self._encode([], batch_size)
        return Encoding.joined(parts)

    def entropy(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """Differential entropy of each sentence's Gaussian (probabilistic models only); NaN
        for a null item; a pandas Series gives a Series with its index."""
        if not self.probabilistic:
            raise ProbsentError(f"a {self._encoder.type_name} model is deterministic: it has no entropy")
        return self._values(sentences, "entropy", lambda items: self._entropy_values(items, batch_size),
                            show_progress_bar)

    def _entropy_values(self, items: list[str], batch_size: int) -> np.ndarray:
        """The entropies of ``items`` (a list of str) as a float64 array."""
        if self._encoder.has_word_entropy_terms:
            check_batch_size(batch_size)
            return self._term_table("the closed-form entropy").entropy(items)
        return saturated(gaussian_entropy(self._encode(items, batch_size).logvar))

    def specificity(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """Higher = more specific: minus the entropy (probabilistic) or the vector norm; NaN
        for a null item; a pandas Series gives a Series with its index."""
        return self._values(sentences, "specificity", lambda items: self._specificity_values(items, batch_size),
                            show_progress_bar)

    def _specificity_values(self, items: list[str], batch_size: int) -> np.ndarray:
        """The specificities of ``items`` (a list of str)."""
        if self.probabilistic:
            return -self._entropy_values(items, batch_size)
        return saturated(vector_norms(self._encode(items, batch_size).mean))

    def similarity(self, a: Sentences, b: Sentences, batch_size: int = 256, *,
                   show_progress_bar: bool | None = None):
        """The (N, M) matrix d(a_i, b_j) of every pair, as float32: the model's own similarity
        (the log expected inner product log N(0; mu_i - mu_j, S_i + S_j) of the Gaussians for
        probabilistic models, the cosine otherwise). A single string on a side drops that
        axis (two strings give a float). Rows and columns of null items are NaN.

        Computed in blocks (MAX_SIMILARITY_CELLS), so memory beyond the N x M result stays
        bounded; each value is exact as in :meth:`similarity_pairwise`.

        Until the next release, two collections of the same length also raise a
        DeprecationWarning: ``similarity`` used to pair them row by row, which is now
        :meth:`similarity_pairwise` (the matrix's diagonal).
        """
        given_a, given_b = texts(a), texts(b)
        if not given_a.single and not given_b.single and len(given_a) == len(given_b):
            warnings.warn(f"similarity(a, b) now returns the ({len(given_a)}, {len(given_b)}) matrix of "
                          f"every pair; similarity_pairwise(a, b) gives the former pair-by-pair values",
                          DeprecationWarning, stacklevel=2)
        encoded_a = self._encode_chunks(given_a.items, batch_size, show_progress_bar)
        encoded_b = self._encode_chunks(given_b.items, batch_size, show_progress_bar)
        matrix = np.empty((len(given_a), len(given_b)), dtype=np.float32)
        for rows, columns, block in similarity_blocks(encoded_a, encoded_b, MAX_SIMILARITY_CELLS):
            matrix[rows, columns] = saturated(block)
        matrix[given_a.missing, :] = np.nan
        matrix[:, given_b.missing] = np.nan
        if given_a.single:
            return float(matrix[0, 0]) if given_b.single else matrix[0]
        return matrix[:, 0] if given_b.single else matrix

    def similarity_pairwise(self, a: Sentences, b: Sentences, batch_size: int = 256, *,
                            show_progress_bar: bool | None = None):
        """d(a_i, b_i) per pair: the training similarity (cosine, or the log expected inner
        product of the Gaussians for probabilistic models); NaN where either item is null.

        Computed in float64 from the log-variances and, for WLO, the means' logarithms (exact
        however far a mean is beyond float32's range), without training's floor on the
        variances, then saturated to float32's range.
        """
        given_a, given_b = texts(a), texts(b)
        if len(given_a) != len(given_b):
            raise InvalidValueError(f"similarity_pairwise needs as many sentences in a ({len(given_a)}) "
                                    f"as in b ({len(given_b)})")
        values = saturated(paired_similarity(self._encode_chunks(given_a.items, batch_size, show_progress_bar),
                                             self._encode_chunks(given_b.items, batch_size, show_progress_bar)))
        given_a.missing |= given_b.missing
        return given_a.scores(values, "similarity")

    def require_calibration(self) -> Calibration:
        """The model's calibration; a one-line error saying how to make one if it has none."""
        if self.calibration is None:
            raise ProbsentError(f"{self.path or 'this model'} has no calibration.json; "
                                f"run: probsent calibrate --model {self.path or 'DIR'}")
        return self.calibration

    def probability(self, sentences: Sentences, batch_size: int = 256, *, show_progress_bar: bool | None = None):
        """P(specific) from the model's calibration (see ``probsent calibrate``); NaN for a
        null item; a pandas Series gives a Series with its index."""
        self.require_calibration()
        return self._values(sentences, "probability", lambda items: self.probability_of_scores(
            self._specificity_values(items, batch_size), items), show_progress_bar)

    def probability_of_scores(self, scores: np.ndarray, sentences: Sequence[str | None]) -> np.ndarray:
        """P(specific) of sentences already scored by :meth:`specificity` (the calibration also
        reads each sentence's token count, up to MAX_TOKENS; a missing sentence counts 0)."""
        calibration = self.require_calibration()
        return calibration.probability(scores, self.token_counts(sentences) if calibration.uses_length else None)

    def token_counts(self, sentences: Sequence[str | None]) -> np.ndarray:
        """Each sentence's token count as the model reads it (at most MAX_TOKENS; 0 for None)."""
        return self._token_ids.counts(sentences)

    def explain(self, sentence: str) -> "Explanation":
        """Models with per-word entropy terms (WLO): each word's exact additive share of the
        sentence's entropy.

        The entropy is k/2 log(2 pi e) (that of the prior N(0, I)) plus, for every word, its
        term (WLO: sum_d log|A_w,d|); a negative share makes the sentence more specific. As
        everywhere, the sentence counts its first MAX_TOKENS tokens.
        """
        if not isinstance(sentence, str):
            raise TypeError(f"explain needs a str, not {type(sentence).__name__}")
        return self._term_table("explain").explain(sentence)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model directory atomically (config.json, model.safetensors, vocab.txt)."""
        require_torch("SentenceModel.save")
        from probsent.model_files import save_model
        from probsent.inference.torch_encoder import torch_module

        module = self._module if self._module is not None else torch_module(self._arrays)  # the model stays NumPy
        save_model(path, module, self.vocab, self.config.get("training"))


def resolve_device(device: "str | torch.device") -> "torch.device":
    """``device`` with the rules of ``probsent train --device`` for the torch engine: "cpu",
    "cuda" (or "cuda:N"), or "auto" (CUDA when available); a torch.device as is. A one-line
    error where CUDA is asked for and torch has none, or for any other name."""
    require_torch(f"device {device!r}")
    import torch

    if isinstance(device, torch.device):
        return device
    name = device.split(":", 1)[0] if isinstance(device, str) else None
    if name not in DEVICES or (":" in device and (name != "cuda" or not device.split(":", 1)[1].isdigit())):
        raise InvalidValueError(f"device must be one of {', '.join(DEVICES)} or cuda:N, not {device!r}")
    if name == "cpu":
        return torch.device("cpu")
    from probsent.training.trainer import resolve_device as torch_engine_device  # heavy: only off the CPU

    resolved = torch_engine_device(name, "torch")
    return torch.device(device) if resolved.type == "cuda" and ":" in device else resolved


def load(path: str | os.PathLike[str] | None = None, device: "str | torch.device" = "cpu") -> SentenceModel:
    """Load a model directory, or the best model of a ``probsent train`` output directory.

    With no argument, or ``"default"`` (unless a directory of that name exists), the WLO model
    that ships inside the package (see its MODEL_CARD.md). A missing model is a
    MissingFileError (a FileNotFoundError), a damaged one an InvalidValueError (a ValueError).

    ``device``: where the model encodes, with the torch engine's rules of ``probsent train
    --device``: "cpu" (the default), "cuda" or "cuda:N" (a one-line error where torch has no
    CUDA), "auto" (CUDA when available). Results come back as CPU arrays wherever it runs.
    """
    path = resolve_model_dir(path)
    light = read_array_model(path) if isinstance(device, str) and device == "cpu" else None
    if light is not None:  # WLO, Wordavg, Wordsum on the CPU: NumPy, no torch
        return SentenceModel(light[0], light[1], light[2], Calibration.load(path), path)
    require_torch(f"{path} (a model other than a sound WLO, Wordavg or Wordsum directory, or a device other than cpu)")
    target = resolve_device(device)  # checked before reading the model
    from probsent.model_files import read_model_dir

    encoder, vocab, config = read_model_dir(path)
    return SentenceModel(encoder.to(target), vocab, config, Calibration.load(path), path)

