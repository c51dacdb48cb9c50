"""The glossary of docs/ARCHITECTURE.md holds: "corpus" and "encoding" mean one thing each
(issue 51, item 5).

- corpus: the sentences a user scores, encodes or searches. Training reads *pairs*, so no name,
  message, comment or docstring of ``probsent/data/`` and ``probsent/training/`` says corpus or
  corpora (the word, or a name holding it);
- encoding: what a model makes of sentences. No name probsent (or its wing, or the benchmarks)
  gives a text codec such as ``"utf-8"`` says encoding (Python's own ``encoding=`` keyword aside);
- every module and name the glossary cites exists.
"""
from __future__ import annotations

import ast
import codecs
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRAINING_FOLDERS = ("probsent/data", "probsent/training")  # the code that reads training pairs
CODE_FOLDERS = ("probsent", "reproduction", "benchmarks")
CORPUS = re.compile(r"corp(?:us|ora)", re.IGNORECASE)
ENCODING = re.compile(r"encoding", re.IGNORECASE)
GLOSSARY_START, GLOSSARY_END = "Two words have one meaning each", "`tests/test_glossary.py` keeps both"


def corpus_mentions(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of a module's ``text`` that says corpus or corpora:
    in a name (``corpus_key``, ``_CorpusWriter``), a string or a comment."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if CORPUS.search(line)]


def _is_codec(value: object) -> bool:
    """Whether ``value`` is a string Python knows as a text codec (``"utf-8"``, ``"latin-1"``)."""
    if not isinstance(value, str) or not value:
        return False
    try:
        codecs.lookup(value)
    except LookupError:
        return False
    return True


def codec_names(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every name a module binds to a text codec: ``NAME = "utf-8"``, ``NAME:
    str = "utf-8"`` or one side of ``A, B = "utf-8", "strict"``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        else:
            continue
        while pairs:
            target, value = pairs.pop()
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                pairs.extend(zip(target.elts, value.elts))
            elif isinstance(value, ast.Constant) and _is_codec(value.value):
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                if name is not None:
                    found.append((node.lineno, name))
    return found


def _modules(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((REPO / folder).rglob("*.py"))]


def test_the_checks_on_hand_made_modules() -> None:
    """Each check finds what it is for, and nothing else."""
    source = ('def read(corpus):\n    """The pairs."""\n    cache = "Corpus cache"  # rebuilt\n'
              'class _CorporaWriter: pass\nTEXT_CODEC, ERRORS = "utf-8", "surrogatepass"\n'
              'FILE_ENCODING = "latin-1"\nself_encoding: str = "ascii"\nENCODING_KEY = "probsent.encoding"\n')
    assert [number for number, _ in corpus_mentions(source)] == [1, 3, 4]
    assert codec_names(ast.parse(source)) == [(5, "TEXT_CODEC"), (6, "FILE_ENCODING"), (7, "self_encoding")]


def test_training_reads_pairs_never_a_corpus() -> None:
    found = [f"{path.relative_to(REPO)}:{number}: {line}" for path in _modules(*TRAINING_FOLDERS)
             for number, line in corpus_mentions(path.read_text(encoding="utf-8"))]
    assert not found, "training data are pairs (docs/ARCHITECTURE.md's glossary), not a corpus:\n" + "\n".join(found)


def test_no_text_codec_is_named_an_encoding() -> None:
    found = [f"{path.relative_to(REPO)}:{line}: {name}" for path in _modules(*CODE_FOLDERS)
             for line, name in codec_names(ast.parse(path.read_text(encoding="utf-8")))
             if ENCODING.search(name)]
    assert not found, "an encoding is what a model makes of sentences; a text's is a codec:\n" + "\n".join(found)


def _defined_names() -> set[str]:
    """Every module, class, function and assigned name of probsent and the wing."""
    names: set[str] = set()
    for path in _modules("probsent", "reproduction"):
        names.add(path.stem)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def test_the_glossary_cites_what_exists() -> None:
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    glossary = text.split(GLOSSARY_START, 1)[1].split(GLOSSARY_END, 1)[0]
    cited = re.findall(r"`([^`]+)`", glossary)
    names = _defined_names()
    missing = []
    for entry in cited:
        if "/" in entry and re.fullmatch(r"[\w/]+", entry):  # a module or folder: from probsent/ or the wing
            paths = [REPO / top / entry.rstrip("/") for top in ("probsent", "reproduction")]
            if not any(p.is_dir() or p.with_suffix(".py").is_file() for p in paths):
                missing.append(entry)
        elif re.fullmatch(r"\w+", entry) and entry not in names:  # a name (commands, paths, calls: prose)
            missing.append(entry)
    assert len(cited) >= 15, "the glossary's citations were not found"
    assert not missing, f"docs/ARCHITECTURE.md's glossary cites what does not exist: {missing}"
