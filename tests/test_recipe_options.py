"""Issue 11's pieces against independent references: the whole batch loss against a naive
loop over the paper's formulas, false negatives against Python sets and a brute-force search,
the diagnostics on hand-made models, the rarity initialization, --min-count, and the
shorter-specific pair set."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from probsent.models.batching import encode_by_length
from probsent.evaluation.baselines import LengthScorer
from probsent.evaluation.tables import load_shorter_specific, shorter_specific_experiment
from probsent.models import WLO, KLPrior
from probsent.models.base import Encoding
from probsent.text.tokenize import tokenize
from probsent.training.config import TrainConfig
from probsent.training.diagnostics import (DiagnosticSample, prior_gradient_share,
                                           word_term_statistics)
from probsent.training.false_negatives import (false_negative_mask, remine, shared_word_counts,
                                               similarity_ceilings, word_sets)
from probsent.training.fast.false_negative_kernels import remine_fast
from probsent.training.loss import probabilistic_batch_loss
from probsent.training.trainer import Trainer, rarity_terms


def _naive_gaussian(a: np.ndarray, b: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(mean, variance) after every word, by the recurrence z_i = A_i (z_{i-1} + B_i), in float64."""
    mean, var, out = np.zeros(a.shape[1]), np.ones(a.shape[1]), []
    for a_i, b_i in zip(a, b):
        mean, var = a_i * (mean + b_i), a_i * var * a_i
        out.append((mean, var))
    return out


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
    margin_part, prior_part = probabilistic_batch_loss(out, batch, margin, prior)

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


def test_shared_words_and_false_negatives_match_python_sets() -> None:
    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 8, 40)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 12, offsets[-1])  # id 0 (<unk>) never counts
    words = word_sets(ids, offsets, np.arange(40))
    sets = [set(ids[offsets[k]:offsets[k + 1]].tolist()) - {0} for k in range(40)]
    a, b = rng.integers(0, 40, 100), rng.integers(0, 40, 100)
    assert shared_word_counts(words, a, b).tolist() == [len(sets[i] & sets[j]) for i, j in zip(a, b)]
    partner = np.concatenate([np.arange(20) + 20, np.arange(20)])
    negative = (np.arange(40) + 3) % 40
    expected = [len(sets[i] & sets[negative[i]]) >= max(1, len(sets[i] & sets[partner[i]])) for i in range(40)]
    assert false_negative_mask(words, partner, negative).tolist() == expected


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


def test_remine_is_the_brute_force_argmax_over_allowed_sentences() -> None:
    ids, offsets, encoded, partner, negative = _random_problem(60, 2)
    n = 60
    sets = [set(ids[offsets[k]:offsets[k + 1]].tolist()) for k in range(n)]
    found = remine(encoded, partner, negative, words=word_sets(ids, offsets, np.arange(n)))
    mean, var = encoded.mean.double().numpy(), encoded.logvar.double().exp().numpy()
    for i in range(n):
        limit = max(1, len(sets[i] & sets[partner[i]]))
        if len(sets[i] & sets[negative[i]]) < limit:
            assert found[i] == negative[i]  # not a false negative: kept
            continue
        allowed = [j for j in range(n) if j not in (i, partner[i]) and len(sets[i] & sets[j]) < limit]
        if not allowed:
            assert found[i] == negative[i]
            continue
        best = max(allowed, key=lambda j: _naive_eip(mean[i], var[i], mean[j], var[j]))
        assert found[i] == best


def test_hardness_cap_is_the_brute_force_argmax_under_each_ceiling() -> None:
    ids, offsets, encoded, partner, negative = _random_problem(60, 4)
    n, cap = 60, 0.5
    mean, var = encoded.mean.double().numpy(), encoded.logvar.double().exp().numpy()
    eip = lambda i, j: _naive_eip(mean[i], var[i], mean[j], var[j])  # noqa: E731
    ceiling = similarity_ceilings(encoded, partner, cap)
    assert ceiling == pytest.approx([eip(i, partner[i]) + cap for i in range(n)], rel=1e-5)
    found = remine(encoded, partner, negative, ceiling=ceiling)
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


