"""What every sentence encoder in probsent shares: its input, its output and its interface.

A work-around for a numerical defect of the libraries underneath, applied once at import.

torch's CPU builds compute many float unary functions (sqrt, exp, log, tanh, ...) with Intel
oneMKL's vector math library (VML), in chunks spread over the intra-op threads. oneMKL 2024.2
(the version inside torch's wheels, ``torch.__config__.show()``) picks each function's kernel
on its first call; when the first calls come from two threads at once, one thread's chunk can
run the low-accuracy kernel (about 11 correct bits instead of a correctly rounded result)
although high accuracy was asked for (pytorch/pytorch issue 188792). It happens in a few
percent of fresh processes, at random: a training run resumed in such a process leaves the
bit-exact path of the uninterrupted run. Measured here (2026-11-26, 2 cores): Adam's ``sqrt``
of the second moments off by up to 3e-4 relative in half the entries, the main thread's chunk;
in a loop replaying CI's kill-and-resume test, 5 of 37 resumed processes ended with other
weights before this fix and 0 of 40 after it; ``torch.sqrt`` of 2,400 floats as the first
work of a fresh process was wrong in 1 of 40 processes.

Calling each function once on a single element, before anything runs in parallel, settles the
choice on the accurate kernel for the life of the process. probsent's torch work all goes through
its models (training, the torch encoder, evaluation and export build or read one), so
this module does it right after its ``import torch``, before any of it runs;
``import probsent`` itself changes nothing in the user's process (no import hook, no torch: the
scoring path never imports torch, and importing probsent must not cost torch's 2 s).

The same moment registers a second work-around: a process forked after torch ran work on its
thread pool (``probsent.load()`` and ``encode``, then a ``multiprocessing.Pool`` with Linux's
default "fork" start method) deadlocks in its first parallel torch call, because the pool's
threads do not exist in the child. A forked child is set to one torch thread
(``os.register_at_fork``), so it encodes on its own thread and never waits for the pool; the
"spawn" start method, which gives each worker its own fresh torch, needs nothing.
"""
from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import torch
from torch import Tensor, nn

from probsent.model_descriptions import ModelDescription


# the unary functions torch may hand to VML on the CPU (ATen's cpu/vml.h), float32 and float64
VML_FUNCTIONS = ("abs", "acos", "asin", "atan", "cos", "cosh", "erf", "erfc", "erfinv", "exp",
                 "expm1", "lgamma", "log", "log10", "log1p", "log2", "sin", "sinh", "sqrt",
                 "tan", "tanh", "trunc")
_settled = False


def settle_vector_math() -> None:
    """Make VML choose its kernels on this thread alone (well under 1 ms), once per process;
    imports torch. Called by probsent's models before any torch work of theirs."""
    global _settled
    if not _settled:
        _settled = True
        _settle()


def _settle() -> None:
    import torch

    os.register_at_fork(after_in_child=_one_thread_in_a_forked_child)
    for dtype in (torch.float32, torch.float64):
        one = torch.full((1,), 0.5, dtype=dtype)
        for name in VML_FUNCTIONS:
            getattr(torch, name)(one)


