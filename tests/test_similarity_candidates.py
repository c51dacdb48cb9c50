"""Issue 34's round-A candidates against independent references: the pooled distance
(``--similarity-distance pooled``) in the loss and in mining, and the two-variance WLO
(``--model wlo2v``)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from probsent.errors import ProbsentError
from probsent.gaussian import expected_inner_product
from probsent.models import WLOTwoVariances, model_class
from probsent.models.base import Encoding
from probsent.models.similarity import paired_similarity
from probsent.training.fast.engine import FastWLOEngine
from probsent.training.mining import PRUNE_FROM, mine_negatives, mine_pooled_pruned, partners_of_stacked_pairs
from probsent.training.negatives import remine, similarity_ceilings
from tests.helpers import wlo_recurrence


def pooled_reference(m1, v1, m2, v2) -> float:
    """-1/2 sum_d [log 2 pi + log(v1_d + v2_d) + (m1_d - m2_d)^2 / mean_e(v1_e + v2_e)], float64."""
    total = v1 + v2
    return -0.5 * float(np.sum(np.log(2 * math.pi) + np.log(total)) + np.sum((m1 - m2) ** 2) / np.mean(total))


def test_the_pooled_distance_is_the_formula() -> None:
    rng = np.random.default_rng(0)
    m1, m2 = rng.normal(size=(2, 5, 7))
    x1, x2 = rng.normal(scale=3.0, size=(2, 5, 7))
    got = expected_inner_product(*(torch.from_numpy(a) for a in (m1, x1, m2, x2)), pooled=True).numpy()
    want = [pooled_reference(m1[i], np.exp(x1[i]), m2[i], np.exp(x2[i])) for i in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # one dimension: the pooled distance is the model's own
    own = expected_inner_product(*(torch.from_numpy(a[:, :1]) for a in (m1, x1, m2, x2)))
    pooled = expected_inner_product(*(torch.from_numpy(a[:, :1]) for a in (m1, x1, m2, x2)), pooled=True)
    np.testing.assert_allclose(pooled.numpy(), own.numpy(), rtol=1e-12)


def _brute_force(mean: np.ndarray, logvar: np.ndarray, partner: np.ndarray, ceiling=None) -> np.ndarray:
    """Per row, the largest float64 pooled d over the allowed columns (-inf where none)."""
    n, var = len(mean), np.exp(logvar)
    total = var[:, None, :] + var[None, :, :]
    d = -0.5 * (np.sum(np.log(2 * np.pi) + np.log(total), -1)
                + np.sum((mean[:, None, :] - mean[None, :, :]) ** 2, -1) / total.mean(-1))
    assert d[3, 5] == pytest.approx(pooled_reference(mean[3], var[3], mean[5], var[5]), rel=1e-12)
    d[np.arange(n), np.arange(n)] = -np.inf
    d[np.arange(n), partner] = -np.inf
    if ceiling is not None:
        d[d > ceiling[:, None]] = -np.inf
    return d


@pytest.mark.parametrize("spread", [0.5, 3.0])
def test_pooled_mining_finds_the_most_similar_allowed_sentence(spread: float) -> None:
    torch.manual_seed(1)
    n = 120
    mean = torch.randn(n, 6, dtype=torch.float64) * spread
    logvar = torch.randn(n, 6, dtype=torch.float64) * spread
    partner = partners_of_stacked_pairs(n // 2)
    d = _brute_force(mean.numpy(), logvar.numpy(), partner.numpy())
    for found in (mine_negatives(Encoding(mean, logvar), partner, pooled=True),  # the full search
                  mine_pooled_pruned(Encoding(mean, logvar), partner)):  # by bound and prune
        np.testing.assert_allclose(d[np.arange(n), found.numpy()], d.max(1), rtol=1e-12)
    # under a ceiling (--hardness-cap): the best column at most the ceiling, n where none is
    ceiling = torch.from_numpy(d.max(1) - np.abs(d.max(1)) * 0.02)
    ceiling[:3] = -1e9  # rows with no allowed column
    capped = _brute_force(mean.numpy(), logvar.numpy(), partner.numpy(), ceiling.numpy())
    found = mine_pooled_pruned(Encoding(mean, logvar), partner, ceiling).numpy()
    assert (found[:3] == n).all()
    np.testing.assert_allclose(capped[np.arange(3, n), found[3:]], capped.max(1)[3:], rtol=1e-12)


def test_the_hardness_cap_under_the_pooled_distance_remines_as_brute_force() -> None:
    torch.manual_seed(3)
    n = PRUNE_FROM + 40  # the bound-and-prune path
    mean, logvar = torch.randn(n, 5) * 2, torch.randn(n, 5) * 2
    encoded, partner = Encoding(mean, logvar), partners_of_stacked_pairs(n // 2)
    negative = mine_negatives(encoded, partner, pooled=True).numpy()
    ceiling = similarity_ceilings(encoded, partner.numpy(), 0.0, pooled=True)
    got = remine(encoded, partner.numpy(), negative, ceiling, pooled=True)
    d = _brute_force(mean.double().numpy(), logvar.double().numpy(), partner.numpy())
    value = lambda cols: d[np.arange(n), cols]  # noqa: E731
    flagged = value(negative) > ceiling + 1e-9 * np.abs(ceiling)
    capped = np.where(d > ceiling[:, None], -np.inf, d)
    assert flagged.any() and (got[~flagged] == negative[~flagged]).all()
    has = flagged & np.isfinite(capped.max(1))
    np.testing.assert_allclose(value(got)[has], capped.max(1)[has], rtol=1e-6)


def test_wlo2v_means_and_entropy_are_wlo_and_its_similarity_reads_the_second_scale() -> None:
    torch.manual_seed(2)
    model = WLOTwoVariances(12, dim=4, scale_init_std=0.3)
    ids = torch.tensor([[3, 5, 7, 2], [4, 9, 0, 0]])
    lengths = torch.tensor([4, 2])
    with torch.no_grad():
        out = model(ids, lengths)
        trained = model(ids, lengths, with_kl=True)
    kls = trained.kl.double().numpy()
    for row in range(2):
        words = ids[row, :lengths[row]]
        means, variances = wlo_recurrence(model.scale.weight[words], model.shift.weight[words])
        _, similarity_variances = wlo_recurrence(model.similarity_scale.weight[words], torch.zeros(len(words), 4))
        np.testing.assert_allclose(out.mean[row].double().numpy(), means[-1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out.logvar[row].double().exp().numpy(), variances[-1], rtol=1e-5)
        np.testing.assert_allclose(out.similarity_logvar[row].double().exp().numpy(), similarity_variances[-1],
                                   rtol=1e-5)
        # the prior: on every prefix, KL of (mean, Sigma) plus the variance part of (mean, Sigma_S)
        kl = sum(0.5 * np.sum(v + m ** 2 - 1 - np.log(v)) + 0.5 * np.sum(s - 1 - np.log(s))
                 for m, v, s in zip(means[1:], variances[1:], similarity_variances[1:]))
        assert kls[row] == pytest.approx(kl, rel=1e-5)
    np.testing.assert_allclose(trained.similarity_logvar.numpy(), out.similarity_logvar.numpy(), rtol=1e-6)
    # the similarity compares the second variances
    d = paired_similarity(out.index(torch.tensor([0])), out.index(torch.tensor([1])))
    v0, v1 = out.similarity_logvar.double().exp().numpy()
    m0, m1 = out.mean.double().numpy()
    want = -0.5 * float(np.sum(np.log(2 * np.pi) + np.log(v0 + v1) + (m0 - m1) ** 2 / (v0 + v1)))
    assert float(d) == pytest.approx(want, rel=1e-5)


def test_the_fast_engine_trains_neither_candidate(tmp_path) -> None:
    model = model_class("wlo2v")(10, dim=3)
    assert isinstance(model, WLOTwoVariances) and FastWLOEngine.refusal(model, "margin") is not None


def _train(tmp_path, *flags: str) -> None:
    from probsent.cli import main
    from tests.helpers import slice_of_pairs

    tmp_path.mkdir()
    data = slice_of_pairs(tmp_path / "pairs.tsv", 600)
    code = main(["train", "--data", str(data), "--out", str(tmp_path / "run"), "--max-steps", "6",
                 "--megabatch", "3", "--hardness-cap", "0", "--rarity-init", "0.3", "--rarity-anchor", "1",
                 "--no-validation", *flags])
    assert code == 0


@pytest.mark.slow
@pytest.mark.data
def test_both_candidates_train_and_load(tmp_path) -> None:
    import probsent

    _train(tmp_path / "pooled", "--similarity-distance", "pooled")
    _train(tmp_path / "split", "--model", "wlo2v")
    for run in ("pooled", "split"):
        model = probsent.load(tmp_path / run / "run" / "best")
        assert np.isfinite(model.specificity(["A dog runs in the park.", "It is good."])).all()


@pytest.mark.data
def test_the_fast_engine_refuses_the_pooled_loss_by_name(tmp_path, capsys) -> None:
    from probsent.cli import main
    from tests.helpers import slice_of_pairs

    data = slice_of_pairs(tmp_path / "pairs.tsv", 50)
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "run"), "--engine", "fast",
                 "--similarity-distance", "pooled", "--no-validation"]) != 0
    err = [line for line in capsys.readouterr().err.strip().splitlines() if "error" in line]
    assert len(err) == 1 and "pooled distance" in err[0] and "--engine torch" in err[0]
