"""The training loss and the negatives against independent references: the whole batch loss
against a naive loop over the paper's formulas, the prior's share of the gradient, shared words
against Python sets, the hardness cap against a brute-force search (re-mined by the compiled
similarity matrix and by torch), and the trainer's negatives with and without the cap."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from probsent.models.batching import encode_by_length
from probsent.models import WLO
from probsent.models.base import Encoding
from probsent.settings import TrainConfig
from probsent.training.diagnostics import DiagnosticSample, prior_gradient_share
import probsent.training.negatives as negatives
from probsent.training.diagnostics import shared_word_counts, word_sets
from probsent.training.negatives import megabatch_negatives, remine
from probsent.training.losses import KLPrior, MarginLoss, TrainingStep
from probsent.training.trainer import Trainer
from tests.helpers import wlo_recurrence


def _naive_gaussian(a: np.ndarray, b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(mean, variance) after every word, by the recurrence (tests.helpers.wlo_recurrence)."""
    means, variances = wlo_recurrence(a, b)
    return list(zip(means[1:], variances[1:]))


def _naive_eip(m1, v1, m2, v2) -> float:
    """log N(0; m1 - m2, diag(v1 + v2)), one dimension at a time."""
    return sum(-0.5 * (math.log(2 * math.pi * (x + y)) + (p - q) ** 2 / (x + y))
               for p, x, q, y in zip(m1, v1, m2, v2))


def _naive_kl(mean, var) -> float:
    return sum(0.5 * (v + m * m - 1.0 - math.log(v)) for m, v in zip(mean, var))


def test_batch_loss_equals_a_naive_loop_over_the_papers_formula() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = WLO(30, dim=4, scale_init_std=0.3, shift_init_std=0.5).double()
    batch, margin, prior = 3, 1.0, 0.01
    lengths = rng.integers(1, 6, 4 * batch)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 30, offsets[-1])
    out = encode_by_length(model, ids, offsets, np.arange(4 * batch), 5, with_kl=True)
    step = TrainingStep(model, out, batch, ids, offsets, np.arange(4 * batch), torch.device("cpu"))
    margin_part, prior_part = MarginLoss(margin)(step)["margin"], KLPrior(prior)(step)["prior"]

    A, B = model.scale.weight.detach().numpy(), model.shift.weight.detach().numpy()
    steps = [_naive_gaussian(A[ids[offsets[k]:offsets[k + 1]]], B[ids[offsets[k]:offsets[k + 1]]])
             for k in range(4 * batch)]
    hinge, kl = 0.0, 0.0
    for p in range(batch):
        s1, s2, n1, n2 = (steps[p + side * batch][-1] for side in range(4))
        positive = _naive_eip(*s1, *s2)
        hinge += max(0.0, margin - positive + _naive_eip(*s1, *n1))
        hinge += max(0.0, margin - positive + _naive_eip(*s2, *n2))
    for trajectory in steps:  # every prefix of every side (s1, s2, n1, n2)
        kl += sum(_naive_kl(mean, var) for mean, var in trajectory)
    assert margin_part.item() == pytest.approx(hinge / batch, rel=1e-9)
    assert prior_part.item() == pytest.approx(prior * kl / batch, rel=1e-9)


def test_shared_words_match_python_sets() -> None:
    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 8, 40)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 12, offsets[-1])  # id 0 (<unk>) never counts
    words = word_sets(ids, offsets, np.arange(40))
    sets = [set(ids[offsets[k]:offsets[k + 1]].tolist()) - {0} for k in range(40)]
    a, b = rng.integers(0, 40, 100), rng.integers(0, 40, 100)
    assert shared_word_counts(words, a, b).tolist() == [len(sets[i] & sets[j]) for i, j in zip(a, b)]


