"""The open vocabulary (issue 49): a word without an entry reads as its class
(probsent.data.vocab), fitted on the model's own entries
(probsent.training.model_calibration.fit_word_estimates), the same on every path.

The hand-computed cases use a synthetic WLO model whose entries' scales are chosen so that each
class's fitted term is a known number (sums of logs of 2, 3, 0.5, 1.5); the shipped model's
cases fit the table into a temporary copy of it (wordfreq, the ``eval`` extra, is installed in
the test environment).
"""
from __future__ import annotations

import json
import math
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

import probsent
from probsent.api import SentenceModel, scoring_engine
from probsent.cli import main
from probsent.data.vocab import ESTIMATES_FILE as FILE, UNKNOWN, Vocabulary, WordEstimates, number_shape
from probsent.errors import InvalidValueError, ProbsentError
from reproduction.evaluation.length_controlled import OOV_EXPLAIN, load_one_word
from probsent.inference.array_encoder import ArrayEncoder
from probsent.model_directory import DEFAULT_MODEL
from probsent.training.model_calibration import MIN_VOCABULARY, fit_word_estimates
from probsent.text.tokenize import tokenize
from tests.helpers import one_error, wlo_recurrence

DIM = 4
UNK_SCALE = np.array([1.0, -2.0, 0.5, 1.0])  # the <unk> row: term log 1 + log 2 + log 0.5 + log 1 = 0
UNK_SHIFT = np.array([0.1, -0.2, 0.3, 0.05])


def _letters(i: int) -> str:
    """A letters-only word, distinct for each i."""
    out = ""
    for _ in range(4):
        out, i = out + "abcdefghijklmnopqrstuvwxyz"[i % 26], i // 26
    return "zz" + out


def synthetic_model() -> tuple[SentenceModel, dict[str, float]]:
    """A WLO model of 1,201 entries (<unk>, years 1900-1909, fillers; its last 240 entries the
    tail): years 1900-1904 scale 5, 1905-1909 (the rarer half) scale 2; tail entries 961-1080
    English (Zipf 2.7) scale 3, 1081-1200 not English scale 0.5; every other entry scale 1."""
    size = 1201
    words = [UNKNOWN] + [str(1900 + k) for k in range(10)] + [_letters(i) for i in range(size - 11)]
    magnitude = np.ones(size)
    magnitude[1:6], magnitude[6:11] = 5.0, 2.0
    magnitude[961:1081], magnitude[1081:] = 3.0, 0.5
    scale = np.ones((size, DIM)) * magnitude[:, None]
    scale[0] = UNK_SCALE
    shift = np.tile(np.array([0.3, 0.1, -0.4, 0.2]), (size, 1))
    shift[0] = UNK_SHIFT
    english = {words[i]: 2.7 for i in range(961, 1081)} | {"warfarin": 2.7}
    estimates = fit_word_estimates(words, scale, shift, english=english, tokens_of=lambda w: [w])
    config = {"type": "wlo", "dim": DIM, "vocab_size": size, "start_variance": 1.0}
    encoder = ArrayEncoder(config, {"scale.weight": scale.astype(np.float32), "shift.weight": shift.astype(np.float32)})
    return SentenceModel(encoder, Vocabulary(words), {"model": config}, estimates=estimates), english


PRIOR = 0.5 * DIM * math.log(2 * math.pi * math.e)
# float32 rows: each |A_d| within a relative 2^-24 of the exact value, so each log within 2^-24
# and a term of DIM logs within DIM * 2^-24 (below 3e-7); the tolerance doubles that
TOL = 2 * DIM * 2.0 ** -24


@pytest.mark.parametrize("sentence, factor", [
    ("1879", 2.0),             # a year: the rarer half of the model's years, all of scale 2
    ("warfarin", 3.0),         # English (Zipf 2.7): the tail's English entries of that band, scale 3
    ("qxvtrb", 0.5),           # neither: the tail's entries English does not know, scale 0.5
    ("42", math.sqrt(1.5)),    # an integer, a shape without entries: the whole tail, 2 log 3 + 2 log 0.5 = 4 log 1.5^(1/2)
])
def test_a_word_without_an_entry_gets_its_class_fitted_term(sentence: str, factor: float) -> None:
    model, _ = synthetic_model()
    expected_term = DIM * math.log(factor)
    assert model.entropy(sentence) == pytest.approx(PRIOR + expected_term, abs=TOL)
    explained = model.explain(sentence).words[0]
    assert explained.word is None and explained.estimate is not None and not explained.unknown
    assert explained.entropy == pytest.approx(expected_term, abs=TOL)
    # encode: the <unk> row rescaled by one factor, <unk>'s translation; the recurrence as the oracle
    means, variances = wlo_recurrence([UNK_SCALE * factor], [UNK_SHIFT])
    mean, var = model.encode([sentence])
    np.testing.assert_allclose(mean[0], means[-1], rtol=1e-6)
    np.testing.assert_allclose(var[0], variances[-1], rtol=1e-6)