def test_hardness_cap_and_false_negatives_together() -> None:
    """Both rules at once: a replacement is neither a false negative nor above the ceiling."""
    ids, offsets, encoded, partner, negative = _random_problem(80, 5)
    words = word_sets(ids, offsets, np.arange(80))
    ceiling = similarity_ceilings(encoded, partner, 0.0)
    found = remine(encoded, partner, negative, words=words, ceiling=ceiling)
    sets = [set(ids[offsets[k]:offsets[k + 1]].tolist()) for k in range(80)]
    mean, var = encoded.mean.double().numpy(), encoded.logvar.double().exp().numpy()
    for i in np.flatnonzero(found != negative):
        limit = max(1, len(sets[i] & sets[partner[i]]))
        assert len(sets[i] & sets[found[i]]) < limit
        assert _naive_eip(mean[i], var[i], mean[found[i]], var[found[i]]) <= ceiling[i] + 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("rules", ["words", "ceiling", "both"])
def test_compiled_remine_equals_the_reference(rules: str) -> None:
    ids, offsets, encoded, partner, negative = _random_problem(400, 3)
    words = word_sets(ids, offsets, np.arange(400)) if rules != "ceiling" else None
    ceiling = similarity_ceilings(encoded, partner, 1.0) if rules != "words" else None
    expected = remine(encoded, partner, negative, words=words, ceiling=ceiling)
    assert (expected != negative).any()
    assert np.array_equal(remine_fast(encoded, partner, negative, words, ceiling), expected)


def test_word_term_statistics_on_hand_made_terms() -> None:
    model = WLO(26, dim=2)
    terms = np.arange(25, dtype=np.float64) / 10.0  # word w (id w + 1) has term w / 10
    with torch.no_grad():
        model.scale.weight[1:] = torch.exp(torch.from_numpy(terms) / 2)[:, None].float()
    counts = np.concatenate([[7], 1000 - np.arange(25)])  # the largest terms are the rarest words
    stats = word_term_statistics(model, counts)
    assert stats["term_count_spearman"] == pytest.approx(-1.0)
    assert stats["frequent_term"] == pytest.approx(np.mean(terms[:20]), abs=1e-5)
    rarest_last = np.concatenate([[7], counts[1:][::-1]])
    assert word_term_statistics(model, rarest_last)["term_count_spearman"] == pytest.approx(1.0)


def test_prior_gradient_share_is_the_norm_ratio_of_the_two_gradients() -> None:
    torch.manual_seed(3)
    rng = np.random.default_rng(3)
    model = WLO(20, dim=3)
    lengths = rng.integers(2, 6, 16)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(1, 20, offsets[-1])
    sample = DiagnosticSample(np.arange(8), 8)
    share = prior_gradient_share(model, ids, offsets, sample, 1.0, 0.01, KLPrior(), 8)["prior_gradient_share"]
    doubled = prior_gradient_share(model, ids, offsets, sample, 1.0, 0.02, KLPrior(), 8)["prior_gradient_share"]
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


def test_rarity_terms_and_their_initialization() -> None:
    counts = np.array([5, 1000, 100, 10, 1])
    terms = rarity_terms(counts, 0.2)
    average = np.sum(counts * np.log(counts)) / counts.sum()
    assert terms == pytest.approx(0.2 * (np.log(counts) - average), abs=1e-6)
    assert np.sum(counts * terms) == pytest.approx(0.0, abs=1e-3)  # the average token adds nothing
    model = WLO(5, dim=4)
    before = model.word_entropy_terms().detach().clone()
    model.shift_entropy_terms(torch.from_numpy(terms))
    assert model.word_entropy_terms().detach().numpy() == pytest.approx((before + torch.from_numpy(terms)).numpy(), abs=1e-5)


