"""The fast WLO training engine against the torch reference (model, loss, optimizer, trainer)."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

import probsent
from probsent import ProbsentError
from probsent.models.batching import encode_by_length, pad_batch
from probsent.models import WLO
from probsent.training.fast import wlo_kernels as fast_wlo
from probsent.settings import TrainConfig
from probsent.training.fast.engine import FastWLOEngine
from probsent.training.losses import LOSS_TYPES, Loss, register_loss, unregister_loss
from probsent.training.losses.margin import margin_loss
from probsent.training.trainer import Trainer, scramble

numba = pytest.importorskip("numba")


def _problem(seed: int, vocab: int = 40, dim: int = 50, pairs: int = 7, lengths=(1, 12),
             scale_mean: float = 1.0, scale_std: float = 0.1, shift_std: float = 0.1,
             negative_words: int = 3, tiny_words: bool = False):
    """A WLO (float64, the reference) and 4 * pairs random sentences: s1, s2, n1, n2 rows."""
    torch.manual_seed(seed)
    model = WLO(vocab, dim, scale_init_mean=scale_mean, scale_init_std=scale_std,
                shift_init_std=shift_std).double()
    with torch.no_grad():
        model.scale.weight[:negative_words] *= -1  # some words flip signs
    if tiny_words:
        with torch.no_grad():
            model.scale.weight[5, :3] = 0.0
            model.scale.weight[6, 0] = 1e-35
    rng = np.random.default_rng(seed)
    sizes = rng.integers(lengths[0], lengths[1] + 1, size=4 * pairs)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    ids = rng.integers(0, vocab, size=offsets[-1]).astype(np.int64)
    if tiny_words:
        ids[::5] = 5 + np.arange(len(ids[::5])) % 2  # in every sentence or so
    return model, ids, offsets


def _reference(model: WLO, ids, offsets, pairs: int, margin: float, prior_weight: float,
               anchor: float = 0.0, targets=None):
    """Loss and dense gradients of one step, by the torch model and loss (float64)."""
    model.zero_grad(set_to_none=True)
    padded, lengths = pad_batch(ids, offsets, np.arange(4 * pairs))
    out = model(padded, lengths, with_kl=True)
    parts = [out.index(slice(i * pairs, (i + 1) * pairs)) for i in range(4)]
    loss = margin_loss(*parts, margin).mean() + prior_weight * out.kl.sum() / pairs
    if anchor:
        words = torch.from_numpy(np.unique(ids[offsets[0]:offsets[4 * pairs]]))
        gaps = model.word_entropy_terms(words) - torch.from_numpy(targets)[words]
        loss = loss + anchor * 0.5 * (gaps ** 2).sum() / pairs
    loss.backward()
    return loss.item(), model.scale.weight.grad.to_dense(), model.shift.weight.grad.to_dense()


def _naive_reference(model: WLO, ids, offsets, pairs: int, margin: float, prior_weight: float,
                     anchor: float = 0.0, targets=None):
    """The same loss and gradients from the recurrence run word by word in float64 autograd,
    log|A| clamped at 1e-30 as the model does (no gradient through the log below it); the
    prior written out: 1/2 (sigma^2 + mu^2 - 1 - log sigma^2) per prefix; the rarity anchor
    written out word by word."""
    scale = model.scale.weight.detach().double().requires_grad_()
    shift = model.shift.weight.detach().double().requires_grad_()
    means, logvars, prior = [], [], torch.zeros((), dtype=torch.float64)
    for k in range(4 * pairs):
        mean = torch.zeros(scale.shape[1], dtype=torch.float64)
        logvar = torch.zeros(scale.shape[1], dtype=torch.float64)
        for w in ids[offsets[k]:offsets[k + 1]].tolist():
            mean = scale[w] * (mean + shift[w])
            logvar = logvar + 2 * scale[w].abs().clamp_min(1e-30).log()
            prior = prior + 0.5 * (logvar.exp() + mean ** 2 - 1 - logvar).sum()
        means.append(mean)
        logvars.append(logvar)
    from probsent.models.base import Encoding
    out = [Encoding(torch.stack(means[i * pairs:(i + 1) * pairs]), torch.stack(logvars[i * pairs:(i + 1) * pairs]))
           for i in range(4)]
    loss = margin_loss(*out, margin).mean() + prior_weight * prior / pairs
    for w in sorted(set(ids[offsets[0]:offsets[4 * pairs]].tolist())) if anchor else []:
        term = scale[w].abs().clamp_min(1e-30).log().sum()
        loss = loss + anchor / pairs * 0.5 * (term - float(targets[w])) ** 2
    loss.backward()
    return loss.item(), scale.grad, shift.grad


def _kernel_step(model: WLO, ids, offsets, pairs: int, margin: float, prior_weight: float,
                 moments=None, step: int = 0, lr: float = 0.0, beta1: float = 0.0, beta2: float = 0.5,
                 anchor: float = 0.0, targets=None):
    """One step of the kernel on float32 copies of ``model``'s tables. With beta1 = 0 the
    first moment it leaves is the gradient itself. Returns (loss, steps done, tables, moments)."""
    tables = [model.scale.weight.detach().float().numpy().copy(),
              model.shift.weight.detach().float().numpy().copy()]
    moments = [m.copy() for m in moments] if moments is not None else [np.zeros_like(tables[0]) for _ in range(4)]
    starts, lengths = offsets[:-1].copy(), np.diff(offsets)
    losses, _, done = fast_wlo.train_steps(ids, starts, lengths, np.array([pairs], np.int64), *tables, *moments,
                                        step, lr, beta1, beta2, 1e-8, margin, prior_weight,
                                        np.full(len(tables[0]), -1, np.int64), anchor,
                                        np.zeros(0) if targets is None else targets)
    return float(losses[0]), int(done), tables, moments


CASES = {
    "typical": dict(),
    "negative and length-1": dict(lengths=(1, 2), negative_words=20),
    # |S| > 30: the reference's log-space path
    "long, beyond the direct range": dict(lengths=(40, 80), scale_mean=1.6, shift_std=0.5),
    "tiny variances (below the e^-80 floor)": dict(lengths=(30, 40), scale_mean=0.2, scale_std=0.02),
    "huge variances": dict(lengths=(10, 14), scale_mean=5.0, scale_std=0.5),
    "wide spread": dict(scale_std=0.5, shift_std=1.0),
    # |A| below the 1e-30 clamp of log|A|: no gradient through the log there (words 5 and 6)
    "scales below the clamp": dict(tiny_words=True),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("margin,prior_weight,anchor",
                         [(1.0, 1e-4, 0.0), (50.0, 1e-2, 0.0), (0.0, 0.0, 0.0), (1.0, 1e-1, 0.0),
                          (1.0, 1e-4, 0.3), (0.0, 0.0, 10.0)])
def test_loss_and_gradients_match_the_reference(case, margin, prior_weight, anchor) -> None:
    # against the torch model (float64), and against a word-by-word recurrence; the model's
    # closed form divides by products of A, which A below the clamp make meaningless, so
    # that case is checked against the recurrence alone; the rarity anchor's targets are
    # random terms of either sign
    model, ids, offsets = _problem(3, **CASES[case])
    targets = np.random.default_rng(5).normal(0.0, 2.0, size=model.scale.weight.shape[0])
    options = dict(anchor=anchor, targets=targets)
    references = [_naive_reference(model, ids, offsets, 7, margin, prior_weight, **options)]
    if not CASES[case].get("tiny_words"):
        references.append(_reference(model, ids, offsets, 7, margin, prior_weight, **options))
    loss, done, _, moments = _kernel_step(model, ids, offsets, 7, margin, prior_weight, **options)
    assert done == 1
    for expected_loss, expected_a, expected_b in references:
        assert loss == pytest.approx(expected_loss, rel=1e-5, abs=1e-6)
        for got, expected in ((moments[0], expected_a), (moments[2], expected_b)):
            expected = expected.numpy()
            scale = max(np.abs(expected).max(), 1e-30)
            assert np.abs(got - expected).max() <= 1e-5 * scale, (case, np.abs(got - expected).max(), scale)


def test_empty_sentence_is_the_standard_normal() -> None:
    # a sentence of no word is N(0, I) with no prior terms: the loss of pairs made of it is
    # hand-computable. d(N(0,I), N(0,I)) = -k/2 log(4 pi); every hinge is the margin.
    model, ids, _ = _problem(4, vocab=10, dim=5, pairs=2)
    offsets = np.zeros(9, np.int64)
    loss, done, tables, _ = _kernel_step(model, ids, offsets, 2, margin=1.0, prior_weight=1e-2)
    assert done == 1 and loss == pytest.approx(2.0, abs=1e-12)


def test_one_adam_step_matches_sparse_adam() -> None:
    # from nonzero moments at step 6, one update of the touched rows, against the reference
    # optimizer applied to the reference gradients
    model, ids, offsets = _problem(5)
    rng = np.random.default_rng(5)
    shape = tuple(model.scale.weight.shape)
    moments = [rng.normal(0, 0.01, shape).astype(np.float32), rng.uniform(0, 1e-4, shape).astype(np.float32),
               rng.normal(0, 0.01, shape).astype(np.float32), rng.uniform(0, 1e-4, shape).astype(np.float32)]
    reference = copy.deepcopy(model).float()
    optimizer = torch.optim.SparseAdam(list(reference.parameters()), lr=1e-3)
    for param, (m, v) in zip(reference.parameters(), ((moments[0], moments[1]), (moments[2], moments[3]))):
        optimizer.state[param].update(step=6, exp_avg=torch.from_numpy(m.copy()),
                                      exp_avg_sq=torch.from_numpy(v.copy()))
    _, grad_a, grad_b = _reference(model, ids, offsets, 7, 1.0, 1e-4)
    for param, grad in zip(reference.parameters(), (grad_a, grad_b)):
        rows = torch.from_numpy(np.unique(ids))
        param.grad = torch.sparse_coo_tensor(rows[None], grad.float()[rows], param.shape)
    optimizer.step()
    _, done, tables, new_moments = _kernel_step(model, ids, offsets, 7, 1.0, 1e-4, moments=moments, step=6,
                                                lr=1e-3, beta1=0.9, beta2=0.999)
    assert done == 1
    for got, param in zip(tables, reference.parameters()):
        assert np.abs(got - param.detach().numpy()).max() <= 1e-6
    for got, param in ((new_moments[0], reference.scale.weight), (new_moments[2], reference.shift.weight)):
        expected = optimizer.state[param]["exp_avg"].numpy()
        assert np.abs(got - expected).max() <= 1e-6 * max(np.abs(expected).max(), 1e-12)
    # untouched rows keep their weights and moments
    untouched = np.setdiff1d(np.arange(shape[0]), ids)
    assert np.array_equal(new_moments[1][untouched], moments[1][untouched])


def test_non_finite_loss_stops_before_the_update() -> None:
    model, ids, offsets = _problem(6, pairs=3)
    with torch.no_grad():
        model.shift.weight[ids[offsets[5]]] = float("nan")  # a word of sentence 5
    before = model.scale.weight.detach().float().numpy().copy()
    loss, done, tables, _ = _kernel_step(model, ids, offsets, 3, 1.0, 1e-4, lr=1e-3, beta1=0.9, beta2=0.999)
    assert done == 0 and np.isnan(loss)
    assert np.array_equal(tables[0], before)


@pytest.mark.slow
def test_encoding_matches_the_reference() -> None:
    for case in CASES.values():
        if case.get("tiny_words"):  # the closed form is meaningless there (see above)
            continue
        model, ids, offsets = _problem(7, pairs=25, **case)
        model = model.float()
        with torch.no_grad():
            expected = encode_by_length(model, ids, offsets, np.arange(100), 16)
        mean, logvar = fast_wlo.encode_final(ids, offsets[:-1].copy(), np.diff(offsets),
                                             model.scale.weight.detach().numpy(),
                                             model.shift.weight.detach().numpy())
        scale = np.abs(expected.mean.numpy()).max()
        assert np.abs(mean - expected.mean.numpy()).max() <= 1e-5 * scale
        assert np.abs(logvar - expected.logvar.numpy()).max() <= 1e-5 * max(np.abs(logvar).max(), 1)


@pytest.mark.slow
@pytest.mark.parametrize("probability", [0.4, 1.0, 0.0])
def test_scrambled_packing_equals_the_reference_scramble(probability) -> None:
    # the reference: encode_by_length's length-sorted batches of 16, each scrambled in turn
    rng = np.random.default_rng(8)
    lengths = rng.integers(1, 30, 50)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ids = rng.integers(1, 1000, offsets[-1]).astype(np.int64)
    sentences = rng.permutation(50)
    generators = [torch.Generator().manual_seed(8) for _ in range(2)]
    expected = {}
    order = np.argsort(lengths[sentences], kind="stable")
    for first in range(0, 50, 16):
        rows = sentences[order[first:first + 16]]
        padded, row_lengths = pad_batch(ids, offsets, rows)
        shuffled = scramble(padded, row_lengths, probability, generators[0])
        for k, sentence in enumerate(rows):
            expected[int(sentence)] = shuffled[k, :int(row_lengths[k])].tolist()
    tokens, starts, packed_lengths = FastWLOEngine._packed(ids, offsets, [(sentences, 16)], probability,
                                                           generators[1])  # just the packing: no model
    for k, sentence in enumerate(sentences):
        assert tokens[starts[k]:starts[k] + packed_lengths[k]].tolist() == expected[int(sentence)]
    # the same random numbers were used: the generators are at the same place
    assert torch.equal(torch.rand(3, generator=generators[0]), torch.rand(3, generator=generators[1]))


# -- the engine inside the trainer -----------------------------------------------------------

def _config(tmp_path, data, name, **overrides) -> TrainConfig:
    values = dict(model="wlo", data=str(data), out=str(tmp_path / name), batch_size=20, megabatch=4,
                  eval_every=10, vocab_size=2000, prior_weight=1e-3)
    values.update(overrides)
    return TrainConfig(**values)


def _tables(trainer: Trainer) -> list[torch.Tensor]:
    return [p.detach().clone() for p in trainer.encoder.parameters()]


@pytest.mark.parametrize("megabatch", [4, 1])  # negatives from 4 mini-batches, or from each one
def test_forty_steps_follow_the_torch_trainer(tmp_path, megabatch, pairs_slice) -> None:
    data = pairs_slice(800, stride=997)  # every source
    trainers = {}
    for engine in ("torch", "fast"):
        trainer = Trainer(_config(tmp_path, data, engine, engine=engine, max_steps=40, megabatch=megabatch),
                          progress=False, log=lambda _: None)
        assert trainer.config.engine == engine
        trainer.train()
        assert trainer.state["step"] == 40
        trainers[engine] = trainer
    for expected, got in zip(_tables(trainers["torch"]), _tables(trainers["fast"])):
        assert (got - expected).abs().max() <= 1e-4 * expected.abs().max()
    logs = [[line for line in open(tmp_path / engine / "log.jsonl")] for engine in ("torch", "fast")]
    assert len(logs[0]) == len(logs[1])
    for a, b in zip(*logs):
        assert json.loads(a)["loss"] == pytest.approx(json.loads(b)["loss"], rel=1e-4)
    # the optimizer state has the reference's layout: either engine resumes the other's run
    state = [trainers[e].optimizer.state_dict() for e in ("torch", "fast")]
    assert state[0]["state"].keys() == state[1]["state"].keys()
    for key in state[0]["state"]:
        assert int(state[0]["state"][key]["step"]) == int(state[1]["state"][key]["step"]) == 40


@pytest.mark.slow
def test_either_engine_resumes_the_other_and_its_own_exactly(tmp_path, toy_pairs) -> None:
    data = toy_pairs(30)  # 240 pairs: 3 mega-batches an epoch
    straight = Trainer(_config(tmp_path, data, "straight", engine="fast", epochs=2), progress=False)
    straight.train()
    for first, second in (("fast", "fast"), ("torch", "fast"), ("fast", "torch")):
        name = f"{first}-{second}"
        part = Trainer(_config(tmp_path, data, name, engine=first, epochs=2, max_steps=12), progress=False)
        part.train()
        resumed = Trainer(_config(tmp_path, data, name, engine=second, epochs=2), resume=True, progress=False)
        assert resumed.state["step"] == 12
        resumed.train()
        assert resumed.state["finished"] and resumed.state["step"] == straight.state["step"]
        for expected, got in zip(_tables(straight), _tables(resumed)):
            if first == second:  # within the engine: to the last bit
                assert torch.equal(got, expected), name
            else:
                assert (got - expected).abs().max() <= 1e-4 * expected.abs().max(), name


def test_results_do_not_depend_on_the_thread_count(tmp_path, pairs_slice) -> None:
    data = pairs_slice(400, stride=1999)
    results = []
    before, torch_before = numba.get_num_threads(), torch.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            torch.set_num_threads(threads)
            trainer = Trainer(_config(tmp_path, data, f"t{threads}", engine="fast", epochs=2), progress=False)
            assert numba.get_num_threads() == threads
            trainer.train()
            results.append(_tables(trainer) + [(tmp_path / f"t{threads}" / "log.jsonl").read_text()])
    finally:
        numba.set_num_threads(before)
        torch.set_num_threads(torch_before)
    assert all(torch.equal(a, b) for a, b in zip(results[0][:2], results[1][:2]))
    losses = [[json.loads(line)["loss"] for line in result[2].splitlines()] for result in results]
    assert losses[0] == losses[1]


def test_engine_choice(tmp_path, toy_pairs) -> None:
    data = toy_pairs(2)
    assert Trainer(_config(tmp_path, data, "a"), progress=False).config.engine == "fast"  # auto, WLO
    assert Trainer(_config(tmp_path, data, "b", model="wordsum"), progress=False).config.engine == "torch"
    with pytest.raises(ProbsentError, match=r"--engine fast trains WLO only"):
        Trainer(_config(tmp_path, data, "c", model="wordavg", engine="fast"), progress=False)
    with pytest.raises(ProbsentError, match="--engine"):
        Trainer(_config(tmp_path, data, "d", engine="gpu"), progress=False)


def test_the_engine_says_where_training_runs(tmp_path, monkeypatch, toy_pairs) -> None:
    # torch: on a GPU where torch sees one, else the CPU; fast: the CPU, also beside a GPU
    data = toy_pairs(2)
    trainer = Trainer(_config(tmp_path, data, "a", engine="torch"), progress=False)
    assert trainer.device.type == trainer.encoder.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    trainer = Trainer(_config(tmp_path, data, "b", engine="fast"), progress=False)
    assert trainer.device.type == "cpu" and trainer.fast is not None


def test_the_fast_engine_refuses_a_loss_it_does_not_implement_by_name(tmp_path, monkeypatch, toy_pairs) -> None:
    """The engine declares the losses its kernels compute; a run with another (a registered loss
    that is always on, here): --engine fast names it in a one-line error, auto takes the torch loop."""
    assert [loss.name for loss in FastWLOEngine.losses] == ["margin", "prior", "rarity_anchor"]

    class Triplet(Loss):
        name = "triplet"

        @classmethod
        def from_setup(cls, setup):
            return cls()

    data = toy_pairs(2)
    register_loss(Triplet)
    try:
        with pytest.raises(ProbsentError, match="implements the losses margin, prior, rarity_anchor, not 'triplet'"):
            Trainer(_config(tmp_path, data, "a", engine="fast"), progress=False)
        assert Trainer(_config(tmp_path, data, "b", engine="auto"), progress=False).config.engine == "torch"
    finally:
        unregister_loss(Triplet.name)
    assert "triplet" not in LOSS_TYPES


@pytest.mark.slow
def test_rarity_anchor_keeps_terms_near_their_rarity_targets_and_both_engines_agree(tmp_path, toy_pairs) -> None:
    """``--rarity-anchor`` pulls each word's entropy term toward its ``--rarity-init`` start:
    after training with a large weight the terms sit closer to those targets (a hand-computed
    target: rarity_init x (log count - the average token's log count)) than without it, and
    the compiled engine follows the torch trainer on it."""
    from probsent.training.losses.rarity_anchor import rarity_anchor_targets

    data = toy_pairs(30)
    tables, trainers = {}, {}
    for anchor in (0.0, 10.0):
        for engine in ("torch", "fast"):
            trainer = Trainer(_config(tmp_path, data, f"{anchor}-{engine}", engine=engine, rarity_init=0.5,
                                      rarity_anchor=anchor, lr=0.05, max_steps=12), progress=False, log=lambda _: None)
            trainer.train()
            tables[anchor, engine], trainers[anchor, engine] = _tables(trainer), trainer
    for expected, got in zip(tables[10.0, "torch"], tables[10.0, "fast"]):
        assert (got - expected).abs().max() <= 1e-4 * expected.abs().max()
    counts = trainers[10.0, "fast"].word_counts
    log_counts = np.log(counts.astype(np.float64))
    by_hand = 0.5 * (log_counts - (counts * log_counts).sum() / counts.sum())
    np.testing.assert_allclose(rarity_anchor_targets(counts, 0.5, dim=50, scale_init_mean=1.0), by_hand, rtol=1e-6)
    gaps = {}
    for anchor in (0.0, 10.0):
        scale = tables[anchor, "fast"][0].double()
        terms = scale.abs().log().sum(-1).numpy()
        gaps[anchor] = float(np.abs(terms - by_hand).mean())
    assert gaps[10.0] < 0.5 * gaps[0.0], gaps


def test_rarity_anchor_needs_a_model_with_word_entropy_terms(tmp_path, toy_pairs) -> None:
    with pytest.raises(ProbsentError, match="--rarity-anchor needs a WLO"):
        Trainer(_config(tmp_path, toy_pairs(30), "lstm", model="lstmgaussian", rarity_anchor=1.0, max_steps=2),
                progress=False, log=lambda _: None)
