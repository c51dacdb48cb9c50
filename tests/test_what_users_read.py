"""What users read around the score: the percentile for the sentence's length, coverage and
accent folding, similarity read-outs a sentence is closest to itself under, the blank / 2-D /
save cases; each against an independent reference (a naive count, a hand loop, scipy)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import probsent
from probsent.cli import main
from probsent.errors import InvalidValueError, ProbsentError
from probsent.readouts.percentiles import PercentileTable, build_table, reference_sample
from probsent.api import scoring_engine
from probsent.text.tokenize import tokenize

GERMAN = "Der Hund läuft schnell über die Straße."
EMOJI = "😀 🎉 🙈"


@pytest.fixture(scope="module")
def shipped():
    return probsent.load()


# -- the percentile for the sentence's length --------------------------------------------------

def naive_percentile(score: float, count: int, sample_scores, sample_counts, starts) -> float:
    """The share of reference sentences in the count's bin scoring lower (ties half), by a loop."""
    def bin_of(n):
        return max([i for i, s in enumerate(starts) if s <= n] or [0])

    same = [s for s, n in zip(sample_scores, sample_counts) if bin_of(n) == bin_of(count)]
    return 100.0 * (sum(s < score for s in same) + 0.5 * sum(s == score for s in same)) / len(same)


def test_percentile_is_exact_on_the_reference_sample(make_model, pairs_slice) -> None:
    model = make_model("wlo", seed=5)
    sample = reference_sample(pairs_slice(3000), per_source=400)
    scores, counts = np.round(model.specificity(sample), 4), scoring_engine(model).token_counts(sample)
    table = build_table(scores, counts, "test", per_bin=10_000, min_per_bin=30)
    got = table.percentile(scores, counts)
    for i in range(0, len(sample), 37):
        assert got[i] == pytest.approx(naive_percentile(scores[i], counts[i], scores, counts, table.starts)), i


def test_percentile_is_monotone_within_a_length_and_defined_for_every_length(shipped) -> None:
    table = shipped.percentiles
    scores = np.linspace(0.0, 120.0, 400)
    for count in (1, 2, 7, 30, table.starts[-1], 500, 10_000):  # below the first bin, inside, past the last
        values = table.percentile(scores, np.full(len(scores), count))
        assert np.isfinite(values).all() and ((values >= 0) & (values <= 100)).all()
        assert (np.diff(values) >= 0).all()
    assert np.isnan(table.percentile(np.array([40.0, np.nan]), np.array([0, 5]))).all()  # no tokens, no score