def test_min_count_and_rarity_init_in_a_training_run(tmp_path, toy_pairs) -> None:
    data = toy_pairs(3)
    lines = (data.read_text() + "zebra quartz\tzebra onyx\ttoy\n")
    data.write_text(lines)
    config = TrainConfig(data=str(data), out=str(tmp_path / "run"), min_count=2, max_steps=2,
                         batch_size=4, megabatch=2, rarity_init=0.3, eval_every=1)
    trainer = Trainer(config, progress=False)
    assert "zebra" in trainer.vocab.words  # seen twice
    assert "quartz" not in trainer.vocab.words and "onyx" not in trainer.vocab.words  # seen once
    assert "guitar" in trainer.vocab.words  # 3 x 2 times
    trainer.train()
    record = json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[0])
    for key in ("term_count_spearman", "frequent_term", "negatives_sharing_more", "active_hinge",
                "prior_gradient_share"):
        assert math.isfinite(record[key])


@pytest.mark.parametrize("engine", ["torch", "fast"])
@pytest.mark.parametrize("mine_by,cap", [("means", None), ("loss", 0.0), ("means", 0.1)])
def test_trainer_negatives_follow_mine_by_and_the_cap(tmp_path, toy_pairs, engine, mine_by, cap) -> None:
    """The negatives a run mines, checked by brute force on the model's own encodings: the
    argmax of cosine of the means (``--mine-by means``) or of the expected inner product,
    among sentences at most ``cap`` above the partner (``--hardness-cap``)."""
    config = TrainConfig(data=str(toy_pairs(3)), out=str(tmp_path / "run"), batch_size=8, megabatch=3,
                         engine=engine, mine_by=mine_by, hardness_cap=cap, shift_init_std=1.0)
    trainer = Trainer(config, progress=False)
    count = 8  # the eight distinct pairs (toy_pairs repeats them)
    sentences = np.concatenate([2 * np.arange(count), 2 * np.arange(count) + 1])
    negative = trainer._negatives(sentences, count)
    with torch.no_grad():
        encoded = encode_by_length(trainer.encoder, trainer.ids, trainer.corpus.offsets, sentences, 8)
    mean, var = encoded.mean.double().numpy(), encoded.logvar.double().exp().numpy()
    cosine = lambda i, j: mean[i] @ mean[j] / np.linalg.norm(mean[i]) / np.linalg.norm(mean[j])  # noqa: E731
    eip = lambda i, j: _naive_eip(mean[i], var[i], mean[j], var[j])  # noqa: E731
    mined_by = cosine if mine_by == "means" else eip
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


def test_shorter_specific_set() -> None:
    specific, vague = load_shorter_specific()
    assert len(specific) >= 50
    assert all(len(tokenize(s)) < len(tokenize(v)) for s, v in zip(specific, vague))
    assert shorter_specific_experiment(LengthScorer()).accuracy == 0.0

    class Digits:
        def specificity(self, sentences):
            return np.array([sum(c.isdigit() for c in s) for s in sentences], dtype=float)

    expected = 100.0 * np.mean([sum(c.isdigit() for c in s) > sum(c.isdigit() for c in v)
                                for s, v in zip(specific, vague)])
    assert shorter_specific_experiment(Digits()).accuracy == pytest.approx(expected)


def test_recipe_goals_are_computed_from_the_numbers() -> None:
    from experiments.recipe_summary import Check, goals

    seven = lambda *values: [list(v) for v in values]  # noqa: E731 - one list of seed values per column
    paper = seven([74, 76], [50], [71], [60], [65], [62], [95])
    wordsum = seven([73], [40], [66], [56], [70], [], [])
    length = seven([73], [45], [70], [59], [], [], [0])
    ours = seven([80, 81], [50, 52], [75, 76], [65, 66], [65], [62], [95, 91])
    checked = goals(paper, wordsum, length, ours)
    assert checked["wordsum"][0] == Check(True, (75.0, 73.0))
    assert [c.met for c in checked["length"]] == [True, True, True, True]
    assert checked["stsb"] == Check(True, (65.0, 62.0))  # concat 65 >= max(60, means 62)
    margins_and_sds = checked["beats_length"].values  # margins 7.5 / 6 / 5.5 / 6.5 over sds 0.71 / 1.41 / ...
    assert checked["beats_length"].met and margins_and_sds[:4] == (7.5, 6.0, 5.5, 6.5)
    assert margins_and_sds[4:] == pytest.approx([0.7071, 1.4142, 0.7071, 0.7071], abs=1e-4)
    assert checked["shorter_specific"] == Check(True, (93.0,))
    worse = goals(seven([70], [50], [71], [60], [55], [62], [10]), wordsum, length, ours)
    assert worse["wordsum"][0] == Check(False, (70.0, 73.0)) and worse["stsb"].met is False
    unmeasured = goals(paper, wordsum, length, seven([80], [50], [75], [65], [], [], []))
    assert unmeasured["beats_length"].met is False and unmeasured["shorter_specific"].met is None


