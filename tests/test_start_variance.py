"""The start variance s_0 (z_0 ~ N(0, s_0 I)): the WLO math against sampling and a naive
recurrence, the unit change it makes (nothing training's loss sees moves), and every path
that reads it (the NumPy term table, export, the engines)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import probsent
from probsent import ProbsentError
from probsent.cli import main
from probsent.export import with_start_variance
from probsent.models import WLO
from probsent.settings import TrainConfig
from probsent.training.fast.engine import FastWLOEngine
from probsent.api import scoring_engine
from probsent.readouts.word_terms import WordTermTable
from probsent.training.losses import KLPrior, MarginLoss
from tests.helpers import wlo_recurrence

SENTENCES = ["the cat sat on the mat .", "a dog ran in the park", "the man plays guitar",
             "3 apples", "a woman sat", "the dog sat on a cat"]


def _wlo(start_variance: float = 1.0, seed: int = 0) -> WLO:
    torch.manual_seed(seed)
    model = WLO(12, dim=5, scale_init_std=0.3, shift_init_std=0.8, start_variance=start_variance)
    with torch.no_grad():
        model.scale.weight[:3] *= -1  # some negative scales
    return model


def test_the_distribution_is_what_sampling_z0_from_n0_s0i_gives() -> None:
    """Monte Carlo: z_0 ~ N(0, s_0 I) pushed through z_i = A_i (z_{i-1} + B_i) word by word."""
    model = _wlo(0.3)
    ids = [4, 7, 1, 9, 2]
    a, b = model.scale.weight.detach().double().numpy(), model.shift.weight.detach().double().numpy()
    rng = np.random.default_rng(0)
    z = rng.normal(0.0, math.sqrt(0.3), size=(400_000, 5))
    for w in ids:
        z = a[w] * (z + b[w])
    with torch.no_grad():
        mean, logvar = model.trajectory(torch.tensor([ids]), torch.tensor([len(ids)]), final_only=True)
    var = np.exp(logvar[0].double().numpy())
    assert np.allclose(mean[0].double().numpy(), z.mean(0), atol=6 * np.sqrt(var / len(z)).max())
    assert np.allclose(var, z.var(0), rtol=0.02)


def test_the_trajectory_equals_the_naive_recurrence_from_s0() -> None:
    model = _wlo(2.5)
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6], [5, 3, 5, 0, 0, 0, 0, 0]])
    lengths = torch.tensor([8, 3])
    mean, logvar = model.trajectory(ids, lengths)
    a, b = model.scale.weight.detach().double(), model.shift.weight.detach().double()
    for row, n in enumerate(lengths.tolist()):
        mus, variances = wlo_recurrence(a[ids[row, :n]], b[ids[row, :n]], 2.5)
        for i in range(n):
            assert np.allclose(mean[row, i].detach().double().numpy(), mus[i + 1], rtol=1e-5, atol=1e-5)
            assert np.allclose(logvar[row, i].detach().double().numpy(), np.log(variances[i + 1]), rtol=1e-5, atol=1e-5)


def test_the_prior_with_s0_sums_the_kl_after_every_word() -> None:
    """Training's forward with the prior."""
    model = _wlo(0.4)
    ids, lengths = torch.tensor([[3, 1, 4, 1], [2, 7, 0, 0]]), torch.tensor([4, 2])
    kl = model(ids, lengths, with_kl=True).kl.detach()
    a, b = model.scale.weight.detach().double(), model.shift.weight.detach().double()
    for row, n in enumerate(lengths.tolist()):
        mus, variances = wlo_recurrence(a[ids[row, :n]], b[ids[row, :n]], 0.4)
        total = float(0.5 * (variances[1:] + mus[1:] ** 2 - 1.0 - np.log(variances[1:])).sum())
        assert float(kl[row]) == pytest.approx(total, rel=1e-5)


def _kl_between(m1: np.ndarray, v1: np.ndarray, m2: np.ndarray, v2: np.ndarray) -> np.ndarray:
    """KL(N(m1, v1) || N(m2, v2)) of diagonal Gaussians, row by row, written out here."""
    return 0.5 * (v1 / v2 + (m2 - m1) ** 2 / v2 - 1.0 + np.log(v2 / v1)).sum(-1)


