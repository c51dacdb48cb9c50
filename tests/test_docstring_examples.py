"""The Examples sections of the public API's docstrings run as doctests with the shipped model:
probsent.load, SentenceModel's public methods, and probsent.spark's add_specificity and
add_encoding (those need pyspark and Java, and take seconds: marked slow). An example that no
longer prints what its docstring says fails here."""
from __future__ import annotations

import doctest

import numpy as np
import pytest

import probsent
import probsent.util
from probsent.api import SentenceModel

API = [probsent.load] + [getattr(SentenceModel, name) for name in (
    "encode", "entropy", "specificity", "probability", "percentile", "coverage", "similarity",
    "similarity_pairwise", "explain", "save", "get_sentence_embedding_dimension", "news_probability", "note",
    "semantic_search")] + [probsent.util.semantic_search]


def run_examples(obj, globs: dict) -> doctest.TestResults:
    """Run ``obj``'s docstring examples; fail with doctest's report of the first difference."""
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, obj.__qualname__, globs=dict(globs))
    assert tests and tests[0].examples, f"{obj.__qualname__} has no Examples"
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("obj", API, ids=lambda obj: obj.__qualname__)
def test_api_examples_run(obj):
    if obj.__name__ == "save":
        pytest.importorskip("torch")
    run_examples(obj, {"load": probsent.load, "np": np})


@pytest.mark.slow
@pytest.mark.parametrize("name", ["add_specificity", "add_encoding"])
def test_spark_examples_run(name):
    from tests.spark_support import require_spark

    require_spark()
    import probsent.spark as spark

    run_examples(getattr(spark, name), {name: getattr(spark, name), "local_session": spark.local_session})