def test_loose_then_close_trains_later_epochs_on_the_close_pairs_only(tmp_path) -> None:
    """``--then-min-overlap``: the first epoch shuffles every pair, later ones only the pairs
    whose word sets overlap at least the threshold (Jaccard by Python sets, hand-made cases)."""
    rows = []
    for k in range(12):  # identical sides: overlap 1
        rows.append(f"red fox {k} jumps\tred fox {k} jumps")
    for k in range(9):  # {a b c} vs {a b d}: 2 / 4 = 0.5
        rows.append(f"blue cat w{k}\tblue cat z{k}")
    for k in range(15):  # {a b c d} vs {a e f g}: 1 / 7
        rows.append(f"green owl q{k} sings\tgreen sky r{k} falls")
    for k in range(11):  # nothing shared
        rows.append(f"one two t{k}\tthree four u{k}")
    data = tmp_path / "pairs.tsv"
    data.write_text("\n".join(rows) + "\n")

    def jaccard(a: str, b: str) -> float:
        x, y = set(tokenize(a)), set(tokenize(b))
        return len(x & y) / len(x | y)

    close_texts = {row for row in rows if jaccard(*row.split("\t")) >= 0.4}
    assert len(close_texts) == 12 + 9
    settings = dict(data=str(data), out=str(tmp_path / "run"), batch_size=5, megabatch=2, epochs=3,
                    then_min_overlap=0.4, eval_every=1000)
    trainer = Trainer(TrainConfig(**settings), progress=False)
    corpus = trainer.corpus

    def text(pair: int) -> str:
        sides = [" ".join(corpus.words[t] for t in corpus.tokens[corpus.offsets[2 * pair + s]:
                                                               corpus.offsets[2 * pair + s + 1]]) for s in (0, 1)]
        return "\t".join(sides)

    first, second, third = (trainer._epoch_order(epoch) for epoch in range(3))
    assert sorted(first) == list(range(len(rows)))
    assert {text(p) for p in second} == close_texts and len(second) == len(close_texts)
    assert sorted(second) == sorted(third) and list(second) != list(third)  # reshuffled
    state = trainer.train()
    # mega-batches of 10 pairs, 2 steps each: 47 pairs -> 10+10+10+10+7 (10 steps); 21 close
    # pairs -> 10+10 (4 steps) and a lone pair, which has nothing to contrast with and is skipped
    assert state["step"] == 10 + 4 + 4
    with pytest.raises(ValueError, match="--then-min-overlap applies from the second epoch on"):
        TrainConfig(**{**settings, "epochs": 1})


def test_round_3_candidates_and_what_earlier_rounds_keep() -> None:
    """Round 3 adds no combination; both earlier combinations compete; a selected run of an
    earlier round is neither trained nor evaluated again (its round's records are used)."""
    from experiments.protocol import candidate_names, candidates, earlier_round_of, evaluation_dir, extra_runs
    from experiments.rounds import ROUNDS, round_3

    round_1, round_2, round_3_ = ROUNDS[1], ROUNDS[2], ROUNDS[3]
    names = [run.name for run in candidates(round_3_)]
    assert len(names) == len(set(names))
    for round_ in ROUNDS.values():  # the names read from no log are the candidates' own
        assert candidate_names(round_) == [run.name for run in candidates(round_)]
    assert {"r11-combined", "r12-combined"} <= set(names) and not any(n.startswith("r13-combined") for n in names)
    assert {run.name for members in round_3.ROUND.new_families.values() for run in members} <= set(names)
    assert earlier_round_of(round_3_, "r12-combined") is round_2
    assert earlier_round_of(round_3_, "r11-reference") is round_1
    assert earlier_round_of(round_3_, "r13-cap0-rarity0.3") is None
    selection = {"paper": "r13-cap0-rarity0.3", "ours": "r12-combined"}
    assert [run.name for run in extra_runs(round_3_, selection)] == ["r13-cap0-rarity0.3-seed2",
                                                                     "r13-cap0-rarity0.3-seed3"]
    assert evaluation_dir(round_3_, "r12-combined-seed2") == round_2.results_dir / "r12-combined-seed2"