@pytest.mark.parametrize("start_variance", [0.25, 1 / 64, 9.0])
def test_a_new_unit_moves_nothing_training_sees(start_variance: float, make_model) -> None:
    """Means x c, variances x c^2 (c = sqrt(s_0)): every similarity and every entropy move by
    one constant (-dim log c and +dim log c), so every margin, every mined negative and every
    ranking is unchanged; the KL between sentences and every word's term do not move."""
    model = make_model("wlo", seed=2)
    other = with_start_variance(model, start_variance)
    c, dim = math.sqrt(start_variance), model.encoder.dim
    assert model.encoder.start_variance == 1.0  # the copy leaves the original as it was
    (m1, v1), (m2, v2) = model.encode(SENTENCES), other.encode(SENTENCES)
    assert np.allclose(m2, c * m1, rtol=1e-5, atol=1e-6) and np.allclose(v2, start_variance * v1, rtol=1e-5)
    similarity, moved = (m.similarity(SENTENCES, SENTENCES[:-1], measure="expected_inner_product")
                         for m in (model, other))  # N x M
    assert np.allclose(moved - similarity, -dim * math.log(c), atol=1e-3)
    assert np.array_equal(np.argsort(similarity, axis=1), np.argsort(moved, axis=1))
    assert np.allclose(other.entropy(SENTENCES) - model.entropy(SENTENCES), dim * math.log(c), atol=1e-9)
    pairs = [(i, j) for i in range(len(SENTENCES)) for j in range(len(SENTENCES))]
    first, second = zip(*pairs)
    kl = _kl_between(m1[list(first)], v1[list(first)], m1[list(second)], v1[list(second)])
    kl_moved = _kl_between(m2[list(first)], v2[list(first)], m2[list(second)], v2[list(second)])
    assert np.allclose(kl, kl_moved, rtol=1e-4, atol=1e-5)
    explained, explained_moved = model.explain(SENTENCES[0]), other.explain(SENTENCES[0])
    assert [w.entropy for w in explained.words] == [w.entropy for w in explained_moved.words]
    assert explained_moved.prior_entropy == pytest.approx(explained.prior_entropy + dim * math.log(c))


def test_set_start_variance_twice_is_one_change() -> None:
    model, direct = _wlo(), _wlo()
    model.set_start_variance(4.0)
    model.set_start_variance(0.5)
    direct.set_start_variance(0.5)
    assert torch.allclose(model.shift.weight, direct.shift.weight) and model.start_variance == 0.5
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="start_variance"):
            model.set_start_variance(bad)
        with pytest.raises(ValueError, match="start_variance"):
            WLO(5, dim=3, start_variance=bad)


@pytest.mark.slow
def test_export_writes_the_unit_and_every_reader_uses_it(tmp_path, make_model) -> None:
    model = make_model("wlo", seed=1)
    model.save(tmp_path / "full")
    assert main(["export", "--model", str(tmp_path / "full"), "--out", str(tmp_path / "small"),
                 "--start-variance", "0.0625", "--float16"]) == 0
    config = json.loads((tmp_path / "small" / "config.json").read_text())
    assert config["model"]["start_variance"] == 0.0625
    assert config["training"]["export"]["start_variance"] == 0.0625
    assert main(["export", "--model", str(tmp_path / "small"), "--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "config.json").read_text())
    assert again["model"]["start_variance"] == 0.0625  # kept by a plain copy
    assert again["training"]["export"]["source_export"]["start_variance"] == 0.0625  # and how it was made
    loaded, table = probsent.load(tmp_path / "small"), scoring_engine(probsent.load(tmp_path / "small")).term_table("test")
    assert isinstance(table, WordTermTable)  # the torch-free scoring table takes it
    expected = model.entropy(SENTENCES) + model.encoder.dim * math.log(0.25)
    assert np.allclose(loaded.entropy(SENTENCES), expected, atol=1e-2)  # float16 weights
    assert np.allclose(table.entropy(SENTENCES), loaded.entropy(SENTENCES), rtol=1e-12)


def test_a_model_file_without_the_setting_starts_from_n0i(tmp_path, make_model) -> None:
    """Models written before the setting existed read as N(0, I), by both readers."""
    model = make_model("wlo", seed=1)
    model.save(tmp_path / "old")
    path = tmp_path / "old" / "config.json"
    config = json.loads(path.read_text())
    del config["model"]["start_variance"]
    path.write_text(json.dumps(config))
    table = scoring_engine(probsent.load(tmp_path / "old")).term_table("test")
    assert isinstance(table, WordTermTable) and probsent.load(tmp_path / "old").encoder.start_variance == 1.0
    assert np.allclose(table.entropy(SENTENCES), model.entropy(SENTENCES), rtol=1e-12)


def test_export_refuses_a_bad_start_variance_or_model(tmp_path, make_model, capsys) -> None:
    make_model("wlo").save(tmp_path / "wlo")
    make_model("wordavg").save(tmp_path / "avg")
    assert main(["export", "--model", str(tmp_path / "wlo"), "--out", str(tmp_path / "x"),
                 "--start-variance", "-1"]) == 2
    assert "--start-variance must be a positive number" in capsys.readouterr().err
    assert main(["export", "--model", str(tmp_path / "avg"), "--out", str(tmp_path / "y"),
                 "--start-variance", "0.5"]) == 2
    assert "--start-variance needs a WLO model" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_the_start_variance_is_set_by_export_not_by_training(capsys) -> None:
    # the fast engine's kernels compute the recurrence from N(0, I) only, and training starts
    # there: probsent train has no --start-variance (export gives a trained WLO another unit)
    losses = [MarginLoss(1.0), KLPrior(1e-4)]
    assert FastWLOEngine.refusal(_wlo(0.5), losses) and FastWLOEngine.refusal(_wlo(1.0), losses) is None
    with pytest.raises(SystemExit) as stopped:
        main(["train", "--data", "x.tsv", "--out", "run", "--start-variance", "0.5"])
    assert stopped.value.code == 2
    assert "unrecognized arguments: --start-variance" in capsys.readouterr().err
    with pytest.raises(ProbsentError, match="--start-variance recorded, but not a setting"):
        TrainConfig.from_dict({"data": "x.tsv", "out": "run", "start_variance": 0.5})
