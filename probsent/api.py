"""The Python API: ``model = probsent.load(path)``, then encode / entropy / specificity / similarity."""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np
import torch

from probsent.batching import encode_by_length
from probsent.calibration import Calibration
from probsent.data.vocab import Vocabulary
from probsent.errors import InvalidValueError, MissingFileError, ProbsentError
from probsent.gaussian import entropy as gaussian_entropy
from probsent.io import set_aside
from probsent.model_files import CONFIG, read_model_dir, save_model
from probsent.models import Encoding, SentenceEncoder, with_word_entropy_terms
from probsent.similarity import paired_similarity
from probsent.token_cap import first_tokens
from probsent.training.config import check_batch_size

Sentences = Union[str, Sequence[str]]

# A sentence is encoded (and explained) as its first MAX_TOKENS tokens: the encoding's memory
# per sentence stays bounded (about 3 KB a token) whatever the input.
MAX_TOKENS = 10_000
# Sentences are encoded in batches of at most this many padded token positions (or one
# sentence), so memory per call is bounded too, whatever the batch size asked for.
MAX_BATCH_CELLS = 32_768
FLOAT32_MAX = float(np.finfo(np.float32).max)


def saturated(values: torch.Tensor) -> torch.Tensor:
    """``values`` as float32, every value beyond float32's range saturated at +-FLOAT32_MAX.

    A non-number is 0 * an overflowed factor (WLO's mean of a sentence whose shifts sum to
    exactly zero, scaled by an overflowing product), whose value is 0.
    """
    return values.nan_to_num(nan=0.0, posinf=FLOAT32_MAX, neginf=-FLOAT32_MAX).clamp(
        -FLOAT32_MAX, FLOAT32_MAX).float()


@dataclass
class Attribution:
    """One token's share of a sentence's entropy (models with per-word entropy terms: WLO)."""

    token: str
    word: str | None  # the vocabulary entry, None for an unknown word (<unk>)
    entropy: float  # WLO: sum_d log|A_w,d|; negative = makes the sentence more specific
    shift_norm: float  # how far the word moves the mean (WLO: ||B_w||)


@dataclass
class Explanation:
    """A sentence's entropy as the prior's entropy plus one exact share per token."""

    sentence: str
    prior_entropy: float
    words: list[Attribution]

    @property
    def entropy(self) -> float:
        """The sentence's entropy: ``prior_entropy`` plus every word's share."""
        return self.prior_entropy + sum(w.entropy for w in self.words)


