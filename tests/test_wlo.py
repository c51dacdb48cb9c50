"""The WLO closed form against a naive position-by-position recurrence written here."""
from __future__ import annotations

import math

import pytest
import torch

from probsent.gaussian import kl_to_standard_normal
from probsent.models import WLO
from tests.helpers import wlo_recurrence


def naive_trajectory(scale: torch.Tensor, shift: torch.Tensor, ids: list[int]):
    """mu_i and var_i after every word (tests.helpers.wlo_recurrence, float64), and the same
    recurrence on |A|, |B|: the size of the terms, which bounds rounding error."""
    means, variances = wlo_recurrence(scale[ids], shift[ids])
    magnitudes, _ = wlo_recurrence(scale[ids].abs(), shift[ids].abs())
    return tuple(torch.from_numpy(x[1:]) for x in (means, variances, magnitudes))


@pytest.fixture(params=["automatic", "log-space"])
def mean_path(request, monkeypatch) -> str:
    """Run a test with WLO's usual choice of path, and with the log-space path forced."""
    if request.param == "log-space":
        monkeypatch.setattr("probsent.models.wlo.DIRECT_RANGE", -1.0)
    return request.param


@pytest.mark.parametrize("scale_std,length", [(0.1, 12), (0.6, 40), (0.3, 350), (0.05, 1000)])
def test_closed_form_equals_naive_recurrence(scale_std: float, length: int, mean_path: str) -> None:
    torch.manual_seed(length)
    model = WLO(200, dim=16, scale_init_std=scale_std, shift_init_std=1.0)
    with torch.no_grad():  # make sure some scales are negative
        model.scale.weight[:20] *= -1
    lengths = [length, length // 2, 1, 3]
    ids = torch.randint(0, 200, (4, length))
    ids[:, 0] = torch.arange(4)  # negative scales occur in every sentence
    mean, logvar = model.trajectory(ids, torch.tensor(lengths))
    for row, n in enumerate(lengths):
        ref_mean, ref_var, size = naive_trajectory(model.scale.weight.detach(),
                                                   model.shift.weight.detach(), ids[row, :n].tolist())
        got = mean[row, :n].double()
        # error relative to the size of the summed terms (float32 rounding), never more
        assert torch.all((got - ref_mean).abs() <= 2e-4 * size + 1e-6), (row, n)
        assert torch.allclose(logvar[row, :n].double(), ref_var.log(), rtol=1e-5, atol=1e-4)
        # padding leaves the distribution as it was after the last word
        assert torch.equal(mean[row, n:], mean[row, n - 1].expand_as(mean[row, n:]))
        assert torch.equal(logvar[row, n:], logvar[row, n - 1].expand_as(logvar[row, n:]))


def test_padding_never_changes_a_result(mean_path: str) -> None:
    torch.manual_seed(0)
    model = WLO(50, dim=8, scale_init_std=0.4)
    ids = torch.randint(1, 50, (1, 9))
    short = model(ids, torch.tensor([9]), with_kl=True)
    padded_ids = torch.cat([ids, torch.randint(1, 50, (1, 30))], 1)  # garbage after the end
    padded = model(padded_ids, torch.tensor([9]), with_kl=True)
    assert torch.allclose(short.mean, padded.mean, rtol=1e-6, atol=1e-7)
    assert torch.equal(short.logvar, padded.logvar)
    assert torch.allclose(short.kl, padded.kl, rtol=1e-6)


def test_prior_sums_kl_after_every_operator() -> None:
    # with_kl=True is the paper's prior, on the whole distribution, after every word
    torch.manual_seed(1)
    model = WLO(30, dim=5, scale_init_std=0.3, shift_init_std=0.5)
    ids = torch.randint(0, 30, (2, 7))
    lengths = torch.tensor([7, 4])
    out = model(ids, lengths, with_kl=True)
    batched = model.encode_batches([(ids, lengths)], with_kl=True)
    assert torch.allclose(batched[0].kl, out.kl, rtol=1e-6)
    for row in range(2):
        n = int(lengths[row])
        ref_mean, ref_var, _ = naive_trajectory(model.scale.weight.detach(), model.shift.weight.detach(),
                                                ids[row, :n].tolist())
        expected = sum(0.5 * float((v + m * m - 1 - v.log()).sum()) for m, v in zip(ref_mean, ref_var))
        assert math.isclose(float(out.kl[row].detach()), expected, rel_tol=1e-4)
        assert math.isclose(float(kl_to_standard_normal(out.mean[row], out.logvar[row]).detach()),
                            0.5 * float((ref_var[-1] + ref_mean[-1] ** 2 - 1 - ref_var[-1].log()).sum()),
                            rel_tol=1e-4)


def test_entropy_is_a_sum_of_word_terms() -> None:
    torch.manual_seed(2)
    model = WLO(40, dim=6, scale_init_std=0.5)
    ids = torch.tensor([[3, 17, 3, 25]])
    out = model(ids, torch.tensor([4]))
    entropy = 0.5 * float((out.logvar + math.log(2 * math.pi * math.e)).sum())
    terms = model.word_entropy_terms()
    expected = 6 * 0.5 * math.log(2 * math.pi * math.e) + float(terms[[3, 17, 3, 25]].sum())
    assert math.isclose(entropy, expected, rel_tol=1e-5)


def test_gradients_are_finite_for_long_sentences(mean_path: str) -> None:
    torch.manual_seed(3)
    model = WLO(100, dim=10, scale_init_std=0.5, shift_init_std=1.0)
    ids = torch.randint(0, 100, (3, 400))
    out = model(ids, torch.tensor([400, 200, 5]), with_kl=True)
    (out.mean.sum() + out.logvar.sum() + out.kl.sum()).backward()
    for table in (model.scale, model.shift):  # word tables have sparse gradients
        assert torch.isfinite(table.weight.grad.coalesce().values()).all()


def test_final_only_path_equals_the_recurrence(mean_path: str) -> None:
    torch.manual_seed(5)
    model = WLO(80, dim=12, scale_init_std=0.4, shift_init_std=1.0)
    ids = torch.randint(0, 80, (3, 60))
    lengths = torch.tensor([60, 17, 2])
    out = model(ids, lengths)  # inference: no prior, only the last position is computed
    for row, n in enumerate(lengths.tolist()):
        ref_mean, ref_var, size = naive_trajectory(model.scale.weight.detach(), model.shift.weight.detach(),
                                                   ids[row, :n].tolist())
        assert torch.all((out.mean[row].double() - ref_mean[-1]).abs() <= 2e-4 * size[-1] + 1e-6)
        assert torch.allclose(out.logvar[row].double(), ref_var[-1].log(), rtol=1e-5, atol=1e-4)
    assert out.kl is None


def _dense_grads(model: WLO) -> list[torch.Tensor]:
    return [t.weight.grad.to_dense() if t.weight.grad.is_sparse else t.weight.grad
            for t in (model.scale, model.shift)]


def test_training_gradients_equal_the_naive_recurrence() -> None:
    # gradients of a loss on (final mean, final log-variance, summed KL) against float64
    # autograd through the position-by-position recurrence
    torch.manual_seed(13)
    model = WLO(40, dim=5, scale_init_std=0.4, shift_init_std=1.0)
    with torch.no_grad():
        model.scale.weight[:6] *= -1
    ids = torch.randint(0, 40, (3, 11))
    lengths = torch.tensor([11, 6, 2])
    out = model(ids, lengths, with_kl=True)
    (out.mean.sum() + 0.5 * out.logvar.sum() + 0.1 * out.kl.sum()).backward()
    scale = model.scale.weight.detach().double().requires_grad_()
    shift = model.shift.weight.detach().double().requires_grad_()
    total = torch.zeros((), dtype=torch.float64)
    for row, n in enumerate(lengths.tolist()):
        mu = torch.zeros(5, dtype=torch.float64)
        logvar = torch.zeros(5, dtype=torch.float64)
        for w in ids[row, :n].tolist():
            mu = scale[w] * (mu + shift[w])
            logvar = logvar + 2 * scale[w].abs().log()
            total = total + 0.1 * 0.5 * (logvar.exp() + mu ** 2 - 1 - logvar).sum()
        total = total + mu.sum() + 0.5 * logvar.sum()
    total.backward()
    for got, expected in zip(_dense_grads(model), (scale.grad, shift.grad)):
        assert torch.allclose(got.double(), expected, rtol=1e-4, atol=1e-5 * float(expected.abs().max()))
