"""Issue 34's round-A candidate that stays while its round runs, the two-variance WLO
(``--model wlo2v``), against independent references. (The pooled distance lost the round and
left the product; its tests are at the tag issue34-round-a.)"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from probsent.models import WLOTwoVariances, model_class
from probsent.models.similarity import paired_similarity
from probsent.training.fast.engine import FastWLOEngine
from tests.helpers import wlo_recurrence


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


def test_the_fast_engine_does_not_train_wlo2v() -> None:
    model = model_class("wlo2v")(10, dim=3)
    assert isinstance(model, WLOTwoVariances) and FastWLOEngine.refusal(model, "margin") is not None


@pytest.mark.slow
@pytest.mark.data
def test_wlo2v_trains_and_loads(tmp_path) -> None:
    import probsent
    from probsent.cli import main
    from tests.helpers import slice_of_pairs

    data = slice_of_pairs(tmp_path / "pairs.tsv", 600)
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "run"), "--max-steps", "6", "--megabatch", "3",
                 "--hardness-cap", "0", "--rarity-init", "0.3", "--rarity-anchor", "1", "--no-validation",
                 "--model", "wlo2v"]) == 0
    model = probsent.load(tmp_path / "run" / "best")
    assert np.isfinite(model.specificity(["A dog runs in the park.", "It is good."])).all()


def test_the_pooled_distance_left_with_a_line_naming_its_tag(capsys) -> None:
    from probsent.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["train", "--data", "x.tsv", "--out", "y", "--similarity-distance", "pooled"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1:]
    assert len(err) == 1 and "issue34-round-a" in err[0]