def test_percentile_of_the_documented_sentences(shipped, capsys) -> None:
    assert main(["specificity", "--percentile", "Einstein published relativity in 1905.", "It is good."]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert float(rows[0][1]) > 90 and float(rows[1][1]) < 50
    assert shipped.percentile("Einstein published relativity in 1905.") == pytest.approx(float(rows[0][1]), abs=1e-4)


def test_a_damaged_percentile_table_is_one_line(tmp_path) -> None:
    for content in ("{", json.dumps({"reference": "x", "starts": [3, 2], "scores": [[1.0], [2.0]]}),
                    json.dumps({"reference": "x", "starts": [1], "scores": [[2.0, 1.0]]}), "[" * 100_000):
        (tmp_path / "percentiles.json").write_text(content)
        with pytest.raises(InvalidValueError, match="percentiles.json: damaged percentile table"):
            PercentileTable.load(tmp_path)


def test_a_model_without_a_table_names_the_command(tmp_path, make_model, capsys) -> None:
    make_model("wlo").save(tmp_path / "m")
    assert main(["specificity", "--model", str(tmp_path / "m"), "--percentile", "a cat"]) == 2
    assert "probsent calibrate --model" in capsys.readouterr().err


# -- coverage and folding ------------------------------------------------------------------------

def test_text_the_model_cannot_read_is_flagged(shipped, capsys) -> None:
    texts = [GERMAN, EMOJI, "The dog runs quickly across the street.", "...", ""]
    own, coverage = shipped.model_coverage(texts), shipped.coverage(texts)
    assert own[0] < 0.5 and own[1] == 0.0 and own[2] == 1.0 and own[3] == 1.0 and np.isnan(own[4])
    # hand counts over the words coverage counts (punctuation the model knows aside): model
    # coverage, those with an entry of their own; coverage, those or the words the open
    # vocabulary reads as a number or an English word (wordfreq's English list holds emoji and
    # common foreign words: "hund", "schnell"), so coverage alone does not flag this text; the
    # note and the warning read the model's own share
    words = [w for w in shipped.explain(GERMAN).words if any(c.isalnum() for c in w.token)]
    assert own[0] == pytest.approx(sum(w.word is not None for w in words) / len(words))
    english = [w for w in words if w.word is not None or w.estimate.startswith(("number", "english"))]
    assert coverage[0] == pytest.approx(len(english) / len(words)) and coverage[0] > own[0]
    assert coverage[1] == 1.0 and coverage[2] == 1.0 and coverage[3] == 1.0 and np.isnan(coverage[4])
    assert shipped.note(texts[:3]) == ["looks German", "low coverage", ""]
    assert main(["specificity", "--coverage", GERMAN, EMOJI, "It is good."]) == 0
    captured = capsys.readouterr()
    assert [float(line.split("\t")[1]) for line in captured.out.splitlines()] == pytest.approx(
        [coverage[0], coverage[1], 1.0], abs=1e-4)
    warning = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "2 of 3 sentences" in warning[0] and "model's vocabulary" in warning[0]
    assert main(["explain", GERMAN]) == 0
    assert "below half with an entry of their own" in capsys.readouterr().out


def test_accents_fold_to_a_known_entry_in_every_tokenizer_path(shipped) -> None:
    assert "cafe" in shipped.vocab.index and "café" not in shipped.vocab.index
    pairs = [("café", "cafe"), ("a Café résumé", "a cafe resume"), ("ＴＨＥ ｄｏｇ", "the dog"), ("naïve", "naive"),
             ("ﬁne", "fine")]
    # a form with an entry of its own keeps it (zürich and zurich are two entries)
    assert shipped.explain("zürich").words[0].word == "zürich"
    for folded, plain in pairs:
        assert shipped.specificity(folded) == shipped.specificity(plain), folded
    # the compiled tokenizer (batches of 1,024 and more) and the piece tokenizer agree
    from probsent.text.token_ids import COMPILED_SENTENCES

    batch = [folded for folded, _ in pairs] * (COMPILED_SENTENCES // len(pairs) + 1)
    assert len(batch) >= COMPILED_SENTENCES
    np.testing.assert_array_equal(shipped.specificity(batch)[:len(pairs)], shipped.specificity([p for _, p in pairs]))
    explained = shipped.explain("café")
    assert explained.words[0].word == "cafe" and explained.coverage == 1.0


# -- similarity -----------------------------------------------------------------------------------

SENTENCES = ["A man plays a guitar.", "The Dow fell 2.3 % on Tuesday.", "It is good.", "Things happen.",
             "A woman is slicing an onion.", "zebras quietly graze"]


@pytest.mark.parametrize("kind", ["wlo", "lstmgaussian", "wordavg", "wordsum", "lstmavg", "shipped"])
def test_every_sentence_is_most_similar_to_itself(kind, make_model, shipped) -> None:
    model = shipped if kind == "shipped" else make_model(kind, seed=7)
    measures = [None, "cosine"] + (["cosine_concat", "kernel"] if model.probabilistic else [])
    for measure in measures:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no DeprecationWarning for a square call
            matrix = model.similarity(SENTENCES, SENTENCES, measure=measure)
        assert (matrix.max(axis=1) == np.diagonal(matrix)).all(), (kind, measure)
        low = 0.0 if measure == "kernel" else -1.0
        assert ((matrix >= low) & (matrix <= 1.0)).all()
        np.testing.assert_allclose(np.diagonal(matrix), 1.0, atol=1e-6)


def test_the_default_is_the_cosine_of_the_means_by_hand(shipped) -> None:
    mean, _ = shipped.encode(SENTENCES)
    mean = mean.astype(np.float64)
    expected = np.array([[a @ b / np.linalg.norm(a) / np.linalg.norm(b) for b in mean] for a in mean])
    np.testing.assert_allclose(shipped.similarity(SENTENCES, SENTENCES), expected, atol=1e-6)
    # the expected inner product stays available by name: not largest on the diagonal
    inner = shipped.similarity(["It is good.", "The Dow fell 2.3 %."], ["It is good.", "The Dow fell 2.3 %."],
                               measure="expected_inner_product")
    assert inner[0, 1] > inner[0, 0]


def test_the_kernel_and_concat_by_hand(shipped) -> None:
    (m1, v1), (m2, v2) = (tuple(x.astype(np.float64) for x in shipped.encode(s)) for s in SENTENCES[:2])
    s = v1 + v2
    kernel = np.exp(np.mean(-0.5 * (np.log(s / (2 * np.sqrt(v1 * v2))) + (m1 - m2) ** 2 / s)))
    assert shipped.similarity(SENTENCES[0], SENTENCES[1], measure="kernel") == pytest.approx(kernel, rel=1e-5)
    c1, c2 = np.concatenate([m1, v1]), np.concatenate([m2, v2])
    assert shipped.similarity(SENTENCES[0], SENTENCES[1], measure="cosine_concat") == pytest.approx(
        c1 @ c2 / np.linalg.norm(c1) / np.linalg.norm(c2), rel=1e-5)


def test_encodings_computed_earlier_give_the_same_values(shipped, make_model) -> None:
    encoded = shipped.encode(SENTENCES)
    for measure in ("cosine", "cosine_concat", "kernel", "expected_inner_product"):
        from_text = shipped.similarity(SENTENCES, SENTENCES[:3], measure=measure)
        np.testing.assert_allclose(shipped.similarity(encoded, SENTENCES[:3], measure=measure), from_text,
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(shipped.similarity_pairwise(encoded, encoded, measure=measure),
                                   np.diagonal(shipped.similarity(SENTENCES, SENTENCES, measure=measure)),
                                   rtol=1e-5, atol=1e-5)
    means = encoded[0]
    assert shipped.similarity(means[0], means[1]) == pytest.approx(shipped.similarity(SENTENCES[0], SENTENCES[1]),
                                                                    abs=1e-6)
    with pytest.raises(InvalidValueError, match="needs the variances"):
        shipped.similarity(means, means, measure="kernel")
    with pytest.raises(ValueError, match="log-variance"):
        shipped.similarity((encoded[0], np.log(encoded[1])), SENTENCES)
    vectors = make_model("wordavg").encode(SENTENCES)
    assert make_model("wordavg").similarity(vectors, vectors).shape == (len(SENTENCES), len(SENTENCES))
    with pytest.raises(InvalidValueError, match="needs Gaussians"):
        make_model("wordavg").similarity(SENTENCES, SENTENCES, measure="kernel")
    with pytest.raises(InvalidValueError, match="measure must be one of"):
        shipped.similarity(SENTENCES, SENTENCES, measure="dot")


def test_the_default_read_out_scores_at_least_the_means_cosine_on_sts_b_test(shipped, data_dir) -> None:
    """The default read-out's STS Benchmark test Pearson is the documented record
    (results/similarity-readout/test.json) and at least the cosine of the means' 66.1 (issue 31's
    done-when)."""
    from scipy.stats import pearsonr

    from reproduction.evaluation.datasets import DataDir, load_sts_benchmark
    from tests.helpers import REPO

    pairs = load_sts_benchmark(DataDir(data_dir), "test")
    r = 100 * pearsonr(shipped.similarity_pairwise(pairs.first, pairs.second), pairs.scores).statistic
    record = json.loads((REPO / "reproduction" / "results" / "similarity-readout" / "test.json").read_text())
    assert record["chosen"] == "cosine" and r == pytest.approx(record["pearson_x100"]["STSB-test"]["cosine"], abs=1e-3)
    assert r >= 66.1


# -- the silent ones --------------------------------------------------------------------------------

def test_a_dataframe_or_any_2d_input_is_a_type_error_naming_the_fix(shipped) -> None:
    frame = pd.DataFrame({"text": ["It is good.", "Things happen."], "other": ["a", "b"]})
    for call in (shipped.specificity, shipped.entropy, shipped.encode, shipped.coverage, shipped.percentile):
        with pytest.raises(TypeError, match=r"pass one column, e\.g\. df\[\"text\"\]"):
            call(frame)
    with pytest.raises(TypeError, match="2-D"):
        shipped.specificity(np.array([["a", "b"], ["c", "d"]]))
    assert shipped.specificity(frame["text"]).tolist() == shipped.specificity(["It is good.", "Things happen."]).tolist()


def test_a_blank_sentence_is_nan_everywhere(shipped, capsys) -> None:
    blanks = ["", " ", "\t\n", "\u3000", "\xa0"]
    for text in blanks:
        assert tokenize(text) == []  # the blanks are exactly the texts without tokens
        for call in (shipped.specificity, shipped.entropy, shipped.probability, shipped.percentile, shipped.coverage):
            assert np.isnan(call(text)), (call.__name__, repr(text))
        assert np.isnan(shipped.similarity(text, "It is good."))
    assert not np.isnan(shipped.specificity("..."))  # punctuation is text
    assert main(["specificity", "--probability", "--percentile", "--coverage", "", " "]) == 0
    assert [line.split("\t")[:4] for line in capsys.readouterr().out.splitlines()] == [["nan"] * 4] * 2


def test_save_keeps_the_calibration_and_table_and_refuses_what_is_not_a_model(tmp_path, shipped) -> None:
    shipped.save(tmp_path / "copy")
    copy = probsent.load(tmp_path / "copy")
    assert copy.probability("It is good.") == shipped.probability("It is good.")
    assert copy.percentile("It is good.") == shipped.percentile("It is good.")
    shipped.save(tmp_path / "copy")  # a model directory is replaced whole
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(ProbsentError, match="not a probsent model directory"):
        shipped.save(mine)
    assert (mine / "notes.txt").read_text() == "mine" and sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    (tmp_path / "file.txt").write_text("mine")
    with pytest.raises(ProbsentError, match="not a probsent model directory"):
        shipped.save(tmp_path / "file.txt")
    assert (tmp_path / "file.txt").read_text() == "mine"


def test_readme_sample_is_make_runs_commands_and_its_probability_follows_the_score() -> None:
    from reproduction.experiments import readme_sample
    from tests.helpers import REPO

    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    run = makefile[makefile.index("\nrun: "):].split("\n\n")[0]
    assert "probsent specificity --probability --percentile --input examples/sentences.txt" in run
    assert f'probsent explain "{readme_sample.EXPLAINED}"' in run
    rows = [line.split("\t") for line in readme_sample.shown() if line.count("\t") == 3]
    scores, probabilities = [float(r[0]) for r in rows], [float(r[1]) for r in rows]
    assert scores == sorted(scores, reverse=True) and probabilities == sorted(probabilities, reverse=True)


def test_coverage_of_a_batch_equals_a_loop_over_its_sentences() -> None:
    """The packed running sum of known_share against a plain count, sentence by sentence."""
    from probsent.text.token_ids import counts_for_coverage, coverage_codes, known_share

    words = ["<unk>", "the", ".", "dog", ",", "2.3", "--"]
    index = {word: i for i, word in enumerate(words)}
    rng = np.random.default_rng(4)
    lengths = rng.integers(0, 9, size=300)
    ids = rng.integers(0, len(words), size=int(lengths.sum()))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    got = known_share(ids, offsets, coverage_codes(index))
    for i in range(len(lengths)):
        tokens = [None if t == 0 else words[t] for t in ids[offsets[i]:offsets[i + 1]]]
        counted = [t for t in tokens if counts_for_coverage(t)]
        want = (np.nan if not tokens else 1.0 if not counted
                else sum(t is not None for t in counted) / len(counted))
        assert got[i] == pytest.approx(want, nan_ok=True), (i, tokens)