class SentenceModel:
    """A trained encoder with its vocabulary and tokenizer.

    Results never depend on the batch size or on the order of the sentences: sentences are
    encoded independently (padding never changes a result) and returned in input order.
    """

    def __init__(self, encoder: SentenceEncoder, vocab: Vocabulary,
                 config: dict[str, Any] | None = None, calibration: Calibration | None = None,
                 path: Path | None = None) -> None:
        self.encoder = encoder.eval()
        self.vocab = vocab
        self.config = config or {}
        self.calibration = calibration
        self.path = path  # the directory it was loaded from, if any

    @property
    def probabilistic(self) -> bool:
        """True if sentences are Gaussians (WLO, LSTMGaussian), False if vectors."""
        return self.encoder.probabilistic

    @property
    def is_probabilistic(self) -> bool:  # the name the evaluation code expects
        return self.probabilistic

    def _encode(self, sentences: Sequence[str], batch_size: int) -> Encoding:
        """The sentences' encodings, each of its first MAX_TOKENS tokens, saturated to float32's
        finite range (see :func:`saturated`)."""
        batch_size = check_batch_size(batch_size)
        ids = self._token_ids(sentences)
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.fromiter((i for sentence in ids for i in sentence), dtype=np.int64, count=int(offsets[-1]))
        with torch.no_grad():
            enc = encode_by_length(self.encoder, flat, offsets, np.arange(len(ids)), batch_size,
                                   max_cells=MAX_BATCH_CELLS)
        return Encoding(saturated(enc.mean), None if enc.logvar is None else saturated(enc.logvar),
                        log_abs_mean=enc.log_abs_mean)

    def _token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Each sentence's first MAX_TOKENS tokens as vocabulary ids (0: unknown)."""
        index = self.vocab.index
        return [[index.get(token, 0) for token in first_tokens(s, MAX_TOKENS)] for s in sentences]

    def _entropy_by_word_terms(self, sentences: Sequence[str]) -> np.ndarray:
        """The entropy of a model with per-word entropy terms from its closed form, in float64:
        the prior's, k/2 log(2 pi e), plus every word's term (WLO: sum_d log|A_w,d|). Exact, and
        the same bits however the sentences are batched (a batched float32 pass can differ in
        the last bit with the batch's shape)."""
        with torch.no_grad():
            terms = with_word_entropy_terms(self.encoder, "the closed-form entropy").word_entropy_terms(
                dtype=torch.float64).numpy()
        prior = self._prior_entropy()
        return np.array([prior + terms[ids].sum() for ids in self._token_ids(sentences)])

    def _prior_entropy(self) -> float:
        """The entropy of N(0, I) in the model's dimension: a sentence's before any word (WLO)."""
        return float(gaussian_entropy(torch.zeros(self.encoder.dim, dtype=torch.float64)))

    @staticmethod
    def _checked(sentences: Sentences) -> tuple[list[str], bool]:
        """(the sentences as a list, whether a single string was given); TypeError for anything
        but a str or an ordered collection of str."""
        if isinstance(sentences, str):
            return [sentences], True
        if (isinstance(sentences, (bytes, bytearray, memoryview, Mapping, Set))
                or not isinstance(sentences, Iterable)):
            raise TypeError(f"sentences must be a str or a list of str, not {type(sentences).__name__}"
                            + (" (decode bytes to str first)" if isinstance(sentences, (bytes, bytearray)) else ""))
        items = list(sentences)
        for i, s in enumerate(items):
            if not isinstance(s, str):
                raise TypeError(f"sentence {i} is a {type(s).__name__}, not a str")
        return items, False

    def encode(self, sentences: Sentences, batch_size: int = 256, log_variance: bool = False):
        """Vectors [n, dim] (deterministic models) or a tuple (mean [n, dim], variance [n, dim])
        (probabilistic models), as float32 NumPy arrays; a single string gives 1-D arrays.

        With ``log_variance``, the tuple holds the log-variance instead of the variance. Every
        value is finite: one beyond float32's range (the variance, or WLO's mean, of a long
        sentence of strongly scaling words) is saturated at +-3.4e38; the log-variance is
        exact for every length. A sentence counts only its first MAX_TOKENS (10,000) tokens.
        """
        items, single = self._checked(sentences)
        enc = self._encode(items, batch_size)
        pick = (lambda a: a[0]) if single else (lambda a: a)
        if not self.probabilistic:
            return pick(enc.mean.numpy())
        spread = enc.logvar if log_variance else saturated(enc.logvar.double().exp())
        return pick(enc.mean.numpy()), pick(spread.numpy())

    def entropy(self, sentences: Sentences, batch_size: int = 256):
        """Differential entropy of each sentence's Gaussian (probabilistic models only)."""
        if not self.probabilistic:
            raise ProbsentError(f"a {self.encoder.type_name} model is deterministic: it has no entropy")
        items, single = self._checked(sentences)
        if self.encoder.has_word_entropy_terms:
            check_batch_size(batch_size)
            values = self._entropy_by_word_terms(items)
        else:
            values = saturated(gaussian_entropy(self._encode(items, batch_size).logvar.double())).numpy()
        return float(values[0]) if single else values

    def specificity(self, sentences: Sentences, batch_size: int = 256):
        """Higher = more specific: minus the entropy (probabilistic) or the vector norm."""
        if self.probabilistic:
            value = self.entropy(sentences, batch_size)
            return -value
        items, single = self._checked(sentences)
        norms = saturated(self._encode(items, batch_size).mean.double().norm(dim=-1)).numpy()
        return float(norms[0]) if single else norms

    def similarity(self, a: Sentences, b: Sentences, batch_size: int = 256):
        """d(a_i, b_i) per pair: the training similarity (cosine, or the log expected inner
        product of the Gaussians for probabilistic models).

        Computed in float64 from the log-variances and, for WLO, the means' logarithms (exact
        however far a mean is beyond float32's range), without training's floor on the
        variances, then saturated to float32's range.
        """
        items_a, single = self._checked(a)
        items_b, _ = self._checked(b)
        if len(items_a) != len(items_b):
            raise InvalidValueError(f"similarity needs as many sentences in a ({len(items_a)}) "
                                    f"as in b ({len(items_b)})")
        wide = lambda e: Encoding(e.mean.double(), None if e.logvar is None else e.logvar.double(),  # noqa: E731
                                  log_abs_mean=e.log_abs_mean)
        values = saturated(paired_similarity(wide(self._encode(items_a, batch_size)),
                                             wide(self._encode(items_b, batch_size)), exact=True)).numpy()
        return float(values[0]) if single else values

    def require_calibration(self) -> Calibration:
        """The model's calibration; a one-line error saying how to make one if it has none."""
        if self.calibration is None:
            raise ProbsentError(f"{self.path or 'this model'} has no calibration.json; "
                                f"run: probsent calibrate --model {self.path or 'DIR'}")
        return self.calibration

    def probability(self, sentences: Sentences, batch_size: int = 256):
        """P(specific) from the model's calibration (see ``probsent calibrate``)."""
        items, single = self._checked(sentences)
        values = self.probability_of_scores(np.atleast_1d(self.specificity(items, batch_size)), items)
        return float(values[0]) if single else values

    def probability_of_scores(self, scores: np.ndarray, sentences: Sequence[str | None]) -> np.ndarray:
        """P(specific) of sentences already scored by :meth:`specificity` (the calibration also
        reads each sentence's token count, up to MAX_TOKENS; a missing sentence counts 0)."""
        return self.require_calibration().probability(scores, token_counts(sentences))

    def explain(self, sentence: str) -> "Explanation":
        """Models with per-word entropy terms (WLO): each word's exact additive share of the
        sentence's entropy.

        The entropy is k/2 log(2 pi e) (that of the prior N(0, I)) plus, for every word, its
        term (WLO: sum_d log|A_w,d|); a negative share makes the sentence more specific. As
        everywhere, the sentence counts its first MAX_TOKENS tokens.
        """
        if not isinstance(sentence, str):
            raise TypeError(f"explain needs a str, not {type(sentence).__name__}")
        terms = with_word_entropy_terms(self.encoder, "explain")
        tokens = first_tokens(sentence, MAX_TOKENS)
        ids = torch.from_numpy(self.vocab.ids(tokens))
        with torch.no_grad():
            shares = terms.word_entropy_terms(ids, dtype=torch.float64).numpy()
            shift_norms = terms.word_shifts()[ids].norm(dim=-1).double().numpy()
        prior = self._prior_entropy()
        words = [Attribution(t, self.vocab.words[i] if i else None, float(h), float(n))
                 for t, i, h, n in zip(tokens, ids.tolist(), shares, shift_norms)]
        return Explanation(sentence, prior, words)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model directory atomically (config.json, model.safetensors, vocab.txt)."""
        save_model(path, self.encoder, self.vocab, self.config.get("training"))


def token_counts(sentences: Sequence[str | None]) -> np.ndarray:
    """Each sentence's token count as the model reads it (at most MAX_TOKENS; 0 for None)."""
    return np.array([len(first_tokens(s, MAX_TOKENS)) if isinstance(s, str) else 0 for s in sentences],
                    dtype=np.float64)


DEFAULT_MODEL = Path(__file__).resolve().parent / "pretrained" / "wlo"


def load(path: str | os.PathLike[str] | None = None) -> SentenceModel:
    """Load a model directory, or the best model of a ``probsent train`` output directory.

    With no argument, or ``"default"`` (unless a directory of that name exists), the WLO model
    that ships inside the package (see its MODEL_CARD.md). A missing model is a
    MissingFileError (a FileNotFoundError), a damaged one an InvalidValueError (a ValueError).
    """
    if path is None or (str(path) == "default" and not Path(path).exists()):
        if not (DEFAULT_MODEL / CONFIG).is_file():
            raise MissingFileError(f"{DEFAULT_MODEL}: this installation has no shipped model; "
                                   f"give a model directory")
        path = DEFAULT_MODEL
    path = Path(path)
    if not (path / CONFIG).exists():  # a training run: its best model, or the copy set aside
        path = next((p for p in (path / "best", set_aside(path / "best")) if (p / CONFIG).exists()), path)
    encoder, vocab, config = read_model_dir(path)
    return SentenceModel(encoder, vocab, config, Calibration.load(path), path)