def test_a_word_with_an_entry_is_unchanged() -> None:
    model, _ = synthetic_model()
    plain = SentenceModel(model._arrays, model.vocab, model.config)  # the same weights, no table
    sentences = ["1900 zzaaaa", "1907 zzbaaa zzcaaa", model.vocab.words[1000]]
    assert (model.specificity(sentences) == plain.specificity(sentences)).all()
    # without the table an unknown word reads as <unk> (term 0 here), with it as its class
    assert plain.entropy("1879") == pytest.approx(PRIOR, abs=TOL)
    assert plain.explain("1879").words[0].unknown


def test_encode_variance_is_the_entropy_the_score_reports() -> None:
    model, _ = synthetic_model()
    sentences = ["1879 warfarin zzaaaa qxvtrb 42", "zzbaaa 1907 warfarin"]
    _, var = model.encode(sentences)
    # a Gaussian's entropy from its float32 variances: each within 2^-24 relative, so each log
    # within 2^-24 and half their sum within DIM * 2^-25
    from_variance = 0.5 * np.log(2 * math.pi * math.e * var.astype(np.float64)).sum(axis=1)
    np.testing.assert_allclose(from_variance, model.entropy(sentences), atol=TOL)


def test_a_torch_module_reads_the_classes_as_numpy_does() -> None:
    # a WLO on a GPU (load(device="cuda")) or being trained is a torch module: its encodings read
    # a word without an entry as its class's row, as the NumPy encoder does, and follow its
    # weights when they change in place. Reference: the recurrence in float64 on the rows by hand
    import torch

    from probsent.models import build_model

    model, _ = synthetic_model()
    weights = {k: np.asarray(v, dtype=np.float32) for k, v in model._arrays.weights.items()}
    torch_model = SentenceModel(build_model(model.config["model"], weights), model.vocab, model.config,
                                estimates=model.word_estimates)
    sentence = "1879 warfarin zzaaaa qxvtrb 42"
    ids = scoring_engine(model).token_ids([sentence])[0]
    assert (ids >= len(model.vocab)).sum() == 4  # four words read by their classes
    scale = np.concatenate([model._arrays.weights["scale.weight"], model.word_estimates.scale]).astype(np.float64)
    shift = np.concatenate([model._arrays.weights["shift.weight"], model.word_estimates.shift]).astype(np.float64)
    # float32 in torch: each of the 5 steps' products and sums rounds within 2^-24 relative, a
    # few roundings a step: well below 1e-5 relative after five words
    for factor in (1.0, 2.0):
        rows = scale[ids].copy()
        rows[ids < len(model.vocab)] *= factor  # the entries' scales as the module now has them
        mean, var = wlo_recurrence(rows, shift[ids])
        got_mean, got_var = torch_model.encode(sentence)
        np.testing.assert_allclose(got_var, var[-1], rtol=1e-5)
        np.testing.assert_allclose(got_mean, mean[-1], rtol=1e-5, atol=1e-6 * np.abs(mean[-1]).max())
        with torch.no_grad():
            torch_model.encoder.scale.weight.mul_(2.0)  # the vocabulary's entries only; the classes are the table's


def test_fitting_refuses_a_tiny_vocabulary() -> None:
    words = [UNKNOWN] + [_letters(i) for i in range(MIN_VOCABULARY - 2)]
    with pytest.raises(ProbsentError, match="too small"):
        fit_word_estimates(words, np.ones((len(words), DIM)), np.zeros((len(words), DIM)), english={})


def test_number_shapes() -> None:
    assert [number_shape(t) for t in ["1879", "2023", "42", "3.14", "1,000,000", "5:30pm", "22nd", "1990s",
                                      "3kg", "1/2", "warfarin"]] == [
        "year", "year", "integer", "decimal", "thousands", "time", "ordinal", "decade", "with letters", "other", None]


