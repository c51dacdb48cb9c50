"""The core install's last rough edges (issue 44, item 3): the device "auto" on a machine without
CUDA, the API's type errors in plain English, what the model card counts as unknown."""
from __future__ import annotations

import pytest

import probsent
from probsent.inference.array_encoder import ArrayEncoder


def test_auto_without_cuda_is_the_numpy_model(monkeypatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    model = probsent.load(device="auto")
    assert isinstance(model._arrays, ArrayEncoder)  # the CPU, read with NumPy: no torch module built
    assert model.specificity("It is good.") == probsent.load().specificity("It is good.")


@pytest.mark.parametrize("item,kind", [(1, "int"), (b"x", "bytes"), (["a"], "list")])
def test_a_sentence_of_the_wrong_type_is_named_plainly(item, kind) -> None:
    with pytest.raises(TypeError, match=rf"^sentence 1 is of type {kind}, not str$"):
        probsent.load().specificity(["fine", item])


def test_the_model_card_counts_the_unknown_words_explain_shows() -> None:
    from reproduction.experiments.model_card import EXAMPLES, unknown_words

    model = probsent.load()
    words, unknown = unknown_words(model)
    marked = {w.token for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()
              for w in model.explain(line).words if w.word is None}
    assert unknown == sorted(marked) and set(unknown) <= set(words)
    assert "2019" in unknown and "10,421.67" in unknown  # numbers count, as coverage counts them


def test_train_demo_says_why_its_scores_differ_from_the_shipped_models() -> None:
    """The shipped model is written with a start variance S: every score moves by -dim/2 log S,
    which make train-demo's note states with the number the shipped model's config gives."""
    import math
    from pathlib import Path

    from probsent.readouts.word_terms import prior_entropy

    model = probsent.load()
    dim, start = model.get_sentence_embedding_dimension(), model.config["model"]["start_variance"]
    shift = prior_entropy(dim, 1.0) - prior_entropy(dim, start)  # the score's move from the paper's unit
    assert shift == pytest.approx(-dim / 2 * math.log(start))
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    demo = makefile[makefile.index("\ntrain-demo:"):].split("\n\n")[0]
    assert "--start-variance" in demo and f"+{shift:.0f} for its S = 1/{1 / start:.0f} and dim {dim}" in demo
