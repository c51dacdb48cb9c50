"""The compiled tokenizer gives the reference tokenizer's tokens, as vocabulary ids (issue 25).

``probsent.text.compiled_tokenize.CompiledTokenIds`` must give, for every text, the ids of
``probsent.text.tokenize.tokenize(text)[:max_tokens]``. Compared with a vocabulary that holds every
token the reference gives (so equal ids mean equal tokens: a wrong token maps to 0 or to
another token's id) on every distinct sentence of the training pairs, on every evaluation
set, and on the tokenizer tests' edge cases, long strings and random strings in context;
plus the token cap, the cache's growth and fresh starts, ``Utf8Texts`` from str lists and
from every kind of Arrow string column, and the scoring paths that use them.
"""
from __future__ import annotations

import gzip
import pickle

import numpy as np
import pyarrow as pa
import pytest

from helpers import DATA, PAIRS, evaluation_sets, require_data, tiny_model
from probsent.text.compiled_tokenize import CompiledTokenIds
from probsent.text.token_ids import COMPILED_SENTENCES, TokenIds
from probsent.text.tokenize import tokenize, tokenize_many
from probsent.text.utf8_texts import Utf8Texts
from probsent.readouts.word_terms import MAX_TOKENS
from probsent.api import scoring_engine
from probsent.corpus_scoring.workers import sentence_scores, with_sentence
from test_tokenize import EDGE_CASES, LONG_CASES, _in_context, _random_strings

HAND_WRITTEN = [
    # quotes at the start and elsewhere, alone and in pieces
    '"Hi," she said.', '"', "''", "'' x", "``x''", "'quoted' word", "students' books", "it's' ", "it's'",
    ' "x" ', '  "indented quote"', '("x")', "x '' y ''",
    # the final period, with closers and spaces after it, and not final
    "end.", "end. ", "end.  ", "end.)", 'end.")', "end.'", "a . b .", "wait...", "u.s.", "mr. x.", ".",
    "..", "x.y.", "x-.", "x- .", "word.\"", "3.5.",
    # contractions, whole and within hyphenated and punctuated words
    "can't", "cannot", "Cannot,", "cannot.", "gonna", "GONNA", "gonna-be", "x-gonna", "wanna-", "x-wanna",
    "wanna.", "gimme!", "lemme;", "gotta?", "dinner", "summer", "letter-writer", "well--known", "a--",
    "--", "---", "-", "x-", "-x", "'tis", "'twas", "d'ye", "more'n", "they'll", "x'll's", "isn't.",
    "don't-stop", "ab-cannot", "cannot-ab", "cannot1", "wannabe",
    # plain words with marks
    "a,", "a:", "a;", "a?", "a!", "a.", "a,b", "a:1", "1,000", "10:30", "a,,", "a,.", "a.,", "x,1.",
    # non-ASCII: lowered per piece (final sigma, dotted I, Kelvin sign), spaces that are not " "
    "ΣΑΣ ΣΑΣ.", "ΟΔΟΣ. ΟΔΟΣ", "İstanbul İ", "KELVIN \u212a", "ſtraße", "gımme", "'tıs", "naïve café.",
    "a\xa0b.", "a\u3000b", "a\u2028b.", "x \u200b y", "\ufeffbom", "日本語。", "emoji 😀.", "x’s", "—dash—",
    "x\udcff.", "\ud800", "\u0663,\u0664", "x,\u0663", "Ω,",
    # whitespace, control characters, empty
    "", " ", "   ", "\t", "a\tb.", "a\nb.", "a\r\nb", "\x00", "a\x00b.", "a\x1cb", "\x7f", "x\x7f.",
    "  lead", "trail  ", "  both  ", "a  b   c.",
]


def _vocabulary(token_lists: list[list[str]]) -> dict[str, int]:
    """Every token of ``token_lists``, numbered from 1 (0: unknown)."""
    return {t: i for i, t in enumerate(dict.fromkeys(t for tokens in token_lists for t in tokens), 1)}


