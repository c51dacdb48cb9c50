"""A model's one scoring engine: scores, their readings and explanations, for every caller.

A :class:`probsent.api.SentenceModel` scores through its :class:`ScoringEngine`, and so do
``probsent specificity`` and ``explain``, the worker processes, Spark's executors and the spaCy
component (``probsent.api.scoring_engine(model)`` gives a model's engine; no other object
scores). The engine holds what scoring reads beside the weights: the tokenizer
(:class:`probsent.text.token_ids.TokenIds`), the calibration, the percentile table, the model's
directory and its files' identity. A model with per-word entropy terms (WLO) scores through its
term table (:class:`probsent.readouts.word_terms.WordTermTable`, rebuilt when the weights
change), a whole chunk of texts at once; any other model through its encoder.

A worker process gets a frozen copy (:meth:`ScoringEngine.__getstate__`): a WLO model's
engine travels as its term table, calibration and percentile table (the data a worker has
always received), any other as the model it belongs to. Spark's executors never receive one:
they read the model's files, checked by SHA-256, and build their own.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence, Union

import numpy as np

from probsent.inputs import check_batch_size
from probsent.errors import ProbsentError
from probsent.data.vocab import Vocabulary, WordEstimates, open_index
from probsent.inference.arrays import ArrayEncoding, gaussian_entropy, saturated, vector_norms
from probsent.readouts.calibration import FILE as CALIBRATION, Calibration, made_by_calibrate
from probsent.readouts.explanation import Explanation
from probsent.readouts.percentiles import FILE as PERCENTILES, PercentileTable
from probsent.readouts.withheld import notes, percentiles_read, withheld
from probsent.readouts.word_terms import MAX_TOKENS, WordTermTable, prior_entropy
from probsent.text.token_ids import TokenIds
from probsent.text.utf8_texts import Utf8Texts

__all__ = ["ScoringEngine"]

Texts = Union[Sequence[Union[str, None]], Utf8Texts]
_FILES = {"calibration": CALIBRATION, "percentiles": PERCENTILES}  # the file ``probsent calibrate`` writes for each


class ScoringEngine:
    """Specificity, coverage, note, percentile, P(specific) and explain of one model.

    Parameters
    ----------
    vocab : probsent.data.vocab.Vocabulary
        The model's vocabulary.
    encoder : callable, optional
        Gives what encodes now (an :class:`probsent.inference.array_encoder.ArrayEncoder` or a
        torch encoder), asked at each call so that a change of weights or engine is seen; None
        in a frozen copy of a model with per-word terms, which scores with its table alone.
    calibration, percentiles, path
        The model's calibration and percentile table (None without them) and its directory.
    estimates : probsent.data.vocab.WordEstimates, optional
        The model's open vocabulary (``estimated_words.safetensors``): a word without an entry
        is read by its class on every path; None: as ``<unk>``.
    """

    def __init__(self, vocab: Vocabulary, encoder: Callable[[], Any] | None, calibration: Calibration | None = None,
                 percentiles: PercentileTable | None = None, path: Path | None = None,
                 estimates: WordEstimates | None = None) -> None:
        self.vocab = vocab
        self.estimates = estimates
        self.calibration = calibration
        self.percentiles = percentiles
        self.path = path  # the directory it was loaded from, if any
        self.source_files: tuple | None = None  # its files' identity when loaded (model_directory.files_identity)
        self._encoder = encoder
        self._ids: TokenIds | None = None  # made on first use: see token_ids
        self._terms: tuple[Any, WordTermTable] | None = None  # (weights' version, table)
        self._open_encoder: tuple[Any, Any] | None = None  # ((encoder, its weights' version), its copy with the classes' rows)

    def set_estimates(self, estimates: WordEstimates | None) -> None:
        """Read words without an entry through ``estimates`` (the open vocabulary; None: as
        ``<unk>``) on every path from now on."""
        self.estimates = estimates
        self._ids, self._terms, self._open_encoder = None, None, None

    def __getstate__(self) -> dict[str, Any]:
        """A frozen copy for a worker process: a model with per-word terms as its term table (no
        encoder), any other with its encoder's owner; never the tokenizer's caches and lock."""
        state = {**self.__dict__, "_ids": None, "_terms": None, "_open_encoder": None}
        if self.has_word_terms:
            state.update(_encoder=None, _terms=(None, self.term_table("scoring")))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._terms is not None:
            self._ids = self._terms[1].token_ids  # the table's own, rebuilt: one tokenizer

    @property
    def token_ids(self) -> TokenIds:
        """Sentences to vocabulary ids, each of its first MAX_TOKENS tokens: made on first use
        (loading a model makes no tokenizer), then shared by every call and the term table."""
        if self._ids is None:
            self._ids = TokenIds(open_index(self.vocab, self.estimates), MAX_TOKENS)
        return self._ids

    @property
    def has_word_terms(self) -> bool:
        """Whether the model scores by per-word entropy terms (WLO)."""
        return self._encoder is None or self._encoder().has_word_entropy_terms

    @property
    def probabilistic(self) -> bool:
        """True if sentences are Gaussians (WLO, LSTMGaussian), False if vectors."""
        return self._encoder is None or self._encoder().probabilistic

    def term_table(self, purpose: str) -> WordTermTable:
        """The model's per-word entropy terms as a :class:`WordTermTable` (float64: the prior's
        entropy and WLO's sum_d log|A_w,d| per word), rebuilt when the weights change; a
        one-line error naming ``purpose`` for a model without such terms.

        Scoring with it is exact: the prior plus the sentence's terms, summed in NumPy's order,
        the same bits however the sentences are batched (a batched float32 pass can differ in
        the last bit with the batch's shape)."""
        if self._encoder is None:
            return self._terms[1]
        encoder = self._encoder()
        if not encoder.has_word_entropy_terms:
            raise ProbsentError(f"{purpose} needs a WLO model, not {encoder.type_name}")
        version = (id(encoder), encoder.weights_version())
        if self._terms is None or self._terms[0] != version:
            table = WordTermTable(self.vocab, encoder.word_entropy_terms(),
                                  prior_entropy(encoder.dim, encoder.start_variance), encoder.word_shift_norms(),
                                  token_ids=self.token_ids, estimates=self.estimates)
            self._terms = (version, table)
        return self._terms[1]

    # -- scores ------------------------------------------------------------------------------

    def encode(self, sentences: Sequence[str], batch_size: int) -> ArrayEncoding:
        """The sentences' encodings, each of its first MAX_TOKENS tokens, saturated to float32's
        finite range; log|mean| in float64 where the model has it."""
        batch_size = check_batch_size(batch_size)
        return self.encode_ids(*self.token_ids(sentences), batch_size)

    def encode_ids(self, ids: np.ndarray, offsets: np.ndarray, batch_size: int) -> ArrayEncoding:
        """The encodings of sentences already tokenized by :attr:`token_ids` (flat ids and
        offsets), saturated as :meth:`encode`'s. With the open vocabulary, a WLO encoder (NumPy
        or a torch module, on any device) reads a class's id as that class's row
        (``with_word_rows``), made again when the encoder or its weights change."""
        encoder = self._encoder()
        if self.estimates is not None:  # a WLO model's (only WLO's are read with one)
            key = (encoder, encoder.weights_version())
            if self._open_encoder is None or self._open_encoder[0] != key:
                self._open_encoder = (key, encoder.with_word_rows((self.estimates.scale, self.estimates.shift)))
            encoder = self._open_encoder[1]
        return encoder.encode(ids, offsets, batch_size).saturated()

    def entropy(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """The entropies of ``sentences`` (a list of str, probabilistic models) as float64."""
        if self.has_word_terms:
            check_batch_size(batch_size)
            return self.term_table("the closed-form entropy").entropy(sentences)
        return saturated(gaussian_entropy(self.encode(sentences, batch_size).logvar))

    def specificity(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Minus the entropy (probabilistic models) or the vector norm: higher = more specific."""
        if self.probabilistic:
            return -self.entropy(sentences, batch_size)
        return saturated(vector_norms(self.encode(sentences, batch_size).mean))

    def coverage(self, sentences: Texts) -> np.ndarray:
        """Each sentence's share of tokens the model or English knows (NaN without tokens;
        :func:`probsent.text.token_ids.known_share`)."""
        return self.token_ids.coverage(sentences)

    def model_coverage(self, sentences: Texts) -> np.ndarray:
        """Each sentence's share of tokens with an entry of their own in the model (NaN without tokens)."""
        return self.token_ids.coverage(sentences, model_only=True)

    def note(self, sentences: Texts) -> list[str]:
        """Why each sentence's percentile and P(specific) are withheld ("" where they are given;
        :mod:`probsent.readouts.withheld`)."""
        return notes(withheld(self.token_ids, sentences)[0])

    def scores_and_coverage(self, texts: Texts, batch_size: int = 256) -> np.ndarray:
        """[3, n] float64: each text's specificity, its coverage and its model coverage (the
        share with an entry of the model's own: the low-coverage rule's); NaN where there is no
        sentence (None, or only whitespace): corpus scoring's hot path, a WLO model's whole
        batch from one tokenization."""
        if self.has_word_terms:
            return np.stack(self.term_table("scoring").text_scores_and_coverage(texts))
        out = np.full((3, len(texts)), np.nan)
        present = [i for i, text in enumerate(texts) if text is not None and text.strip()]
        if present:
            sentences = [texts[i] for i in present]
            out[0, present] = self.specificity(sentences, batch_size)
            out[1, present] = self.coverage(sentences)
            out[2, present] = self.model_coverage(sentences)
        return out

    def token_counts(self, sentences: Texts) -> np.ndarray:
        """Each sentence's token count as the model reads it (at most MAX_TOKENS; 0 for None)."""
        return self.token_ids.counts(sentences)

    # -- readings of scores ------------------------------------------------------------------

    def require(self, part: str) -> Any:
        """The model's ``part`` ("calibration" or "percentiles", as a read-out names what it
        needs: :mod:`probsent.readouts.readout_table`); a one-line error saying how to make it
        where the model has none."""
        return made_by_calibrate(getattr(self, part), self.path, _FILES[part])

    def require_calibration(self) -> Calibration:
        """The calibration; a one-line error saying how to make one where the model has none."""
        return self.require("calibration")

    def require_percentiles(self) -> PercentileTable:
        """The percentile table; a one-line error saying how to make one where the model has none."""
        return self.require("percentiles")

    def percentile_of_scores(self, scores: np.ndarray, sentences: Texts) -> np.ndarray:
        """The percentile for their length (:mod:`probsent.readouts.percentiles`) of sentences
        already scored by :meth:`specificity`, NaN where :mod:`probsent.readouts.withheld`
        withholds it; a one-line error without a percentile table."""
        return percentiles_read(self.require_percentiles(), self.token_ids, scores, sentences)

    def probability_of_scores(self, scores: np.ndarray, sentences: Texts) -> np.ndarray:
        """P(specific) of sentences already scored: the calibration's function of their scores
        and token counts (:mod:`probsent.readouts.calibration`), NaN where the percentile is
        withheld; a one-line error without a calibration (or, for a file of an earlier probsent
        that reads the percentile, without a percentile table)."""
        calibration = self.require_calibration()
        codes, counts = withheld(self.token_ids, sentences)
        percentiles = None
        if "percentile" in calibration.features:
            percentiles = self.require_percentiles().percentile(scores, counts)
        out = calibration.probability(scores, counts, percentiles)
        out[codes != 0] = np.nan
        return out

    def explain(self, sentence: str) -> Explanation:
        """Each token's exact additive share of the sentence's entropy (models with per-word
        terms), with its note, and its percentile and P(specific) where the model has a
        percentile table and a calibration."""
        explanation = self.term_table("explain").explain(sentence)
        score = np.array([explanation.specificity])
        if self.percentiles is not None:
            explanation.percentile = float(percentiles_read(self.percentiles, self.token_ids, score, [sentence])[0])
        calibration = self.calibration
        if calibration is not None and (explanation.percentile is not None or "percentile" not in calibration.features):
            percentile = np.array([math.nan if explanation.percentile is None else explanation.percentile])
            probability = calibration.probability(score, self.token_ids.counts([sentence]), percentile)
            explanation.probability = math.nan if explanation.note else float(probability[0])
        return explanation