# -- the shipped model, with a table fitted into a copy ---------------------------------------

OOV_SENTENCES = ["She takes warfarin every day.", "Einstein was born in Ulm in 1879.",
                 "The program crashed inside malloc again.", "Aspirin inhibits cyclooxygenase-1 in 2023 🙂.",
                 "The real-estate market fell 3.5 % on Tuesday."]


@pytest.fixture(scope="module")
def open_dir(tmp_path_factory) -> Path:
    """A copy of the shipped model with its open vocabulary fitted (as ``probsent calibrate`` does)."""
    path = tmp_path_factory.mktemp("open") / "wlo"
    shutil.copytree(DEFAULT_MODEL, path)
    (path / FILE).unlink(missing_ok=True)
    model = probsent.load(path)
    fit_word_estimates(model.vocab.words, *model._word_weights()).save(path)
    return path


def test_every_path_reads_unknown_words_alike(open_dir: Path, capsys) -> None:
    from probsent.corpus_scoring.workers import score_chunks

    model = probsent.load(open_dir)
    assert model.word_estimates is not None
    api = model.specificity(OOV_SENTENCES)
    # the compiled tokenizer (a batch of at least 1,024) and the Python one give the same bits
    np.testing.assert_array_equal(model.specificity(OOV_SENTENCES * 300)[:len(OOV_SENTENCES)], api)
    # the explanation's shares add up to the same entropy (NumPy's order against a running sum)
    for sentence, score in zip(OOV_SENTENCES, api):
        assert model.explain(sentence).specificity == pytest.approx(score, abs=1e-9)
    # the worker processes score with a copy of the parent's table
    chunks = [(0, OOV_SENTENCES[:3]), (1, OOV_SENTENCES[3:])]
    workers = np.concatenate([values[0] for _, values in score_chunks(scoring_engine(model), chunks, workers=2)])
    np.testing.assert_array_equal(workers, api)
    # the command line's JSON prints 6 decimals: within half a unit of the last
    assert main(["specificity", "--format", "json", "--model", str(open_dir), *OOV_SENTENCES]) == 0
    printed = [json.loads(line)["specificity"] for line in capsys.readouterr().out.splitlines()]
    np.testing.assert_allclose(printed, api, rtol=0, atol=5e-7 + 1e-12)
    # spaCy's component
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    nlp.add_pipe("probsent", config={"model": str(open_dir)})
    docs = list(nlp.pipe(OOV_SENTENCES))
    np.testing.assert_array_equal([doc._.specificity for doc in docs], api)
    for doc, sentence in zip(docs, OOV_SENTENCES):
        shares = sum(token._.entropy_share for token in doc)
        assert shares == pytest.approx(model.explain(sentence).entropy - model.explain(sentence).prior_entropy, abs=1e-9)


def test_explain_marks_an_estimated_word_and_coverage_counts_english(open_dir: Path, capsys) -> None:
    model = probsent.load(open_dir)
    explanation = model.explain("She takes warfarin every day.")
    labels = [w.label for w in explanation.words]
    assert labels == ["She", "takes", "warfarin (estimated)", "every", "day", "."]
    assert [w.estimate for w in explanation.words][2].startswith("english: ")
    # five words (the period is the model's own punctuation, not counted): all known to English, four to the model
    assert explanation.coverage == 1.0 and explanation.model_coverage == 0.8
    assert model.coverage("She takes warfarin every day.") == 1.0
    assert model.model_coverage("She takes warfarin every day.") == 0.8
    assert model.explain("Call 1879 now").words[1].estimate == "number: year"
    assert main(["explain", "--model", str(open_dir), "She takes warfarin every day."]) == 0
    out = capsys.readouterr().out
    assert "warfarin (estimated)" in out and "<unk>" not in out


def test_the_oov_set_is_out_of_the_shipped_vocabulary() -> None:
    model = probsent.load()
    sentences, words = load_one_word(OOV_EXPLAIN)
    assert len(sentences) >= 60
    for sentence, word in zip(sentences, words):
        assert word in tokenize(sentence), sentence
        assert model.vocab.index.get(word) is None, word


# -- a missing or damaged table ---------------------------------------------------------------