def _differences(texts: list[str], compiled: CompiledTokenIds, batch: int,
                 expected: list[list[str]] | None = None, arrow: bool = False) -> list[str]:
    """The texts whose ids from ``compiled`` (in batches of ``batch``) differ from the
    reference's tokens looked up in ``compiled.index``."""
    expected = tokenize_many(texts) if expected is None else expected
    get, cap = compiled.index.get, compiled.max_tokens
    bad = []
    for start in range(0, len(texts), batch):
        part = texts[start:start + batch]
        ids, offsets = compiled(Utf8Texts.from_arrow(pa.array(part, pa.string())) if arrow else part)
        assert offsets[0] == 0 and len(offsets) == len(part) + 1 and offsets[-1] == len(ids)
        for i, text in enumerate(part):
            if ids[offsets[i]:offsets[i + 1]].tolist() != [get(t, 0) for t in expected[start + i][:cap]]:
                bad.append(text)
    return bad


@pytest.fixture(scope="module")
def training_sentences() -> list[str]:
    require_data()
    with gzip.open(PAIRS, "rt", encoding="utf-8", newline="\n") as handle:
        sentences = [s for line in handle for s in line.rstrip("\n").split("\t")[:2]]
    assert len(sentences) == 2 * 1_263_076
    return list(dict.fromkeys(sentences))  # 606,823 distinct


@pytest.mark.data
def test_every_training_sentence(training_sentences) -> None:
    expected = tokenize_many(training_sentences)
    # a bounded cache, so that it starts afresh several times on the way
    compiled = CompiledTokenIds(_vocabulary(expected), MAX_TOKENS, max_pieces=20_000)
    assert _differences(training_sentences, compiled, 8192, expected) == []
    assert compiled.texts == len(training_sentences)
    assert compiled.fallbacks <= 20, compiled.fallbacks  # not printable: 11 of them
    # from Arrow columns, every tenth batch
    sample = [s for start in range(0, len(training_sentences), 81920) for s in training_sentences[start:start + 8192]]
    assert _differences(sample, compiled, 8192, tokenize_many(sample), arrow=True) == []


@pytest.mark.data
@pytest.mark.parametrize("name", [n for n in evaluation_sets(DATA) if n != "paraphrase-sample"])
def test_every_evaluation_sentence(name) -> None:
    texts = evaluation_sets(require_data())[name][0]()
    compiled = CompiledTokenIds(_vocabulary(tokenize_many(texts)), MAX_TOKENS)
    assert _differences(texts, compiled, 4096) == []
    assert _differences(texts, compiled, 1000, arrow=True) == []  # again, every piece cached


@pytest.mark.slow
def test_hand_written_edge_and_random_cases_in_context() -> None:
    texts = _in_context(HAND_WRITTEN + EDGE_CASES + LONG_CASES + _random_strings(seed=26, count=20000), seed=26)
    texts += [t.upper() for t in HAND_WRITTEN] + [t + " " + t for t in HAND_WRITTEN]
    expected = tokenize_many(texts)
    compiled = CompiledTokenIds(_vocabulary(expected), MAX_TOKENS)
    assert _differences(texts, compiled, 1000, expected) == []
    assert _differences(texts[::-1], compiled, 777, expected[::-1]) == []  # every piece cached
    # a vocabulary without most tokens: unknown tokens are 0, known ones keep their ids
    partial = {t: i for t, i in compiled.index.items() if i % 3 == 0}
    assert _differences(texts, CompiledTokenIds(partial, MAX_TOKENS), 1000, expected) == []


def test_the_token_cap() -> None:
    texts = ["one two three four five six seven.", "a b", "it's a \"test\", isn't it?", "x " * 20,
             "a\tb c d e f g h", "ΣΑΣ " * 9, "gonna " * 8, "(a) " * 4, "x, " * 10, ""]
    for cap in (1, 2, 3, 5, 7, 8):
        compiled = CompiledTokenIds(_vocabulary(tokenize_many(texts)), cap)
        assert _differences(texts, compiled, 4) == [], cap
    long = ("he said \"it's\" (really) -- 1,000 times; ok? " * 3000) + "fine."
    compiled = CompiledTokenIds(_vocabulary([tokenize(long)]), MAX_TOKENS)
    ids, offsets = compiled([long, "short one.", long + "\t"])
    assert np.diff(offsets).tolist() == [MAX_TOKENS, 3, MAX_TOKENS]
    assert _differences([long, "x", long + "\t"], compiled, 3) == []


