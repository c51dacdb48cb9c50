"""The fast scoring path gives the scores of the reference path (issue 25).

The reference ("today's" code, kept here in full): the reference tokenizer, one vocabulary
lookup per token, the encoder's float64 terms from torch, and ``prior + terms[ids].sum()``
per sentence; encodings from ``encode_by_length`` on those ids. Compared on every sentence of
the evaluation sets and 100,000 sentences of the training pairs, with a WLO whose vocabulary
holds their 20,000 most frequent tokens (so that most tokens have a term of their own):

* ``probsent.load(...).entropy`` / ``specificity`` (the fast tokenizer, the term table, the
  pairwise sums): equal bit for bit;
* the torch-free table of ``probsent specificity`` (terms computed by NumPy from the
  safetensors file): within 1e-12 relative;
* ``encode`` (every tenth sentence): within 1e-6 relative.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import torch

import probsent
from helpers import REPO, evaluation_sets, require_data
from probsent.api import ENCODE_CHUNK, MAX_BATCH_CELLS, MAX_TOKENS, SentenceModel, saturated
from probsent.models.batching import encode_by_length
from probsent.data.vocab import UNKNOWN, Vocabulary
from probsent.model_directory import resolve_model_dir
from probsent.models import build_model
from probsent.text.segment_sums import segment_sums
from probsent.text.token_ids import TokenIds
from probsent.text.tokenize import tokenize
from probsent.text.utf8_texts import Utf8Texts
from probsent.api import scoring_engine
from probsent.readouts.word_terms import WordTermTable, prior_entropy, wlo_word_terms
from probsent.corpus_scoring.workers import sentence_scores, with_sentence


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    data = require_data()
    sets = evaluation_sets(data)
    out = [s for name, (load, _) in sets.items() if name != "paraphrase-sample" for s in load()]
    return out + sets["paraphrase-sample"][0]()[:100_000]


@pytest.fixture(scope="module")
def reference_ids(sentences) -> list[np.ndarray]:
    return [tokenize(s)[:MAX_TOKENS] for s in sentences]


@pytest.fixture(scope="module")
def wlo_dir(tmp_path_factory, reference_ids) -> Path:
    counts = Counter(t for tokens in reference_ids for t in tokens)
    vocab = Vocabulary([UNKNOWN] + [w for w, _ in counts.most_common(20_000)])
    torch.manual_seed(25)
    encoder = build_model({"type": "wlo", "vocab_size": len(vocab), "dim": 50, "scale_init_std": 0.3,
                           "shift_init_std": 0.5})
    with torch.no_grad():  # a few negative scales, as training makes
        encoder.scale.weight[::97] *= -1
    path = tmp_path_factory.mktemp("wlo") / "model"
    SentenceModel(encoder, vocab).save(path)
    return path


def reference_entropy(model: SentenceModel, tokens: list[list[str]]) -> np.ndarray:
    """The entropies as the code before issue 25 computed them (from the model's start,
    N(0, start_variance I)), from the terms as NumPy computes them (the API reads models without
    torch since issue 33; the torch terms differ in the last bit of some words: the last test
    below). A word without an entry of a model with an open vocabulary (the shipped one) takes
    its class's term, the class by the index's one-token ``get`` (checked against a naive
    reference in tests/test_open_vocabulary.py)."""
    terms = wlo_word_terms(model.encoder.scale.weight.detach().numpy())
    prior = prior_entropy(model.encoder.dim, model.encoder.start_variance)
    index = model.vocab.index
    if model.word_estimates is not None:
        terms = np.concatenate([terms, wlo_word_terms(model.word_estimates.scale)])
        index = scoring_engine(model).token_ids.index
    return np.array([prior + terms[[index.get(t, 0) for t in sentence]].sum() for sentence in tokens])


@pytest.fixture(scope="module")
def expected(wlo_dir, reference_ids) -> np.ndarray:
    return reference_entropy(probsent.load(wlo_dir), reference_ids)


@pytest.mark.data
def test_the_api_scores_equal_the_reference_bit_for_bit(wlo_dir, sentences, expected) -> None:
    model = probsent.load(wlo_dir)
    assert np.array_equal(model.entropy(sentences), expected)
    assert np.array_equal(model.specificity(sentences), -expected)
    # in other batches, and one by one
    assert np.array_equal(model.entropy(sentences[::-1][:5000]), expected[::-1][:5000])
    assert [model.entropy(s) for s in sentences[:300]] == expected[:300].tolist()


@pytest.mark.data
def test_corpus_scoring_equals_the_reference_bit_for_bit(wlo_dir, sentences, expected) -> None:
    # what the workers compute for a chunk: the compiled tokenizer on the whole chunk (a list of
    # str from text input, the column's bytes from Parquet), NaN where there is no sentence
    model = probsent.load(wlo_dir)
    want = -expected
    want[np.setdiff1d(np.arange(len(sentences)), with_sentence(sentences))] = np.nan
    table = scoring_engine(model)  # the API's engine
    column = pa.array(sentences, pa.string())
    for texts in (sentences, Utf8Texts.from_arrow(column), Utf8Texts.from_arrow(column.cast(pa.large_string()))):
        assert np.array_equal(sentence_scores(table, texts), want, equal_nan=True)
    torch_free = scoring_engine(probsent.load(wlo_dir))  # the command line's: the same bits
    assert np.array_equal(sentence_scores(torch_free, Utf8Texts.from_arrow(column))[with_sentence(sentences)],
                          torch_free.specificity([sentences[i] for i in with_sentence(sentences)]))


@pytest.mark.data
def test_the_torch_free_table_equals_the_reference(wlo_dir, sentences, reference_ids, expected) -> None:
    shipped = resolve_model_dir(None)
    for path, every in ((wlo_dir, 1), (shipped, 5)):  # a large vocabulary, and the shipped model
        items = sentences[::every]
        if every > 1:
            expected = reference_entropy(probsent.load(path), reference_ids[::every])
        table = scoring_engine(probsent.load(path)).term_table("test")
        assert isinstance(table, WordTermTable)
        got = table.entropy(items)
        # NumPy's log and its order of the sum over the dimensions differ from torch's in the
        # last bit of some terms (torch-free, the terms cannot be torch's bits): 1e-12 of the
        # sum's magnitudes (the prior plus every |term|), which is 1e-12 relative except where
        # the terms cancel the prior to nearly zero (ill-conditioned: there no float64 sum in
        # another order would do better)
        ids, offsets = table.token_ids(items)
        magnitude = abs(table.prior_entropy) + segment_sums(np.abs(table.terms[ids]), offsets)
        assert np.all(np.abs(got - expected) <= 1e-12 * magnitude)
        share = np.mean(np.abs(got - expected) <= 1e-12 * np.abs(expected))
        assert share > 0.999, share
        assert np.array_equal(table.specificity(items), -got)


@pytest.mark.data
def test_encode_equals_the_reference(wlo_dir, sentences, reference_ids) -> None:
    model = probsent.load(wlo_dir)
    subset = slice(None, None, 10)
    items, tokens = sentences[subset], reference_ids[subset]
    means, logvars = [], []
    for start in range(0, len(tokens), ENCODE_CHUNK):  # encode's chunks: a float32 batch's shape
        ids = [model.vocab.ids(t) for t in tokens[start:start + ENCODE_CHUNK]]  # can move last bits
        offsets = np.concatenate(([0], np.cumsum([len(i) for i in ids])))
        with torch.no_grad():
            enc = encode_by_length(model.encoder, np.concatenate(ids), offsets, np.arange(len(ids)), 256,
                                   max_cells=MAX_BATCH_CELLS)
        means.append(enc.mean.numpy())
        logvars.append(enc.logvar.numpy())
    mean, variance = model.encode(items)
    # saturated at both ends of float32's positive range (a variance below it is its smallest number, never 0)
    expected_variance = np.maximum(saturated(np.exp(np.concatenate(logvars).astype(np.float64))),
                                   np.finfo(np.float32).smallest_subnormal)
    expected_mean = saturated(np.concatenate(means))
    # the API computes in float64 (probsent.inference), the torch module in float32: each mean
    # within 1e-6 of its row's size (a mean element that cancels has fewer correct digits in float32)
    assert np.all(np.abs(mean - expected_mean) <= 1e-6 * np.abs(expected_mean).max(-1, keepdims=True))
    assert np.allclose(variance, expected_variance, rtol=2e-6, atol=0)


@pytest.mark.data
def test_token_ids_equal_the_reference_across_new_numberings(sentences, reference_ids) -> None:
    index = {word: i for i, word in enumerate(dict.fromkeys(t for s in reference_ids[:20_000] for t in s), 1)}
    token_ids = TokenIds(index, MAX_TOKENS)
    token_ids.tokenizer.max_pieces = 2_000  # a new numbering every few batches
    for start in range(0, 20_000, 997):
        ids, offsets = token_ids(sentences[start:start + 997])
        expected = [[index.get(t, 0) for t in tokens] for tokens in reference_ids[start:start + 997]]
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == expected
        token_ids.tokens(sentences[start])  # explain's path numbers pieces too
    assert token_ids.tokenizer.generation > 3


@pytest.mark.slow
def test_explain_from_the_table_equals_the_api(wlo_dir) -> None:
    sentence = "The Dow fell 2.3 % on Tuesday, didn't it?"
    ours = scoring_engine(probsent.load(wlo_dir)).explain(sentence)
    api = probsent.load(wlo_dir, device=torch.device("cpu")).explain(sentence)  # the torch module's terms
    assert [(w.token, w.word) for w in ours.words] == [(w.token, w.word) for w in api.words]
    assert [w.entropy for w in ours.words] == pytest.approx([w.entropy for w in api.words], rel=1e-12)
    assert [w.shift_norm for w in ours.words] == pytest.approx([w.shift_norm for w in api.words], rel=1e-5)
    assert ours.prior_entropy == pytest.approx(api.prior_entropy, rel=1e-15)


@pytest.mark.parametrize("command", [["specificity", "The Dow fell 2.3 % on Tuesday."],
                                     ["explain", "The Dow fell 2.3 % on Tuesday."]])
def test_scoring_from_the_command_line_imports_no_torch(command) -> None:
    code = ("import runpy, sys; sys.argv = ['probsent'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('probsent.cli', run_name='__main__')\n"
            "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
            "heavy = sorted(m for m in ('torch', 'scipy', 'numba', 'nltk', 'pyarrow') if m in sys.modules)\n"
            "assert not heavy, heavy\n")
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Dow" in done.stdout or "dow" in done.stdout