def _one_thread_in_a_forked_child() -> None:
    """After ``os.fork``: torch's thread pool did not survive it, so run on this thread alone."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


settle_vector_math()  # before any torch work of probsent's: see this module's docstring


@dataclass
class Encoding:
    """A batch of encoded sentences.

    mean:   [batch, dim] the sentence vector (deterministic models) or Gaussian mean.
    logvar: [batch, dim] log of the diagonal variance, or None for deterministic models.
    kl:     [batch] the model's prior penalty (probabilistic models, training only), else None.
    log_abs_mean: [batch, dim] float64 log|mean|, where a model computes it beyond the mean's
            own range (WLO without the prior), else None.
    """

    mean: Tensor
    logvar: Tensor | None = None
    kl: Tensor | None = None
    log_abs_mean: Tensor | None = None

    def index(self, idx: Tensor) -> "Encoding":
        """Rows ``idx`` of this batch."""
        pick = lambda t: None if t is None else t[idx]  # noqa: E731
        return Encoding(self.mean[idx], pick(self.logvar), pick(self.kl), pick(self.log_abs_mean))


class SentenceEncoder(nn.Module):
    """Maps padded word ids [batch, length] (+ true lengths) to an :class:`Encoding`.

    Index 0 of the vocabulary is the unknown word; positions at or beyond a sentence's length
    are padding and never change its result.

    A model declares what the rest of probsent needs to know about it in its ``description``
    (a :class:`probsent.model_descriptions.ModelDescription`, read without torch wherever a
    model directory is read), which gives the class these attributes, and is registered under
    its ``type_name`` (:func:`probsent.models.registry.register_model`):

    - ``type_name``: its name on the command line and in model files ("wlo");
    - ``label``: its name in tables and reports ("WLO"; the paper's row label where the paper
      has the model);
    - ``probabilistic``: sentences are diagonal Gaussians (entropy, the KL prior in training)
      rather than vectors (a norm, the L2 penalty);
    - ``default_margin``: the margin delta of training when ``--margin`` is not given;
    - ``order_sensitive``: False where word order cannot matter (training then does not scramble);
    - ``has_word_entropy_terms``: a sentence's entropy is its start's (``start_variance``) plus
      one exact term per word, and the model has the methods of :class:`WordEntropyTerms` (what explain, the
      lexical analysis, the word-term diagnostics and ``--rarity-init`` use).

    Its hyper-parameters are its constructor's keyword arguments after ``vocab_size``, with
    their defaults (:meth:`hyper_parameters`), the description's settings; training gives each
    the ``probsent train`` setting of the same name where there is one.
    """

    description: ClassVar[ModelDescription]
    type_name: ClassVar[str]
    label: ClassVar[str]
    probabilistic: ClassVar[bool]
    default_margin: ClassVar[float]
    order_sensitive: ClassVar[bool] = True
    has_word_entropy_terms: ClassVar[bool] = False
    dim: int
    """The size of a sentence's vector (of its Gaussian's mean and variance)."""
    start_variance: float = 1.0
    """With ``has_word_entropy_terms``: a sentence before any word is N(0, start_variance I), so
    its entropy is dim/2 log(2 pi e start_variance) plus its words' terms (WLO may set another)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class with a description of its own takes its attributes from it."""
        super().__init_subclass__(**kwargs)
        described = cls.__dict__.get("description")
        if isinstance(described, ModelDescription):
            cls.type_name, cls.label, cls.probabilistic = described.name, described.label, described.probabilistic
            cls.default_margin, cls.order_sensitive = described.default_margin, described.order_sensitive
            cls.has_word_entropy_terms = described.word_entropy_terms

    def __init__(self, vocab_size: int, **hyper: Any) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.hyper = dict(hyper)

    @classmethod
    def hyper_parameters(cls) -> dict[str, Any]:
        """Name -> default of each hyper-parameter: the constructor's keyword arguments after
        ``vocab_size``, in their order."""
        parameters = list(inspect.signature(cls.__init__).parameters.values())[2:]  # self, vocab_size
        return {p.name: p.default for p in parameters
                if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}

    @property
    def device(self) -> torch.device:
        """Where the weights are."""
        return next(self.parameters()).device

    def config(self) -> dict[str, Any]:
        """Everything needed to rebuild this module (weights aside)."""
        return {"type": self.type_name, "vocab_size": self.vocab_size, **self.hyper}

    def forward(self, ids: Tensor, lengths: Tensor,
                with_kl: bool = False) -> Encoding:  # pragma: no cover
        """Encode a batch; with ``with_kl``, a probabilistic model also returns the terms of
        training's prior (the paper's): the KL to N(0, I) of the Gaussian after every word."""
        raise NotImplementedError

    def encode_batches(self, batches: list[tuple[Tensor, Tensor]],
                       with_kl: bool = False) -> list[Encoding]:
        """One :class:`Encoding` per (ids, lengths) batch. Here, one ``forward`` per batch; a
        model may share work across the batches, with the same results."""
        return [self(ids, lengths, with_kl=with_kl) for ids, lengths in batches]

    def l2_penalty(self, words: Tensor) -> Tensor:
        """Sum of squared weights, the regularizer of the deterministic baselines.

        Word tables count only the rows of ``words`` (the distinct word ids of the batch: lazy
        L2), so that their gradients stay sparse; every other weight counts in full.
        """
        total = torch.zeros((), device=words.device)
        for module in self.modules():
            if isinstance(module, nn.Embedding):
                total = total + module(words).square().sum()
            else:
                total = total + sum(p.square().sum() for p in module.parameters(recurse=False))
        return total


class WordEntropyTerms(Protocol):
    """The capability ``has_word_entropy_terms``: a sentence's entropy is its start's,
    dim/2 log(2 pi e s_0) for z_0 ~ N(0, s_0 I), plus one exact additive term per word (WLO's
    sum_d log|A_w,d|)."""

    dim: int
    start_variance: float  # s_0 (the paper: 1)

    def word_entropy_terms(self, ids: Tensor | None = None, dtype: torch.dtype | None = None) -> Tensor:
        """Per word (of ``ids``, default all), its term of a sentence's entropy (computed in
        ``dtype``, default the weights')."""
        ...

    def shift_entropy_terms(self, terms: Tensor) -> None:
        """Add ``terms[w]`` to word w's entropy term (an initialization)."""
        ...

    def entropy_weights(self) -> Tensor:
        """The weight table the entropy terms are computed from (for gradients)."""
        ...

    def word_shifts(self) -> Tensor:
        """[vocab, dim]: how each word moves a sentence's mean (WLO's translation B_w)."""
        ...


def lookup_real(table: nn.Embedding, ids: Tensor, real: Tensor, fill: float) -> Tensor:
    """[batch, length, dim] rows of ``table`` at the real positions and ``fill`` at padding.

    Only real positions are looked up, so a sparse gradient has one row per real token and
    the optimizer never touches padding.
    """
    out = torch.full((*ids.shape, table.embedding_dim), fill, dtype=table.weight.dtype,
                     device=table.weight.device)
    out[real] = table(ids[real])
    return out


def padding_mask(ids: Tensor, lengths: Tensor) -> Tensor:
    """[batch, length] bool, True at real (non-padding) positions."""
    positions = torch.arange(ids.shape[1], device=ids.device)
    return positions[None, :] < lengths[:, None]
