"""Adding a model touches one file: this one defines a toy model, registers it (undone after each
test), trains it with the real Trainer, saves it, loads it with ``probsent.load`` and evaluates
it with ``probsent eval``, without any other module knowing about it.

The toy is a Gaussian bag of words: a sentence is N(sum of its words' means, diag(product of
its words' variances)). Its entropy is then the prior's plus one term per word, half the sum
of the word's log-variances, so its description declares ``word_entropy_terms`` and
gets explain and the lexical analysis, which used to be WLO's alone.
"""
from __future__ import annotations

import json
import math
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
import torch
from torch import Tensor, nn

import probsent
from probsent.cli import main
from probsent.errors import InvalidValueError
from reproduction.evaluation.results import load_evaluation
from probsent.model_descriptions import DESCRIPTIONS, ModelDescription
from probsent.gaussian import entropy as gaussian_entropy, kl_to_standard_normal
from probsent.models import MODEL_TYPES, register_model, unregister_model
from probsent.models.base import Encoding, SentenceEncoder, lookup_real, padding_mask
from probsent.settings import TrainConfig
from probsent.training.trainer import Trainer
from tests.helpers import write_toy_pairs

pytestmark = pytest.mark.slow


class GaussianBag(SentenceEncoder):
    """A toy probabilistic model: each word has a mean vector and a log-variance vector; a
    sentence's mean is the sum of its words' means, its log-variance the sum of their log-variances."""

    description = ModelDescription("toy-gaussian-bag", "Toy Gaussian bag", probabilistic=True, default_margin=1.0,
                                   settings={"dim": 50, "init_std": 0.1, "logvar_init_std": 0.05},
                                   weights={"means.weight": ("vocab_size", "dim"), "logvars.weight": ("vocab_size", "dim")},
                                   word_entropy_terms=True, order_sensitive=False)

    def __init__(self, vocab_size: int, dim: int = 50, init_std: float = 0.1,
                 logvar_init_std: float = 0.05) -> None:
        super().__init__(vocab_size, dim=dim, init_std=init_std, logvar_init_std=logvar_init_std)
        self.dim = dim
        self.means = nn.Embedding(vocab_size, dim, sparse=True)
        self.logvars = nn.Embedding(vocab_size, dim, sparse=True)
        nn.init.normal_(self.means.weight, std=init_std)
        nn.init.normal_(self.logvars.weight, std=logvar_init_std)

    def forward(self, ids: Tensor, lengths: Tensor, with_kl: bool = False) -> Encoding:
        real = padding_mask(ids, lengths)
        mean = lookup_real(self.means, ids, real, 0.0).sum(1)
        logvar = lookup_real(self.logvars, ids, real, 0.0).sum(1)
        return Encoding(mean, logvar, kl_to_standard_normal(mean, logvar) if with_kl else None)

    # the capability has_word_entropy_terms (probsent.models.base.WordEntropyTerms)
    def word_entropy_terms(self, ids: Tensor | None = None, dtype: torch.dtype | None = None) -> Tensor:
        logvars = self.logvars.weight if ids is None else self.logvars.weight[ids]
        return 0.5 * logvars.to(dtype or logvars.dtype).sum(-1)

    def shift_entropy_terms(self, terms: Tensor) -> None:
        with torch.no_grad():
            self.logvars.weight.add_((2.0 * terms.to(self.logvars.weight) / self.dim)[:, None])

    def entropy_weights(self) -> Tensor:
        return self.logvars.weight

    def word_shifts(self) -> Tensor:
        return self.means.weight


@contextmanager
def registered() -> Iterator[type[GaussianBag]]:
    """The toy registered for a while, and removed again whatever happens meanwhile."""
    register_model(GaussianBag)
    try:
        yield GaussianBag
    finally:
        unregister_model(GaussianBag.type_name)


@pytest.fixture
def toy_model() -> Iterator[type[GaussianBag]]:
    """The toy registered for one test."""
    with registered() as cls:
        yield cls


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A toy trained for a few steps on the toy pairs by the real Trainer (its model in out/best)."""
    root = tmp_path_factory.mktemp("toy")
    with registered() as cls, pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROBSENT_CACHE", str(root / "cache"))
        config = TrainConfig(model=cls.type_name, data=str(write_toy_pairs(root / "pairs.tsv")), out=str(root / "out"),
                             dim=8, batch_size=8, megabatch=2, eval_every=5, max_steps=12, rarity_init=0.1)
        state = Trainer(config, progress=False).train()
    assert state["step"] >= 12
    return root / "out"


def test_the_registry_knows_the_toy_only_while_registered(toy_model) -> None:
    assert MODEL_TYPES[toy_model.type_name] is toy_model and DESCRIPTIONS[toy_model.type_name] is toy_model.description
    assert (toy_model.label, toy_model.probabilistic, toy_model.has_word_entropy_terms) == ("Toy Gaussian bag", True, True)
    assert TrainConfig(model=toy_model.type_name).model == toy_model.type_name
    assert toy_model.hyper_parameters() == {"dim": 50, "init_std": 0.1, "logvar_init_std": 0.05}
    unregister_model(toy_model.type_name)
    assert toy_model.type_name not in MODEL_TYPES and toy_model.type_name not in DESCRIPTIONS
    with pytest.raises(InvalidValueError, match="--model: must be one of wlo, "):
        TrainConfig(model=toy_model.type_name)


def test_trained_saved_loaded_and_explained(toy_model, trained: Path) -> None:
    model = probsent.load(trained)
    assert isinstance(model.encoder, GaussianBag)
    settings = model.config["training"]["config"]
    assert settings["model"] == GaussianBag.type_name
    # dim came from the training settings, init_std and logvar_init_std (no such settings) from their defaults
    assert model.encoder.config() == {"type": GaussianBag.type_name, "vocab_size": len(model.vocab),
                                      "dim": 8, "init_std": 0.1, "logvar_init_std": 0.05}
    sentences = ["a man is playing a guitar .", "the stock market fell 5 % on tuesday", "it is raining"]
    specificity = model.specificity(sentences)
    # the closed form by word terms (the capability) equals the Gaussian's entropy from encode
    _, logvar = model.encode(sentences, log_variance=True)
    from_encoding = gaussian_entropy(torch.from_numpy(logvar.astype(np.float64))).numpy()
    assert -specificity == pytest.approx(from_encoding, abs=1e-4)
    explained = model.explain(sentences[1])
    assert explained.entropy == pytest.approx(-specificity[1], abs=1e-9)
    assert explained.prior_entropy == pytest.approx(0.5 * 8 * math.log(2 * math.pi * math.e))
    log = [json.loads(line) for line in (trained / "log.jsonl").read_text().splitlines()]
    assert "term_count_spearman" in log[-1] and "prior_gradient_share" in log[-1]  # diagnostics by capability


def test_evaluated_by_probsent_eval(toy_model, trained: Path, data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    assert main(["eval", "--model", str(trained), "--data-dir", str(data_dir), "--out", str(out),
                 "--min-count", "1", "--quiet"]) == 0
    run = load_evaluation(out / "evaluation.json")
    entry = run.results.systems[GaussianBag.label]  # named by the registry's label
    assert entry.kind == "model" and entry.paper_row is None  # the paper has no such row
    assert 0.0 <= entry.specificity.news.accuracy <= 100.0
    assert entry.sts is not None and entry.sts.is_probabilistic
    assert entry.lexical is not None and entry.lexical.n_words > 0  # by capability, not by class
    report = (out / "report.md").read_text()
    assert f"| {GaussianBag.label} |" in report
