"""What users see of probsent: ``SentenceModel``'s public members are exactly the ones a user
calls (the command line, corpus scoring, Spark and spaCy share the model's scoring engine,
``probsent.api.scoring_engine(model)``), every public method documents each of its parameters in a
numpydoc Parameters section (the entries several methods share written once, in
``probsent.api.SHARED_PARAMETERS``), and the top level of ``probsent/`` stays small."""
from __future__ import annotations

import inspect
import re
import subprocess
import sys

import pytest

import probsent
from probsent import api
from probsent.api import SHARED_PARAMETERS, SentenceModel, _shared_parameters
from tests.helpers import REPO

USER_FACING = {
    # what a model is: its parts, read as loaded (calibration and percentiles: None without them)
    "vocab", "config", "calibration", "percentiles", "path", "encoder", "probabilistic", "device",
    # what a user calls
    "to", "get_sentence_embedding_dimension", "encode", "entropy", "specificity", "percentile", "probability",
    "news_probability", "note", "coverage", "similarity", "similarity_pairwise", "semantic_search", "explain",
    "save",
}
MAX_TOP_LEVEL_MODULES = 20


def test_sentence_model_has_only_user_facing_public_members() -> None:
    model = probsent.load()
    assert {name for name in dir(model) if not name.startswith("_")} == USER_FACING


def _documented(doc: str) -> list[str]:
    """The parameter names of a numpydoc Parameters section (``a, b : ...`` names two)."""
    lines = inspect.cleandoc(doc).splitlines()
    start = lines.index("Parameters") + 2  # the title and its underline
    assert set(lines[start - 1]) == {"-"}
    names = []
    for line in lines[start:]:
        if not line.strip() or set(line.strip()) == {"-"}:
            break
        if not line.startswith(" "):  # an entry's first line; its description is indented
            names += [n.strip() for n in line.split(" : ")[0].split(",")]
    return names


def _public_methods() -> dict[str, object]:
    methods = {name: member for name, member in vars(SentenceModel).items()
               if not name.startswith("_") and inspect.isfunction(member)}
    return {**methods, "load": api.load}


@pytest.mark.parametrize("name", sorted(_public_methods()))
def test_every_public_method_documents_each_parameter(name: str) -> None:
    method = _public_methods()[name]
    parameters = [p for p in inspect.signature(method).parameters if p != "self"]
    if not parameters:
        return
    doc = method.__doc__
    assert not re.search(r"^\s*\{[\w, ]+\}$", doc, flags=re.MULTILINE)
    assert _documented(doc) == parameters


def test_shared_entries_are_written_once_and_filled_in_everywhere() -> None:
    source = inspect.getsource(api)
    for name, (head, _) in SHARED_PARAMETERS.items():
        assert source.count(head) == 1, name  # its one declaration
    for method in _public_methods().values():
        doc = inspect.cleandoc(method.__doc__)
        for name in inspect.signature(method).parameters:
            if name in SHARED_PARAMETERS:
                head, text = SHARED_PARAMETERS[name]
                assert f"\n{head}\n" in doc
                assert " ".join(doc.split(f"\n{head}\n", 1)[1].split()).startswith(" ".join(text.split()))


def test_probsent_imports_without_docstrings() -> None:
    """python -OO drops docstrings: the template then has nothing to fill and the package loads."""
    done = subprocess.run([sys.executable, "-OO", "-c", "import probsent; print(probsent.SentenceModel.encode.__doc__)"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr[-500:]


def test_the_template_fills_a_hand_made_docstring() -> None:
    def f(batch_size: int = 256) -> None:
        """Do it.

        Parameters
        ----------
        {batch_size}
        """
    filled = _shared_parameters(f).__doc__
    assert "        batch_size : int, default 256\n            Sentences encoded together." in filled

    def g() -> None:
        """Parameters
        ----------
        {no_such_parameter}
        """
    with pytest.raises(KeyError):
        _shared_parameters(g)


def test_the_top_level_holds_at_most_twenty_modules() -> None:
    # every .py file directly in probsent/, __init__ and __main__ included
    assert len(sorted((REPO / "probsent").glob("*.py"))) <= MAX_TOP_LEVEL_MODULES