def test_the_round_files_give_the_recorded_candidates_and_selections() -> None:
    """Every round's candidates (names, flags, notes), its combination and its two selections,
    computed from the round files and the committed validation logs, are those its dev.json
    recorded when the round was run."""
    import json

    from experiments.protocol import candidates, combined_run, select
    from experiments.rounds import ROUNDS

    for round_ in ROUNDS.values():
        recorded = json.loads((round_.results_dir / "dev.json").read_text(encoding="utf-8"))
        runs = candidates(round_)
        assert [(r.name, r.note) for r in runs] == [(c["name"], c["note"]) for c in recorded["candidates"]]
        assert [json.loads(json.dumps(r.flags)) for r in runs] == [c["flags"] for c in recorded["candidates"]]
        assert select(round_) == recorded["selection"]
        assert (combined_run(round_).note if round_.combined_name else None) == recorded["combined"]


def test_term_by_rank_band_on_a_hand_made_model() -> None:
    from probsent.training.diagnostics import term_by_rank_band

    model = WLO(151, dim=2)
    with torch.no_grad():  # word w (rank w) gets |A| = e^(w/2) in both dimensions: term w
        model.scale.weight.copy_(torch.exp(torch.arange(151, dtype=torch.float64) / 2)[:, None].repeat(1, 2))
    bands = term_by_rank_band(model)
    assert list(bands) == ["1-20", "21-100", "101-1000"]  # ranks stop at 150
    assert bands["1-20"] == pytest.approx(10.5, rel=1e-5)  # mean of 1..20
    assert bands["21-100"] == pytest.approx(60.5, rel=1e-5)
    assert bands["101-1000"] == pytest.approx(125.5, rel=1e-5)  # mean of 101..150


def test_across_rounds_correlations_on_hand_made_candidates() -> None:
    from experiments.recipe_summary import across_rounds

    def candidate(hinge: float, frequent: float, news: float, sts: float) -> dict:
        return {"sts17": sts, "news_dev": news, "diagnostics": {"active_hinge": hinge, "frequent_term": frequent}}

    # the frequent-word term grows with the hinge share and shrinks as news-dev grows: ranks +1 and -1
    runs = [candidate(0.5, -1.0, 70.0, 0.70), candidate(0.7, -0.2, 66.0, 0.74), candidate(0.9, 0.4, 61.0, 0.72)]
    found = across_rounds({"candidates": [*runs, dict(runs[1])]})
    assert found["distinct"] == 3 and found["repeats"] == 1
    assert found["hinge"] == pytest.approx(1.0) and found["news"] == pytest.approx(-1.0)
    assert found["sts"] == pytest.approx(0.5)


