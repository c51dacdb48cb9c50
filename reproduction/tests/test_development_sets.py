"""The representation's development sets: SNLI dev's equal-length pairs, STS Benchmark dev and
STS 2017, their table (reproduction.evaluation.development, experiments/dev_sets.py), and that
nothing there reads a test split."""
import json
import zlib

import numpy as np
import pytest
from scipy import stats

from probsent.errors import ProbsentError
from reproduction.evaluation import datasets as ds
from reproduction.evaluation import tables
from reproduction.evaluation.baselines import LengthScorer
from reproduction.evaluation.development import development_measures, development_table
from probsent.api import tokenize


def test_snli_dev_is_the_development_split_and_agrees_with_its_tokenized_copy(eval_data, data_dir):
    snli = ds.load_snli_dev(eval_data)
    assert len(snli.premises) == len(snli.hypotheses) == 9842
    assert np.bincount(snli.labels).tolist() == [3329, 3235, 3278]  # SNLI 1.0 dev's gold-label counts
    # e-SNLI's tokenized copy of the same rows: labels as words, row by row
    words = (data_dir / "snli" / "tokenized_esnli" / "labels.dev").read_text(encoding="utf-8").split()
    assert [ds.SNLI_LABELS[k] for k in snli.labels] == words
    with pytest.raises(ProbsentError, match="unknown SNLI split 'train'"):
        ds.load_snli(eval_data, "train")


def test_snli_dev_equal_length_pairs(eval_data):
    pairs = tables.snli_equal_length_pairs(eval_data, "dev")
    assert np.bincount(pairs.labels).tolist() == [139, 184, 218]
    assert all(len(tokenize(p)) == len(tokenize(h)) for p, h in zip(pairs.premises, pairs.hypotheses))
    snli = ds.load_snli_dev(eval_data)  # every equal-length pair of the split, none else
    expected = sum(len(tokenize(p)) == len(tokenize(h)) for p, h in zip(snli.premises, snli.hypotheses))
    assert len(pairs.labels) == expected == 541


class CharacterCount:
    name = "characters"

    def specificity(self, sentences):
        return np.array([len(s) for s in sentences], dtype=float)


class BagOfWords:
    """Hashed word counts: a deterministic encoder whose cosine follows word overlap."""

    def encode(self, sentences):
        out = np.zeros((len(sentences), 64))
        for i, sentence in enumerate(sentences):
            for word in sentence.lower().split():
                out[i, zlib.crc32(word.encode()) % 64] += 1.0
        return out


def _cosine_pearson(pairs: ds.StsPairs) -> float:
    first, second = BagOfWords().encode(pairs.first), BagOfWords().encode(pairs.second)
    cosines = [a @ b / (np.linalg.norm(a) * np.linalg.norm(b)) if a.any() and b.any() else 0.0
               for a, b in zip(first, second)]
    return 100.0 * stats.pearsonr(cosines, pairs.scores).statistic


def test_development_measures_by_hand_and_no_test_split_read(data_dir):
    data = ds.DataDir(data_dir)  # a fresh one: it records every file read
    dev = development_measures(CharacterCount(), BagOfWords(), data)
    assert dev.sts["STSB-dev"]["cosine"] == pytest.approx(_cosine_pearson(ds.load_sts_benchmark(data, "dev")), abs=1e-9)
    assert dev.sts["STS17"]["cosine"] == pytest.approx(_cosine_pearson(ds.load_sts17(data)), abs=1e-9)
    pairs = tables.snli_equal_length_pairs(data, "dev")
    for k, label in enumerate(ds.SNLI_LABELS):  # % of each label's pairs whose hypothesis has fewer characters
        shorter = [len(h) < len(p) for p, h, y in zip(pairs.premises, pairs.hypotheses, pairs.labels) if y == k]
        assert dev.snli_dev.less_specific(label) == pytest.approx(100 * sum(shorter) / len(shorter), abs=1e-9)
    assert dev.snli_dev.n == {"entailment": 139, "neutral": 184, "contradiction": 218}
    assert set(data.sha256) == {"snli/snli_1.0_dev.untok.tsv", "sts/stsbenchmark/sts-dev.csv",
                                "sts/sts17-track5-en-en/STS.gs.track5.en-en.txt",
                                "sts/sts17-track5-en-en/STS.input.track5.en-en.txt"}
    tied = development_measures(LengthScorer(), None, data)  # equal token counts: Length always ties
    assert tied.sts == {} and [tied.snli_dev.less_specific(x) for x in ds.SNLI_LABELS] == [0.0, 0.0, 0.0]
    table = development_table({"characters": dev, "Length": tied}).splitlines()
    assert table[2].startswith(f"| characters | {dev.sts['STSB-dev']['cosine']:.1f} | — | — | "
                               f"{dev.sts['STS17']['cosine']:.1f} | {dev.snli_dev.entailment:.1f} |")
    assert table[3] == "| Length | — | — | — | — | 0.0 | 0.0 | 0.0 |"


def test_dev_sets_script_on_a_tiny_model(tmp_path, data_dir, make_model, capsys):
    from reproduction.experiments.dev_sets import main

    import probsent
    from reproduction.evaluation.model_scorer import ModelScorer

    directory = tmp_path / "wlo"
    make_model("wlo").save(directory)
    out = tmp_path / "dev.json"
    assert main(["--model", str(directory), "--baseline", "length", "--data-dir", str(data_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    record = json.loads(out.read_text())
    assert list(record["systems"]) == [str(directory), "Length"]
    assert "sts/stsbenchmark/sts-test.csv" not in record["data_sha256"]
    scorer = ModelScorer("tiny", probsent.load(directory))
    expected = development_measures(scorer, scorer, ds.DataDir(data_dir))
    assert record["systems"][str(directory)] == json.loads(json.dumps(expected.to_dict()))
    assert set(record["systems"][str(directory)]["sts"]["STSB-dev"]) == {"cosine", "cosine_mean", "expected_inner_product"}
    assert printed[2].startswith(f"| {directory} | {expected.sts['STSB-dev']['cosine']:.1f} | "
                                 f"{expected.sts['STSB-dev']['cosine_mean']:.1f} | ")
    assert printed[3] == "| Length | — | — | — | — | 0.0 | 0.0 | 0.0 |"
