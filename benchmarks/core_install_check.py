"""Run in a virtual environment with the core install only (``make core-check``): the shipped
model encodes, scores, explains and compares sentences, torch cannot be imported, and the
paths that need torch say so in one line. Exits non-zero on any failure."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

import probsent


def main() -> int:
    assert importlib.util.find_spec("torch") is None, "torch is importable in the core install"
    model = probsent.load()
    sentences = ["The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday.", "It is good."]
    mean, variance = model.encode(sentences)
    assert mean.shape == (2, model.get_sentence_embedding_dimension()) and np.all(variance > 0)
    scores = model.specificity(sentences)
    assert scores[0] > scores[1]
    assert 0 <= model.probability(sentences[0]) <= 1
    assert model.explain(sentences[0]).words
    assert np.isfinite(model.similarity(sentences, sentences[:1])).all()
    # the language rule reads the word table shipped in the wheel (no wordfreq in the core)
    assert importlib.util.find_spec("wordfreq") is None, "wordfreq is importable in the core install"
    for wing in ("reproduction", "probsent.evaluation"):  # the research wing is never in the wheel
        assert importlib.util.find_spec(wing) is None, f"{wing} is importable in the core install"
    assert model.note("Le président a annoncé une réforme des retraites mardi.") == "looks French"
    with warnings.catch_warnings(record=True) as caught:  # no torch: "auto" runs on the CPU, with one note
        warnings.simplefilter("always")
        assert probsent.load(device="auto").device == "cpu"
    assert len(caught) == 1 and "PyTorch is not installed" in str(caught[0].message), caught
    with tempfile.TemporaryDirectory() as tmp:  # save and export are NumPy and safetensors operations
        model.save(os.path.join(tmp, "copy"))
        assert probsent.load(os.path.join(tmp, "copy")).specificity(sentences).tolist() == scores.tolist()
        out = subprocess.run([sys.executable, "-m", "probsent", "export", "--model", str(model.path), "--out",
                              os.path.join(tmp, "small"), "--max-words", "500", "--data-dir", os.path.join(tmp, "none")],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    for name in ("torch", "pyspark", "spacy", "wordfreq"):
        assert name not in sys.modules, name
    out = subprocess.run([sys.executable, "-m", "probsent", "train", "--help"], capture_output=True, text=True)
    assert out.returncode == 2 and "pip install 'probsent[train]'" in out.stderr, out.stderr
    print(f"core install: ok ({model!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