def test_sentence_scale_of_a_hand_made_model() -> None:
    # one word, A = (2, 0.5) and B = (1, 2): "x" has mean (2, 1), "x x" has mean A (mean + B) =
    # (6, 1.5); log-variances 2 log|A| per word: (log 4, log 1/4) and (log 16, log 1/16)
    from probsent.api import SentenceModel
    from probsent.data.vocab import Vocabulary
    from probsent.training.diagnostics import sentence_scale

    encoder = WLO(2, dim=2)
    with torch.no_grad():
        encoder.scale.weight[1] = torch.tensor([2.0, 0.5])
        encoder.shift.weight[1] = torch.tensor([1.0, 2.0])
    model = SentenceModel(encoder, Vocabulary(["<unk>", "x"]))
    scale = sentence_scale(*model.encode(["x", "x x"], log_variance=True))
    assert scale["mean_norm"] == pytest.approx((math.hypot(2, 1) + math.hypot(6, 1.5)) / 2, rel=1e-6)
    assert scale["log_variance"] == pytest.approx(0.0, abs=1e-6)  # log 4 and log 1/4 cancel
    encoder_b = WLO(2, dim=2)
    with torch.no_grad():
        encoder_b.scale.weight[1] = torch.tensor([0.5, 0.5])
    scale_b = sentence_scale(*SentenceModel(encoder_b, Vocabulary(["<unk>", "x"])).encode(["x", "x x"],
                                                                                          log_variance=True))
    assert scale_b["log_variance"] == pytest.approx((2 * math.log(0.25) + 2 * math.log(1 / 16)) / 4, rel=1e-6)


def test_band_rows_carry_the_sentence_scale_where_recorded() -> None:
    from experiments.recipe_summary import band_rows

    bands = {"1-20": -0.1, "21-100": -0.5}
    dev = {"candidates": [{"name": "old", "term_bands": bands},
                          {"name": "new", "term_bands": bands, "scale": {"mean_norm": 3.456, "log_variance": -0.2345}},
                          {"name": "hidden", "term_bands": {"101-1000": 1.0}}]}
    labels, scaled, rows = band_rows(dev, {"old", "new"})
    assert labels == ["1-20", "21-100"] and scaled
    assert rows == [("old", [-0.1, -0.5], (None, None)), ("new", [-0.1, -0.5], (3.456, -0.2345))]
    assert band_rows({"candidates": dev["candidates"][:1]}, {"old"})[1] is False


def test_seed_check_contrasts_on_hand_made_records() -> None:
    from experiments.recipe_summary import seed_check_contrasts, seed_check_values
    from experiments.rounds import ROUNDS

    def record(sts: float, news: float, norm: float) -> dict:
        return {"sts17": sts, "news_dev": news, "diagnostics": {"term_count_spearman": 0.5, "frequent_term": -0.1,
                                                                "active_hinge": 0.7},
                "scale": {"mean_norm": norm, "log_variance": -0.2}}

    base = [record(0.70, 60.0, 3.0), record(0.72, 62.0, 3.0), record(0.74, 64.0, 3.0)]  # sd 0.02, 2.0, 0
    other = [record(0.75, 60.0, 4.0), record(0.76, 61.0, 4.0), record(0.77, 62.0, 4.0)]  # sd 0.01, 1.0, 0
    round_ = dataclasses.replace(ROUNDS[1], seed_checks=("base", "other"))
    values = seed_check_values(round_, {"other": other, "base": base})  # the round's order, not the file's
    assert list(values) == ["base", "other"] and values["base"][1] == [60.0, 62.0, 64.0]
    contrast = seed_check_contrasts(values)["other"]
    # STS +0.040 beats both sds (0.02, 0.01); news -1.0 does not (sd 2.0); the norm's +1.00 does (sd 0)
    assert contrast["STS17 r (dev)"] == (pytest.approx(0.04), True)
    assert contrast["News-train acc (dev)"] == (pytest.approx(-1.0), False)
    assert contrast["‖mean‖"] == (pytest.approx(1.0), True)
    assert contrast["frequent-word term"] == (pytest.approx(0.0), False)


@pytest.mark.slow
def test_eval_diagnostics_use_the_prior_the_model_trained_with(tmp_path, toy_pairs) -> None:
    # a model trained with --prior-on variance: `probsent eval`'s prior gradient share is that
    # of the variance prior, which differs from the paper's KL's on the same weights
    import probsent
    from probsent.evaluation.suite import model_diagnostics
    from probsent.evaluation.training_corpus import load_training_corpus

    data = toy_pairs(6)
    config = TrainConfig(data=str(data), out=str(tmp_path / "run"), max_steps=3, batch_size=4, megabatch=2,
                         eval_every=3, prior_on="variance", prior_weight=0.1)
    Trainer(config, progress=False, log=lambda _: None).train()
    trained = probsent.load(tmp_path / "run" / "best")
    assert not hasattr(trained.encoder, "prior_on_mean")  # a training setting: not on the model
    corpus = load_training_corpus(trained.config).corpus
    got = model_diagnostics(trained, corpus)["prior_gradient_share"]
    as_paper = probsent.load(tmp_path / "run" / "best")
    as_paper.config["training"]["config"]["prior_on"] = "distribution"  # the same weights, the paper's KL
    other = model_diagnostics(as_paper, corpus)["prior_gradient_share"]
    assert got > 0 and other > 0 and got != pytest.approx(other, rel=1e-3)


