"""The spaCy component: specificity per doc and sentence, exact token shares, P(specific),
batching through nlp.pipe, and its registration by import and by entry point (a blank
English pipeline and the rule-based sentencizer: nothing downloaded)."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import probsent
from probsent.text.tokenize import tokenize

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TEXTS = ['He said "I can\'t go." The Dow fell 2.3 % to 10,421.67 on Tuesday. Mr. Smith left.',
         "Things happen.", "", "  Gonna   wait (maybe)...  ", "ΣΊΣΥΦΟΣ İstanbul straße, 'tis true!"]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    """The component registered (importing it registers the factory) before this file's tests:
    imported here, not at collection, so that ``make test-fast``, which leaves the file out, never
    imports spaCy."""
    import probsent.integrations.spacy  # noqa: F401


def pipeline(sentences: bool = True, **config):
    import spacy  # the spacy extra, which make test installs

    nlp = spacy.blank("en")
    if sentences:
        nlp.add_pipe("sentencizer")
    nlp.add_pipe("probsent", config=config)
    return nlp


def test_doc_sentence_and_token_scores_add_up_to_the_models_entropy(model) -> None:
    prior = model.explain("").prior_entropy  # the entropy of a sentence with no token
    for text in TEXTS:
        doc = pipeline()(text)
        assert doc._.specificity == pytest.approx(model.specificity(text), abs=1e-12, nan_ok=True)
        assert doc._.probability == pytest.approx(model.probability(text), abs=1e-12, nan_ok=True)
        assert doc._.percentile == pytest.approx(model.percentile(text), abs=1e-12, nan_ok=True)
        assert doc._.coverage == pytest.approx(model.coverage(text), abs=1e-12, nan_ok=True)
        assert np.isnan(doc._.specificity) == (not text.strip())  # blank: NaN, as in the API
        for sentence in doc.sents:
            assert sentence._.specificity == pytest.approx(model.specificity(sentence.text), abs=1e-12)
            assert sentence._.percentile == pytest.approx(model.percentile(sentence.text), abs=1e-12, nan_ok=True)
            assert sentence._.coverage == pytest.approx(model.coverage(sentence.text), abs=1e-12)
            shares = [token._.entropy_share for token in sentence]
            assert prior + sum(shares) == pytest.approx(model.entropy(sentence.text), abs=1e-9)
            # the specificity's shares have the score's sign: they add up to the specificity
            assert -prior + sum(t._.specificity_share for t in sentence) == pytest.approx(sentence._.specificity)
    # without sentences: the doc's text is the unit; a span is scored as its text reads
    doc = pipeline(sentences=False)(TEXTS[0])
    assert not doc.has_annotation("SENT_START")
    assert prior + sum(t._.entropy_share for t in doc) == pytest.approx(model.entropy(TEXTS[0]), abs=1e-9)
    assert doc[:]._.specificity == doc._.specificity


def test_document_means_are_over_the_sentences_that_can_be_read(model) -> None:
    """Issue 50, item 17: a whitespace-only sentence (NaN) or a short one whose P(specific) is
    withheld ("Thanks!") leaves the means and the total of the others, not NaN."""
    readable = ["The Dow fell 2.3 % to 10,421.67 on Tuesday.", "The committee approved the budget on Monday."]
    doc = pipeline()(readable[0] + " Thanks! " + readable[1] + "\n\n \n")
    parts = [s.text for s in doc.sents]
    assert "Thanks!" in [p.strip() for p in parts]
    scores = np.array([model.specificity(text) for text in parts])
    probabilities = np.array([model.probability(text) for text in parts])
    assert np.isnan(probabilities).any()  # "Thanks!" (and any blank part) is withheld
    assert doc._.specificity_mean == pytest.approx(np.nanmean(scores), abs=1e-12)
    assert doc._.specificity_total == pytest.approx(np.nansum(scores), abs=1e-9)
    assert doc._.probability_mean == pytest.approx(np.mean(model.probability(readable)), abs=1e-12)
    blank = pipeline()("  \n ")
    assert np.isnan(blank._.specificity_mean) and np.isnan(blank._.specificity_total)  # nothing to read


def test_any_span_of_an_annotated_doc_has_a_value(model) -> None:
    """Issue 50, item 17: ``doc[0:4]`` (not a sentence) is scored as its text reads."""
    doc = pipeline()(TEXTS[0])
    span = doc[0:4]
    assert span.text not in [s.text for s in doc.sents]
    assert span._.specificity == model.specificity(span.text)
    assert span._.probability == pytest.approx(model.probability(span.text), abs=1e-12, nan_ok=True)
    assert span._.percentile == pytest.approx(model.percentile(span.text), abs=1e-12, nan_ok=True)
    assert span._.coverage == model.coverage(span.text)
    import spacy

    assert spacy.blank("en")("not annotated")[0:1]._.specificity is None


def test_each_share_goes_to_the_token_where_its_words_start(model) -> None:
    doc = pipeline()('He said "I can\'t go."')
    explained = model.explain(doc.text)  # the same text: one sentence
    by_token = {t.text: t._.entropy_share for t in doc}
    words = {w.token: w.entropy for w in explained.words}
    assert by_token["ca"] == pytest.approx(words["ca"]) and by_token["said"] == pytest.approx(words["said"])
    assert doc[2]._.entropy_share == pytest.approx(words["``"])  # the opening quote
    assert doc[-1]._.entropy_share == pytest.approx(words["''"])  # the closing one
    ranks = {w.token: w.rank for w in explained.words}  # the explanation's scale, token by token
    assert {t.text: t._.specificity_rank for t in doc}["said"] == ranks["said"]
    assert all(t._.unknown is False for t in doc)


def test_unknown_words_and_ranks_are_the_explanations(model) -> None:
    text = "Zzqxv published relativity in 1905."
    doc = pipeline()(text)
    explained = model.explain(text)
    assert [t._.unknown for t in doc] == [w.word is None for w in explained.words]
    assert [t._.specificity_rank for t in doc] == [w.rank for w in explained.words]
    assert [t._.specificity_share for t in doc] == [-w.entropy for w in explained.words]


def test_token_starts_are_character_offsets() -> None:
    from probsent.integrations.spacy import token_starts

    text = 'He said "I can\'t go," Mr. Smith\'s "gonna" be...'
    tokens = tokenize(text)
    starts = token_starts(text, tokens)
    for token, start in zip(tokens, starts):
        if token in ("``", "''"):
            assert text[start] == '"'
        else:
            assert text[start:start + len(token)].lower() == token
    # a lowercasing that lengthens a character: every token still gets an offset, in order
    text = "İİ ab cd"
    starts = token_starts(text, tokenize(text))
    assert starts == sorted(starts) and text[starts[-1]:] == "cd"


def test_pipe_batches_through_one_model_call(model, monkeypatch) -> None:
    nlp = pipeline()
    component = nlp.get_pipe("probsent")
    calls = []
    original = component.model.specificity
    monkeypatch.setattr(component.model, "specificity", lambda texts, *a: calls.append(len(texts)) or original(texts, *a))
    docs = list(nlp.pipe(TEXTS * 3, batch_size=50))
    assert len(calls) == 1  # every doc and sentence of the batch at once
    expected = [pipeline()(text)._.specificity for text in TEXTS * 3]
    assert [d._.specificity for d in docs] == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_uncalibrated_and_deterministic_models(tmp_path, make_model) -> None:
    wordavg = make_model("wordavg")
    wordavg.save(tmp_path / "wordavg")
    doc = pipeline(model=str(tmp_path / "wordavg"))("a cat sat. the dog ran.")
    assert doc._.probability is None  # no calibration.json
    assert doc._.specificity == pytest.approx(float(np.linalg.norm(wordavg.encode(doc.text))), rel=1e-5)
    assert all(t._.specificity_share is None and t._.specificity_rank is None for t in doc)  # no per-word terms


def test_entry_point_registers_the_factory_without_an_import(tmp_path) -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["spacy_factories"]
    assert declared == {"probsent": "probsent.integrations.spacy:make_probsent"}
    # the installed metadata may predate this checkout's pyproject: declare the entry point in a
    # distribution of its own on the path, as pip would
    info = tmp_path / "probsent_entry-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: probsent-entry\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[spacy_factories]\nprobsent = {declared['probsent']}\n")
    code = ("import sys, spacy\nnlp = spacy.blank('en')\nnlp.add_pipe('probsent')\n"
            "assert 'probsent.integrations.spacy' in sys.modules\nprint(nlp('The Dow fell.')._.specificity)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) == pytest.approx(probsent.load().specificity("The Dow fell."), abs=1e-9)