@pytest.mark.slow
def test_the_cache_grows_and_starts_afresh() -> None:
    texts = _random_strings(seed=5, count=6000) + [f"(word{i}) x{i}'s" for i in range(5000)]
    expected = tokenize_many(texts)
    compiled = CompiledTokenIds(_vocabulary(expected), MAX_TOKENS, max_pieces=300, max_key_bytes=3000)
    assert _differences(texts, compiled, 500, expected) == []
    assert _differences(texts, compiled, 5000, expected) == []  # more new pieces than the first room
    assert len(compiled) > 1024  # grown past the first room, within one batch
    # a single piece longer than the cache's key room, and a text whose ids need more room
    huge = ["(" + "y" * 100_000 + "'s", "(" * 50_000]
    compiled = CompiledTokenIds(_vocabulary(tokenize_many(huge)), MAX_TOKENS)
    assert _differences(huge, compiled, 2) == []


def test_utf8_texts_from_strings_and_arrow() -> None:
    texts = ["a", None, "", "b\nc", "ΣΑΣ.", "x\udcff", None, "end. "]
    for batch in (Utf8Texts.from_strings(texts), pickle.loads(pickle.dumps(Utf8Texts.from_strings(texts)))):
        assert list(batch) == texts and len(batch) == len(texts) and batch[-1] == "end. " and batch[1:3] == [None, ""]
    plain = [t for t in texts if t is None or "\udcff" not in t]
    array = pa.array(plain, pa.string())
    variants = [array, array.cast(pa.large_string()), array.cast(pa.string_view()), array.dictionary_encode(),
                pa.chunked_array([array[:3], array[3:]]), pa.concat_arrays([pa.array(["skip"]), array])[1:]]
    for variant in variants:
        batch = Utf8Texts.from_arrow(variant)
        assert list(batch) == plain, variant.type
        assert list(pickle.loads(pickle.dumps(batch))) == plain
    assert list(Utf8Texts.from_arrow(pa.nulls(3))) == [None] * 3
    assert list(Utf8Texts.from_arrow(pa.array([], pa.string()))) == []
    assert list(Utf8Texts.from_strings([])) == [] and list(Utf8Texts.from_strings([""])) == [""]
    with pytest.raises(TypeError):
        Utf8Texts.from_arrow(pa.array([1, 2]))


@pytest.mark.slow
def test_token_ids_takes_the_compiled_path_for_large_batches_and_utf8_texts() -> None:
    texts = (HAND_WRITTEN * (COMPILED_SENTENCES // len(HAND_WRITTEN) + 1))[:COMPILED_SENTENCES]
    index = _vocabulary(tokenize_many(texts))
    token_ids = TokenIds(index, MAX_TOKENS)
    small = [token_ids(texts[i:i + 100]) for i in range(0, len(texts), 100)]
    assert token_ids._compiled is None  # small batches: no numba
    ids, offsets = token_ids(texts)
    assert isinstance(token_ids._compiled, CompiledTokenIds) and token_ids._compiled.texts == len(texts)
    assert ids.tolist() == np.concatenate([s[0] for s in small]).tolist()
    arrow = token_ids(Utf8Texts.from_arrow(pa.array(texts[:10] + [None])))
    assert np.diff(arrow[1]).tolist() == np.diff(offsets[:11]).tolist() + [0]
    assert token_ids.counts(Utf8Texts.from_strings(["a b", None, ""])).tolist() == [2.0, 0.0, 0.0]


def test_corpus_scores_have_nan_exactly_where_there_is_no_sentence() -> None:
    table = scoring_engine(tiny_model("wlo"))
    texts = HAND_WRITTEN + [None, "\x1c", " \t", "\u3000", "\x85", "a\u3000"] + ["the cat sat."] * COMPILED_SENTENCES
    scores = sentence_scores(table, texts)
    assert np.flatnonzero(np.isnan(scores)).tolist() == sorted(set(range(len(texts))) - set(with_sentence(texts)))
    present = with_sentence(texts)
    assert np.array_equal(scores[present], table.specificity([texts[i] for i in present]))  # bit for bit
    for batch in (Utf8Texts.from_strings(texts), texts[:50]):
        assert np.array_equal(sentence_scores(table, batch), scores[:len(batch)], equal_nan=True)
