"""The spaCy component as TextDescriptives' users expect it (issue 33, item 6): document
attributes that do not grow with the number of sentences, span._.probability, a per-token
attribute, ``assigns`` declared, nlp.pipe(n_process=2) and to_disk / spacy.load."""
from __future__ import annotations

import numpy as np
import pytest

import probsent

pytestmark = pytest.mark.slow

SENTENCE = "The Dow fell 2.3 % to 10,421.67 on Tuesday."
TEXTS = [f"{SENTENCE} Things happen.", "It is good. A man plays a guitar. Mr. Smith left.", "", "One more."]


@pytest.fixture(scope="module")
def model():
    return probsent.load()


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    """The component registered (importing it registers the factory) before this file's tests:
    imported here, not at collection, so that ``make test-fast``, which leaves the file out, never
    imports spaCy."""
    import probsent.integrations.spacy  # noqa: F401


@pytest.fixture(scope="module")
def nlp():
    import spacy

    pipeline = spacy.blank("en")
    pipeline.add_pipe("sentencizer")
    pipeline.add_pipe("probsent")
    return pipeline


def _summary(doc) -> str:
    """Every attribute the component sets, as text (a blank text's NaN compares equal as "nan")."""
    return repr([doc._.specificity, doc._.probability, doc._.percentile, doc._.coverage, doc._.specificity_mean,
                 doc._.specificity_total, doc._.probability_mean,
                 [(s._.specificity, s._.probability, s._.percentile, s._.coverage) for s in doc.sents],
                 [t._.entropy_share for t in doc]])


def test_document_means_do_not_grow_with_the_number_of_sentences(nlp, model) -> None:
    for repeat in (1, 2, 5):
        doc = nlp(" ".join([SENTENCE] * repeat))
        assert len(list(doc.sents)) == repeat
        assert doc._.specificity_mean == pytest.approx(model.specificity(SENTENCE), abs=1e-9)
        assert doc._.probability_mean == pytest.approx(model.probability(SENTENCE), abs=1e-9)
        assert doc._.specificity_total == pytest.approx(repeat * model.specificity(SENTENCE), abs=1e-9)
        assert doc._.specificity == pytest.approx(model.specificity(doc.text), abs=1e-9)  # the whole text


def test_sentence_probability_and_token_shares(nlp, model) -> None:
    doc = nlp(TEXTS[1])
    sentences = list(doc.sents)
    assert [s._.probability for s in sentences] == pytest.approx(model.probability([s.text for s in sentences]))
    prior = model.explain("").prior_entropy
    for sentence in sentences:
        assert all(t._.entropy_share == -t._.specificity_share for t in sentence)
        assert prior + sum(t._.entropy_share for t in sentence) == pytest.approx(model.entropy(sentence.text), abs=1e-9)


def test_a_doc_without_sentences_is_its_own_mean() -> None:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("probsent")
    doc = nlp(SENTENCE)
    assert doc._.specificity_mean == doc._.specificity_total == doc._.specificity


def test_assigns_names_every_attribute(nlp) -> None:
    from probsent.integrations.spacy import ATTRIBUTES

    assigns = nlp.get_pipe_meta("probsent").assigns
    expected = {f"{owner}._.{name}" for owner, names in ATTRIBUTES.items() for name in names}
    assert set(assigns) == expected and "span._.probability" in expected and "token._.entropy_share" in expected
    nlp(TEXTS[0])  # every declared attribute is set
    doc = nlp(TEXTS[0])
    for owner, names in ATTRIBUTES.items():
        target = {"doc": doc, "span": next(doc.sents), "token": doc[0]}[owner]
        assert all(getattr(target._, name) is not None for name in names), owner


def test_pipe_with_two_processes_equals_one(nlp) -> None:
    one = [_summary(doc) for doc in nlp.pipe(TEXTS * 3, batch_size=2)]
    two = [_summary(doc) for doc in nlp.pipe(TEXTS * 3, batch_size=2, n_process=2)]
    assert two == one


def test_to_disk_and_load(nlp, tmp_path) -> None:
    import spacy

    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["sentencizer", "probsent"]
    assert [_summary(loaded(text)) for text in TEXTS] == [_summary(nlp(text)) for text in TEXTS]
    assert np.isfinite(loaded(TEXTS[0])._.specificity_mean)