def _random_problem(n: int, seed: int):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 10, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(1, 25, offsets[-1])
    encoded = Encoding(torch.from_numpy(rng.normal(size=(n, 6)).astype(np.float32)),
                       torch.from_numpy(rng.normal(size=(n, 6)).astype(np.float32)))
    partner = np.concatenate([np.arange(n // 2) + n // 2, np.arange(n // 2)])
    negative = rng.integers(0, n, n)
    negative = np.where((negative == np.arange(n)) | (negative == partner), (negative + 1) % n, negative)
    negative = np.where((negative == np.arange(n)) | (negative == partner), (negative + 1) % n, negative)
    return ids, offsets, encoded, partner, negative


@pytest.mark.parametrize("compiled", [True, False])
def test_hardness_cap_is_the_brute_force_argmax_under_each_ceiling(compiled: bool, monkeypatch) -> None:
    if not compiled:  # torch's pairwise_similarity instead of gaussian_matrix's kernel
        monkeypatch.setattr(negatives, "in_domain", lambda mean, logvar: False)
    ids, offsets, encoded, partner, negative = _random_problem(60, 4)
    n, cap = 60, 0.5
    mean, var = encoded.mean.double().numpy(), encoded.logvar.double().exp().numpy()
    eip = lambda i, j: _naive_eip(mean[i], var[i], mean[j], var[j])  # noqa: E731
    found = remine(encoded, partner, negative, cap)
    replaced = 0
    for i in range(n):
        limit = eip(i, partner[i]) + cap
        if eip(i, negative[i]) <= limit:
            assert found[i] == negative[i]  # within the cap: kept
            continue
        allowed = [j for j in range(n) if j not in (i, partner[i]) and eip(i, j) <= limit]
        expected = max(allowed, key=lambda j: eip(i, j)) if allowed else negative[i]
        assert found[i] == expected
        replaced += found[i] != negative[i]
    assert replaced > 5


@pytest.mark.slow
@pytest.mark.parametrize("cap", [0.0, 1.0])
def test_remine_by_the_compiled_matrix_equals_the_torch_reference(cap: float, monkeypatch) -> None:
    # Gaussians re-mine by gaussian_matrix's compiled N x M kernel; outside its domain, torch's
    # pairwise_similarity (the reference): the same negatives
    ids, offsets, encoded, partner, negative = _random_problem(400, 3)
    compiled = remine(encoded, partner, negative, cap)
    assert (compiled != negative).any()
    monkeypatch.setattr(negatives, "in_domain", lambda mean, logvar: False)
    assert np.array_equal(remine(encoded, partner, negative, cap), compiled)


def test_prior_gradient_share_is_the_norm_ratio_of_the_two_gradients() -> None:
    torch.manual_seed(3)
    rng = np.random.default_rng(3)
    model = WLO(20, dim=3)
    lengths = rng.integers(2, 6, 16)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(1, 20, offsets[-1])
    sample = DiagnosticSample(np.arange(8), 8)
    share = prior_gradient_share(model, ids, offsets, sample, 1.0, 0.01, 8)["prior_gradient_share"]
    doubled = prior_gradient_share(model, ids, offsets, sample, 1.0, 0.02, 8)["prior_gradient_share"]
    assert doubled == pytest.approx(2 * share)
    # the prior's gradient alone, by finite differences on A through the naive recurrence
    sentences = np.concatenate([2 * np.arange(8), 2 * np.arange(8) + 1])
    out = encode_by_length(model, ids, offsets, sentences, 16, with_kl=True)
    (grad,) = torch.autograd.grad(out.kl.sum(), model.scale.weight)
    A = model.scale.weight.detach().double().numpy().copy()
    B = model.shift.weight.detach().double().numpy()

    def total_kl(scale):
        return sum(_naive_kl(m, v) for k in sentences
                   for m, v in _naive_gaussian(scale[ids[offsets[k]:offsets[k + 1]]], B[ids[offsets[k]:offsets[k + 1]]]))

    w, d, h = int(ids[0]), 1, 1e-6
    up, down = A.copy(), A.copy()
    up[w, d] += h
    down[w, d] -= h
    dense = grad.to_dense() if grad.is_sparse else grad
    assert dense[w, d].item() == pytest.approx((total_kl(up) - total_kl(down)) / (2 * h), rel=1e-3)


@pytest.mark.parametrize("engine", ["torch", "fast"])
@pytest.mark.parametrize("cap", [None, 0.0, 0.1])
def test_trainer_negatives_follow_the_loss_and_the_cap(tmp_path, toy_pairs, engine, cap) -> None:
    """The negatives a run mines, checked by brute force on the model's own encodings: the
    argmax of the expected inner product (the loss's similarity), among sentences at most
    ``cap`` above the partner (``--hardness-cap``)."""
    config = TrainConfig(data=str(toy_pairs(3)), out=str(tmp_path / "run"), batch_size=8, megabatch=3,
                         engine=engine, hardness_cap=cap, shift_init_std=1.0)
    trainer = Trainer(config, progress=False)
    count = 8  # the eight distinct pairs (toy_pairs repeats them)
    ids, offsets = trainer.data.sentences(np.concatenate([2 * np.arange(count), 2 * np.arange(count) + 1]))
    sentences = np.arange(2 * count)  # the mega-batch's rows: all s1, then all s2
    negative = megabatch_negatives(config, sentences, count, trainer.encoder, ids, offsets, trainer.fast)
    with torch.no_grad():
        encoded = encode_by_length(trainer.encoder, ids, offsets, sentences, 8)
    mean, var = encoded.mean.double().numpy(), encoded.logvar.double().exp().numpy()
    mined_by = lambda i, j: _naive_eip(mean[i], var[i], mean[j], var[j])  # noqa: E731
    partner = np.concatenate([np.arange(count) + count, np.arange(count)])
    checked = 0
    for i in range(2 * count):
        pool = [j for j in range(2 * count) if j not in (i, partner[i])]
        if cap is not None and max(mined_by(i, j) for j in pool) > mined_by(i, partner[i]) + cap:
            allowed = [j for j in pool if mined_by(i, j) <= mined_by(i, partner[i]) + cap]
            checked += 1
            pool = allowed or pool
        values = sorted(mined_by(i, j) for j in pool)
        if len(values) > 1 and values[-1] - values[-2] < 1e-5:
            continue  # a near tie: float32 may order it either way
        assert negative[i] == max(pool, key=lambda j: mined_by(i, j))
    assert cap is None or checked > 0
