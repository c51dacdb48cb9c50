"""The core install (issue 33): scoring and encoding import no torch, pyspark or spaCy, and work
where torch cannot be imported at all; the paths that need torch say so in one line."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
# makes torch unimportable in the child process, as in a core-only virtual environment
WITHOUT_TORCH = "import sys; sys.modules['torch'] = None\n"


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO)


def test_every_core_path_works_without_torch() -> None:
    """Load, encode, score, P(specific), explain, similarity and the CLI's scoring commands with
    torch unimportable; after each call, none of torch, pyspark and spaCy is imported."""
    code = WITHOUT_TORCH + """
import numpy as np
import probsent
from probsent.cli import main
model = probsent.load()
sentences = ["The Dow Jones industrial average fell 2.3 % to 10,421.67 on Tuesday.", "It is good.", None]
calls = [lambda: model.encode(sentences), lambda: model.encode(sentences, normalize_embeddings=True),
         lambda: model.specificity(sentences), lambda: model.entropy(sentences), lambda: model.probability(sentences),
         lambda: model.explain(sentences[0]), lambda: model.similarity(sentences, sentences[:2]),
         lambda: model.similarity_pairwise(sentences, sentences[::-1]), lambda: repr(model),
         lambda: model.get_sentence_embedding_dimension(), lambda: model.to("cpu"),
         lambda: main(["specificity", "It is good."]), lambda: main(["explain", "It is good."])]
for call in calls:
    call()
    loaded = [name for name in ("torch", "pyspark", "spacy") if sys.modules.get(name) is not None]
    assert not loaded, loaded
print("ok")
"""
    out = _python(code)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr


@pytest.mark.parametrize("call,needs", [
    ("probsent.load(sys.argv[1])", "PyTorch"),  # an LSTM model
    ("probsent.load().encode('x', convert_to_tensor=True)", "convert_to_tensor"),
    ("probsent.load().encoder", "torch module"),
])
def test_torch_paths_say_so_in_one_line(tmp_path: Path, call: str, needs: str) -> None:
    from probsent.data.vocab import UNKNOWN, Vocabulary
    from probsent.model_directory import write_model_dir
    from probsent.models import build_model

    path = tmp_path / "lstm"
    path.mkdir()
    write_model_dir(path, build_model({"type": "lstmavg", "vocab_size": 2, "dim": 4, "hidden": 3}),
                    Vocabulary([UNKNOWN, "a"]))
    code = WITHOUT_TORCH + f"""
import probsent
from probsent.errors import ProbsentError
try:
    {call}
except ProbsentError as exc:
    print(exc)
"""
    out = _python(code, str(path))
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and len(lines) == 1, (out.stdout, out.stderr)
    assert needs in lines[0] and "pip install 'probsent[train]'" in lines[0]


@pytest.mark.parametrize("command,extra", [("train", "train"), ("eval", "eval")])
def test_training_commands_say_so_without_torch(command: str, extra: str) -> None:
    out = _python(WITHOUT_TORCH + "from probsent.cli import main; sys.exit(main(sys.argv[1:]))", command, "--help")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert f"probsent {command} needs PyTorch" in out.stderr and f"pip install 'probsent[{extra}]'" in out.stderr


def test_a_gpu_device_without_torch_runs_on_the_cpu_with_one_note() -> None:
    code = WITHOUT_TORCH + """
