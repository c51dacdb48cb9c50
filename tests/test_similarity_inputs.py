"""Numbers of issue 43, finding 9: a tuple of sentences is sentences; encode's variance of a long
document is never 0 (it saturates at float32's smallest positive number, as it saturates at the
largest), so encode's own output goes back into similarity; the kernel of a document with itself
is 1, not NaN."""
from __future__ import annotations

import numpy as np
import pytest

import probsent

NEWS = ("The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday after the Federal "
        "Reserve raised interest rates.")


@pytest.fixture(scope="module")
def model():
    return probsent.load()


def test_a_tuple_of_sentences_is_sentences(model) -> None:
    sentences = ("A cat sat on the mat.", "A dog slept.")
    np.testing.assert_array_equal(model.similarity(sentences, ["A cat."]), model.similarity(list(sentences), ["A cat."]))
    np.testing.assert_array_equal(model.similarity_pairwise(sentences, sentences[::-1]),
                                  model.similarity_pairwise(list(sentences), list(sentences[::-1])))


def test_a_long_documents_variance_is_positive_and_goes_back_into_similarity(model) -> None:
    docs = [" ".join([NEWS] * 60), " ".join([NEWS] * 120), "A cat."]  # about 1,100 and 2,300 words
    mean, variance = model.encode(docs)
    log_variance = model.encode(docs, log_variance=True)[1]
    assert (log_variance[:2] < np.log(np.finfo(np.float32).smallest_subnormal)).any()  # below float32's range
    assert (variance > 0).all() and variance.dtype == np.float32
    tiny = np.finfo(np.float32).smallest_subnormal
    np.testing.assert_array_equal(variance[log_variance < np.log(tiny)], tiny)  # saturated, as at the top
    np.testing.assert_array_equal(model.similarity((mean, variance), docs), model.similarity(docs, docs))
    assert np.isfinite(model.similarity((mean, variance), docs, measure="kernel")).all()


@pytest.mark.parametrize("text", ["gonna " * 1000, " ".join([NEWS] * 100)])
def test_the_kernel_of_a_document_with_itself_is_one(model, text: str) -> None:
    assert model.similarity(text, text, measure="kernel") == 1.0
    assert model.similarity_pairwise([text], [text], measure="kernel")[0] == 1.0