def test_seed_checks_train_a_run_unless_its_last_checkpoint_says_finished(tmp_path, monkeypatch) -> None:
    import experiments.recipe_records as records

    monkeypatch.setattr(records, "RUNS_DIR", tmp_path)
    for name, state in (("done", {"finished": True}), ("cut-off", {"finished": False})):
        (tmp_path / name / "last").mkdir(parents=True)
        (tmp_path / name / "last" / "trainer_state.json").write_text(json.dumps({"step": 9, **state}))
    (tmp_path / "log-only").mkdir()
    (tmp_path / "log-only" / "log.jsonl").write_text("{}\n")  # a log is not a finished run
    assert [records.finished(n) for n in ("done", "cut-off", "log-only", "absent")] == [True, False, False, False]


def test_untrained_news_dev_rebuilds_the_initialization_the_trainer_scored(tmp_path, monkeypatch, data_dir,
                                                                          toy_pairs) -> None:
    # the trainer scores the model before its first step; for a run trained before it did,
    # untrained_news_dev rebuilds that model from the recorded settings (rarity init: from the counts)
    import experiments.recipe_records as records
    from probsent.cli import main

    monkeypatch.setenv("PROBSENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(records, "RUNS_DIR", tmp_path / "runs")
    assert main(["train", "--data", str(toy_pairs(6)), "--out", str(tmp_path / "runs" / "toy"), "--batch-size", "4",
                 "--megabatch", "2", "--max-steps", "2", "--eval-every", "2", "--rarity-init", "0.3",
                 "--data-dir", str(data_dir), "--quiet"]) == 0
    state_file = tmp_path / "runs" / "toy" / "last" / "trainer_state.json"
    state = json.loads(state_file.read_text())
    measured = state["untrained_news_train_accuracy"]
    assert 40.0 < measured < 80.0 and records.untrained_news_dev("toy") == measured
    del state["untrained_news_train_accuracy"]
    state_file.write_text(json.dumps(state))
    assert records.untrained_news_dev("toy") == pytest.approx(measured, abs=1e-9)


def test_length_news_dev_is_the_best_threshold_on_token_counts(data_dir) -> None:
    import experiments.recipe_records as records
    from probsent.evaluation.datasets import as_data_dir, load_news_train

    news = load_news_train(as_data_dir(str(data_dir)))
    counts = np.array([len(tokenize(s)) for s in news.sentences])
    brute = max(np.mean((counts > t) == news.specific) for t in np.concatenate([[-1], np.unique(counts)]))
    assert records.length_news_dev() == pytest.approx(100 * brute, abs=1e-9)


def test_training_gains_of_the_shown_runs_that_recorded_them() -> None:
    from experiments.recipe_summary import training_gains

    dev = {"candidates": [{"name": "a", "news_dev": 65.7, "untrained_news_dev": 66.85},
                          {"name": "b", "news_dev": 67.8, "untrained_news_dev": 66.4},
                          {"name": "hidden", "news_dev": 99.0, "untrained_news_dev": 1.0},
                          {"name": "c", "news_dev": 70.0}]}  # not measured: not shown
    gains = training_gains(dev, {"a", "b", "c"})
    assert [(name, untrained, trained) for name, untrained, trained, _ in gains] == [("a", 66.85, 65.7),
                                                                                     ("b", 66.4, 67.8)]
    assert [gain for *_, gain in gains] == pytest.approx([-1.15, 1.4])
    assert training_gains({"candidates": [{"name": "c", "news_dev": 70.0}]}, {"c"}) == []