import warnings
import probsent
for device in ("auto", "cuda", "cuda:1"):
    for call in (lambda: probsent.load(device=device), lambda: probsent.load().to(device)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = call()
        assert model.device == "cpu" and model.specificity("It is good.") > 0
        assert len(caught) == 1 and "PyTorch is not installed" in str(caught[0].message), [str(w.message) for w in caught]
        assert caught[0].filename != probsent.api.__file__  # the note points at the caller's line
        assert sys.modules.get("torch") is None
print("ok")
"""
    out = _python(code)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("blocked,code,extra", [
    ("pandas", "import probsent.spark", "spark"),
    ("pyspark", "import probsent.spark", "spark"),
    ("spacy", "import probsent.integrations.spacy", "spacy"),
])
def test_an_extras_import_error_names_the_extra(blocked: str, code: str, extra: str) -> None:
    out = _python(f"import sys; sys.modules[{blocked!r}] = None\n" + f"""
try:
    {code}
except ModuleNotFoundError as exc:
    print(exc)
""")
    assert out.returncode == 0 and out.stdout.count("\n") == 1, out.stderr
    assert blocked in out.stdout and f"pip install 'probsent[{extra}]'" in out.stdout


def test_python_dash_m_probsent_is_the_command() -> None:
    out = subprocess.run([sys.executable, "-m", "probsent", "--version"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0 and out.stdout.startswith("probsent ")


def test_extras_match_the_jobs() -> None:
    """The core holds no torch, Spark, spaCy or plotting; each job has its extra; [all] is every one."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    for heavy in ("torch", "pyspark", "spacy", "matplotlib", "datasets", "wordfreq", "minilm"):
        assert heavy not in core, heavy
    extras = project["optional-dependencies"]
    assert {"train", "spark", "spacy", "datasets", "eval", "all", "test"} <= set(extras)
    assert any(d.startswith("torch") for d in extras["train"])
    assert extras["all"] == ["probsent[train,eval,spark,spacy,datasets]"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "run: core" in makefile and "-e '.[all,test]'" in makefile
    assert makefile.index("pip install --quiet $(TORCH)") < makefile.index("-e '.[all,test]'")


def test_the_wheel_holds_the_shipped_model_and_the_numpy_inference(tmp_path: Path) -> None:
    """What ``make dist`` builds: the wheel carries the model files and every inference module."""
    import zipfile

    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                          "--wheel-dir", str(tmp_path), str(REPO)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("probsent-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("config.json", "model.safetensors", "vocab.txt", "calibration.json", "MODEL_CARD.md"):
        assert f"probsent/pretrained/wlo/{name}" in names, name
    assert {"probsent/__main__.py", "probsent/inference/closed_form.py", "probsent/inference/array_encoder.py"} <= names
    metadata = next(zipfile.ZipFile(wheel).read(n).decode() for n in names if n.endswith("METADATA"))
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert not any("torch" in line and "extra ==" not in line for line in requires)


def test_save_and_export_work_without_torch_and_keep_the_dtype(tmp_path: Path) -> None:
    """Issue 50, item 16: the core install saves and exports (NumPy and safetensors); a float16
    model saved stays float16 (the same bytes of weights as the shipped file), and both copies
    score as the shipped model."""
    code = WITHOUT_TORCH + """
import probsent
from probsent.cli import main
model = probsent.load()
model.save(sys.argv[1] + '/saved')
assert main(['export', '--model', str(model.path), '--out', sys.argv[1] + '/small', '--max-words', '500',
             '--float16', '--data-dir', sys.argv[1] + '/nowhere']) == 0
loaded = [name for name in ('torch', 'pyspark', 'spacy') if sys.modules.get(name) is not None]
assert not loaded, loaded
print('ok')
"""
    out = _python(code, str(tmp_path))
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr
    from safetensors.numpy import load_file

    import probsent

    shipped = probsent.load()
    saved, small = load_file(str(tmp_path / "saved" / "model.safetensors")), probsent.load(tmp_path / "small")
    original = load_file(str(shipped.path / "model.safetensors"))
    assert {name: (a.dtype, a.tobytes()) for name, a in saved.items()} == \
        {name: (a.dtype, a.tobytes()) for name, a in original.items()}
    text = ["It is good.", "The Dow Jones industrial average fell 2.3 % on Tuesday."]
    assert probsent.load(tmp_path / "saved").specificity(text).tolist() == shipped.specificity(text).tolist()
    assert len(small.vocab) == 501 and small.specificity("It is good.") == shipped.specificity("It is good.")


def test_save_with_torch_keeps_float16_and_writes_float32_once_changed(tmp_path: Path) -> None:
    """Saving through the torch module keeps a float16 model float16; a weight float16 cannot
    hold makes it float32 (never a silent rounding)."""
    import torch
    from safetensors.numpy import load_file

    import probsent

    model = probsent.load()
    model.encoder  # the torch module from now on
    model.save(tmp_path / "same")
    assert {a.dtype for a in load_file(str(tmp_path / "same" / "model.safetensors")).values()} == {np.dtype("float16")}
    with torch.no_grad():
        model.encoder.scale.weight[5, 0] = 1.0 + 2.0 ** -20  # not a float16 number
    model.save(tmp_path / "changed")
    stored = load_file(str(tmp_path / "changed" / "model.safetensors"))
    assert stored["scale.weight"].dtype == np.float32 and stored["scale.weight"][5, 0] == np.float32(1.0 + 2.0 ** -20)
