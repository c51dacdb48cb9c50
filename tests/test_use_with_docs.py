"""Every example of docs/USE_WITH.md runs as written: its ```python blocks in order in one
namespace (in a temporary directory), its ```sh lines through the command line's main, and
the Spark block in a Spark session (Java needed: in CI, missing Java fails)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import warnings
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from probsent.cli import main

pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[1] / "docs" / "USE_WITH.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced block of the page, in order."""
    return BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def run_shell(code: str) -> None:
    """Each ``probsent ...`` line of a shell block, through the command line's main."""
    for line in filter(None, (line.strip() for line in code.splitlines())):
        argv = shlex.split(line)
        assert argv[0] == "probsent", f"docs/USE_WITH.md runs only probsent commands: {line}"
        assert main(argv[1:]) in (None, 0), line


def is_spark(language: str, code: str) -> bool:
    return language == "python" and "probsent.spark" in code


def test_every_block_is_python_or_probsent_commands() -> None:
    found = blocks()
    assert len(found) >= 8 and {language for language, _ in found} == {"python", "sh"}
    assert sum(is_spark(*b) for b in found) == 1


def test_examples_run_as_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    if not any(e.name == "probsent" for e in entry_points(group="spacy_factories")):
        # installed from a checkout older than the entry point (tests/test_spacy_component.py
        # proves the entry point itself): register the component by importing it
        import probsent.integrations.spacy  # noqa: F401
    warnings.filterwarnings("error", message="similarity", category=DeprecationWarning)  # no deprecated call
    namespace: dict = {}
    for language, code in blocks():
        if is_spark(language, code):
            continue  # below, with Spark
        if language == "sh":
            run_shell(code)
        else:
            exec(compile(code, str(PAGE), "exec"), namespace)
    assert (tmp_path / "scored.jsonl").stat().st_size > 0


def test_spark_example_runs_as_written() -> None:
    if shutil.which("java") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("java is not on PATH: CI must run the Spark example")
        pytest.skip("java is not on PATH (Spark needs Java 17)")
    code = next(code for language, code in blocks() if is_spark(language, code))
    namespace: dict = {}
    try:
        exec(compile(code, str(PAGE), "exec"), namespace)
    finally:
        if "spark" in namespace:
            namespace["spark"].stop()