def test_a_model_without_the_table_reads_unknown_words_as_unk(tmp_path: Path, capsys) -> None:
    path = tmp_path / "m"
    shutil.copytree(DEFAULT_MODEL, path)
    (path / FILE).unlink(missing_ok=True)
    model = probsent.load(path)
    assert model.word_estimates is None
    word = model.explain("She takes warfarin every day.").words[2]
    assert word.unknown and word.label == "warfarin (<unk>)"
    assert word.entropy == scoring_engine(model).term_table("x").terms[0]
    assert model.coverage("She takes warfarin every day.") == model.model_coverage("She takes warfarin every day.") == 0.8


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other vocabulary"])
def test_a_damaged_table_is_one_line_naming_it_and_nothing_is_written(open_dir: Path, tmp_path: Path, capsys,
                                                                      damage: str) -> None:
    path = tmp_path / "m"
    shutil.copytree(open_dir, path)
    table = path / FILE
    data = table.read_bytes()
    if damage == "garbage":
        table.write_bytes(b"not a safetensors file")
    elif damage == "truncated":
        table.write_bytes(data[:len(data) // 2])
    else:
        estimates = WordEstimates.load(path, 50001, 50)
        estimates.vocab_size = 40001
        estimates.vocab_bands = estimates.vocab_bands[:40001]
        estimates.save(path)
    with pytest.raises(InvalidValueError) as raised:
        probsent.load(path)
    assert str(table) in str(raised.value) and "\n" not in str(raised.value)
    page = tmp_path / "page.html"
    assert main(["explain", "--model", str(path), "--html", str(page), "She takes warfarin."]) == 2
    one_error(capsys.readouterr().err, str(table))
    assert not page.exists()


def test_the_same_table_is_written_as_the_same_bytes(open_dir: Path, tmp_path: Path) -> None:
    # safetensors orders the header's metadata keys by a hash map that changes from one save to
    # the next (18 orders in 20 saves of one dict, measured); the table is written with them
    # sorted, so that calibrating a model again leaves its table's bytes as they were
    from safetensors.numpy import load

    def metadata(data: bytes) -> dict:
        return json.loads(data[8:8 + int.from_bytes(data[:8], "little")])["__metadata__"]

    estimates = WordEstimates.load(open_dir, 50001, 50)
    written = set()
    for k in range(8):
        (tmp_path / str(k)).mkdir()
        estimates.save(tmp_path / str(k))
        written.add((tmp_path / str(k) / FILE).read_bytes())
    assert len(written) == 1
    data = written.pop()
    assert list(metadata(data)) == sorted(metadata(data))
    assert metadata(data) == metadata((open_dir / FILE).read_bytes())
    original, again = load((open_dir / FILE).read_bytes()), load(data)
    assert original.keys() == again.keys() and all(np.array_equal(original[k], again[k]) for k in original)


def test_the_shipped_table_fits_the_wheel_bound(open_dir: Path) -> None:
    # the wheel may grow by at most 10 MB (issue 49): the table is stored uncompressed in it at most
    assert os.path.getsize(open_dir / FILE) <= 10 * 10**6
    if (DEFAULT_MODEL / FILE).exists():
        assert os.path.getsize(DEFAULT_MODEL / FILE) <= 10 * 10**6


def test_the_compiled_tokenizer_gives_the_python_ids(open_dir: Path) -> None:
    # every sentence of the package's development sets, and words of every class: the compiled
    # kernel reads English words from its table and sends the others to Python, the Python path
    # asks the index for each; both must give the same ids
    from reproduction.evaluation.length_controlled import ONE_WORD, load_equal_length
    from reproduction.evaluation.tables import load_shorter_specific

    sentences = [*load_one_word(OOV_EXPLAIN)[0], *load_one_word(ONE_WORD)[0], *sum(load_equal_length(), []),
                 *sum(load_shorter_specific(), []), *OOV_SENTENCES,
                 "qxvtrb c3po foo_bar node.js x86-64 30-year real-estate 5:30pm 22nd 1990s 3kg 1,000 3.14 привет ☃ café",
                 # a "word." piece that does not end its sentence is one token, a joined form
                 "I like robotics. How about qxvtrb3. Or zzqx. Then c3po. Fine."]
    token_ids = scoring_engine(probsent.load(open_dir)).token_ids
    compiled_ids, compiled_offsets = token_ids._compiled_ids()(sentences)
    parts = [token_ids(sentences[k:k + 50]) for k in range(0, len(sentences), 50)]
    python_ids = np.concatenate([ids for ids, _ in parts])
    np.testing.assert_array_equal(compiled_ids, python_ids)
    assert (compiled_ids >= len(token_ids.index)).sum() > 100  # the classes are exercised


@pytest.mark.slow
def test_spark_reads_unknown_words_as_the_api_does(open_dir: Path) -> None:
    from tests.spark_support import require_spark

    require_spark()
    from probsent.spark import add_specificity, local_session

    session = local_session(2)
    try:
        frame = session.createDataFrame(list(enumerate(OOV_SENTENCES)), "id int, text string")
        rows = sorted(add_specificity(frame, model=str(open_dir)).collect(), key=lambda r: r.id)
    finally:
        session.stop()
    # the executors load the shipped files (the table among them) and score with the same table
    np.testing.assert_array_equal([r.specificity for r in rows], probsent.load(open_dir).specificity(OOV_SENTENCES))


# -- the fast lookup (round 3) gives the estimator's ids --------------------------------------

def reference_id(token: str, index: dict[str, int], estimates: WordEstimates, english: dict[str, int]) -> int:
    """A token's id by the open vocabulary's rules, one after another, naively (no memo, no
    shortcut): its entry; for a non-ASCII token, its folded form's entry; a number by its shape;
    an English word the model lacks (or its folded form) by its band; a hyphenated compound whose
    parts are all numbers or words the model or English knows, by its rarest part's band; else
    its form. Each class is row ``len(vocabulary) + class``. ``english``: the table's English
    words and their bands, as a dict."""
    from probsent.data.vocab import ENGLISH_BANDS, FORMS, NOT_ENGLISH, NUMBER_SHAPES, fold, form_of

    size = len(index)
    if token in index:
        return index[token]
    if not token:
        return 0
    if not token.isascii() and fold(token) in index:
        return index[fold(token)]
    shape = number_shape(token)
    if shape is not None:
        return size + [name for name, _ in NUMBER_SHAPES].index(shape)

    def english_band(word: str) -> int | None:
        return english.get(word, english.get(fold(word)) if not word.isascii() else None)

    def part_band(part: str) -> int | None:
        if number_shape(part):
            return len(ENGLISH_BANDS)
        entry = index.get(part, index.get(fold(part)) if not part.isascii() else None)
        if entry:  # a word with an entry: the band English gives it, as the table holds it
            band = int(estimates.vocab_bands[entry])
            return None if band == NOT_ENGLISH else band
        return english_band(part)

    band = english_band(token)
    if band is None and "-" in token and all(token.split("-")):
        bands = [part_band(part) for part in token.split("-")]
        band = None if None in bands else min(bands)
    if band is not None:
        return size + len(NUMBER_SHAPES) + band
    return size + len(NUMBER_SHAPES) + len(ENGLISH_BANDS) + 1 + FORMS.index(form_of(token))


HAND_MADE = ["1879", "2023", "0042", "42", "3.14", ".5", "1,000,000", "12,345.67", "5:30", "5:30:15pm", "22nd",
             "101st", "1990s", "90's", "3kg", "2.5mm", "1/2", "1-2", "30-year", "real-estate", "stock-index",
             "x86-64", "cyclooxygenase-1", "covid-19", "-", "--", "a-", "-a", "well-known-ish", "c3po", "h2o",
             "foo_bar", "node.js", "e-mail", "warfarin", "ibuprofen", "kubernetes", "malloc", "qxvtrb", "zzz",
             "café", "naïve", "straße", "ｃａｆé", "ﬁne", "привет", "東京", "☃", "🙂", "١٢٣", "²", "ⅻ", "…", "%", "$",
             "''", "``", "'s", "n't", "<unk>", "", "a" * 300, "ÉCOLE".lower(), "Warfarin".lower(), "İstanbul".lower()]


def test_the_fast_lookup_gives_the_estimators_ids(open_dir: Path, monkeypatch) -> None:
    # round 3's rule (and round 4's): the lookup every Python scoring path takes (EstimatingIndex.ids_of: C
    # dict lookups and a memo) gives the same id as the index's get, and both the naive
    # reference's, on the whole vocabulary, the table's English words, every token of the
    # development sets and hand-made tokens (numbers of each shape, compounds, capitals as the
    # tokenizer lowers them, digits inside, other scripts), with the memo empty, full and reset
    from reproduction.evaluation.length_controlled import ONE_WORD, load_equal_length
    from reproduction.evaluation.tables import load_shorter_specific

    model = probsent.load(open_dir)
    index = scoring_engine(model).token_ids.index
    estimates = model.word_estimates
    plain = dict(model.vocab.index)
    english = dict(zip(estimates.english_words, estimates.english_bands.tolist()))
    sentences = [*load_one_word(OOV_EXPLAIN)[0], *load_one_word(ONE_WORD)[0], *sum(load_equal_length(), []),
                 *sum(load_shorter_specific(), []), *OOV_SENTENCES, "Warfarin, KUBERNETES and Café in 1879; x86-64!"]
    text_tokens = sorted({t for s in sentences for t in tokenize(s)})
    tokens = model.vocab.words + estimates.english_words + text_tokens + HAND_MADE
    rng = np.random.default_rng(0)
    tokens = [tokens[k] for k in rng.permutation(len(tokens))]
    expected = [reference_id(t, plain, estimates, english) for t in tokens]
    assert [index.get(t, 0) for t in tokens] == expected
    cold = index.ids_of(tokens)
    assert cold == expected
    assert index.ids_of(tokens[::-1]) == expected[::-1]  # from the memo
    monkeypatch.setattr(type(index), "MEMO_LIMIT", 10)  # the memo starts again and again
    assert index.ids_of(tokens) == expected
    # round 4: the plain English words' ids (a dict made once per process) are the reference's,
    # they and the others are the table's English words exactly once, and a worker's copy (a
    # pickled index, which makes its own dict and memo) gives the same ids, cold and from its memo
    plain_ids = estimates.plain_english_ids()
    assert all(w.isascii() and w[:1] and not (w[0].isdigit() or w[0] == ".") for w in plain_ids)
    assert {w: reference_id(w, plain, estimates, english) for w in plain_ids} == plain_ids
    others = set(english) - set(plain_ids)
    assert len(plain_ids) + len(others) == len(english) and all(not w.isascii() for w in others)
    copy = pickle.loads(pickle.dumps(index))
    assert copy.estimates._lookups is None and copy._memo == {}
    assert copy.ids_of(tokens) == expected and copy.ids_of(tokens[::-1]) == expected[::-1]
    estimated = sum(i >= len(plain) for i in expected)
    assert estimated > 250_000 and len({i for i in expected if i >= len(plain)}) >= 20  # every class kind is read
    # the terms are the table's rows of those ids: explain's share of each hand-made token is
    # its reference id's term, bit for bit
    table = scoring_engine(model).term_table("x")
    for token in HAND_MADE:
        if token and tokenize(token) == [token]:
            assert model.explain(token).words[0].entropy == table.terms[reference_id(token, plain, estimates, english)], token


def test_the_fast_lookup_holds_for_a_table_the_fit_would_not_write() -> None:
    # round 4: ids_of reads the table's plain English words in C; a hand-made table with English
    # words the fit never keeps (one whose folded form has an entry, ones starting with a digit
    # or ".", an empty one) still gets the naive reference's ids, because only words read as
    # English by themselves are in that dict
    from probsent.data.vocab import EstimatingIndex, Vocabulary, WordEstimates, class_names

    vocab = Vocabulary(["<unk>", "cafe", "real", "the"])
    words = ["café", "1990s", "3d", ".net", "", "estate", "naïve", "x-ray"]
    bands = np.arange(len(words), dtype=np.uint8) % 9
    scale = np.ones((len(class_names()), 2), dtype=np.float32)
    estimates = WordEstimates(scale, scale, words, bands, len(vocab), vocab_bands=np.array([255, 3, 4, 255], np.uint8))
    index = EstimatingIndex(vocab.index, estimates)
    tokens = [*words, "real-estate", "the-estate", "real-1990s", "naive", ".5", "zzz", "3d-x", "café-real", "x-ray"]
    english = dict(zip(words, bands.tolist()))
    expected = [reference_id(t, dict(vocab.index), estimates, english) for t in tokens]
    assert set(estimates.plain_english_ids()) == {"estate", "x-ray"}
    assert index.ids_of(tokens) == expected == [index.get(t, 0) for t in tokens]
    assert index.ids_of(tokens) == expected  # from the memo
