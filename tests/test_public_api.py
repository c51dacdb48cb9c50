"""What users see of probsent: ``SentenceModel``'s public members are exactly the ones a user
calls (the command line, corpus scoring, Spark and spaCy share the model's scoring engine,
``probsent.api.scoring_engine(model)``), every public method documents each of its parameters in a
numpydoc Parameters section (the entries several methods share written once, in
``probsent.api.SHARED_PARAMETERS``), the top level of ``probsent/`` stays small, and the public
modules beyond the API (training, the model plug-ins, the Gaussian formulas, export) declare
exactly what they offer."""
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
    "word_estimates",  # the open vocabulary (issue 49): None without estimated_words.safetensors
    # what a user calls
    "to", "get_sentence_embedding_dimension", "encode", "entropy", "specificity", "percentile", "probability",
    "news_probability", "note", "coverage", "model_coverage", "similarity", "similarity_pairwise", "semantic_search", "explain",
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


# the public modules beyond probsent.api, and what each declares (docs/TRAINING.md, docs/ARCHITECTURE.md)
PUBLIC_MODULES = {
    "probsent.training": {"Trainer", "TrainConfig", "SETTINGS", "SCRAMBLE", "MappedPairs", "load_mapped_pairs",
                          "apply_mixture", "build_vocabulary", "tune_threshold", "predict_specific",
                          "accuracy_at_tuned_threshold", "pearson"},
    "probsent.models": {"MODEL_TYPES", "Encoding", "SentenceEncoder", "WordEntropyTerms", "build_model", "model_class",
                        "register_model", "unregister_model", "with_word_entropy_terms", "WLO", "WordAverage",
                        "WordSum", "LSTMAverage", "LSTMGaussian"},  # the model plug-in API (docs/ARCHITECTURE.md)
    "probsent.gaussian": {"entropy", "kl_to_standard_normal", "expected_inner_product"},
    "probsent.export": {"export_model"},
    # for commands added through the entry point group probsent.commands
    "probsent.inputs": {"positive_int"},
    "probsent.files.atomic_writes": {"atomic_path", "write_text", "write_json"},
}


@pytest.mark.parametrize("module", sorted(PUBLIC_MODULES))
def test_each_public_module_declares_its_names_and_documents_them(module: str) -> None:
    import importlib

    imported = importlib.import_module(module)
    assert set(imported.__all__) == PUBLIC_MODULES[module]
    for name in imported.__all__:
        value = getattr(imported, name)
        if callable(value):
            assert (value.__doc__ or "").strip(), f"{module}.{name} has no docstring"
    assert {"scoring_engine", "Vocabulary", "tokenize", "language_of"} <= set(api.__all__)


def test_the_public_training_module_loads_its_names_only_when_used() -> None:
    """``import probsent.training`` loads neither torch nor numba; asking for ``Trainer`` does, and an
    unknown name is the usual AttributeError."""
    code = ("import sys, probsent.training as t; assert 'torch' not in sys.modules and 'numba' not in sys.modules; "
            "from probsent.training import TrainConfig, tune_threshold; assert tune_threshold([1, 2, 3, 4], "
            "[False, False, True, True]) == 2.5; assert 'torch' not in sys.modules; "
            "assert t.Trainer.__name__ == 'Trainer' and 'torch' in sys.modules; "
            "print(hasattr(t, 'no_such_name'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr[-800:]
