"""Fixtures shared by the test files: the shared data directory, toy pair files, tiny models.

Functions a test calls with its own arguments (a slice of the shared pairs, a toy pair file
of a given size) live in :mod:`tests.helpers`; this file offers them, and the tiny models, as
fixtures so that no test file imports from another.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from probsent.api import SentenceModel
from tests.helpers import require_data, slice_of_pairs, tiny_model, write_toy_pairs

DATA_FIXTURES = {"data_dir", "eval_data", "pairs_slice"}  # eval_data: the wing's (reproduction/tests/conftest.py)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that asks for the shared data (directly or through another fixture) as
    ``data``, so that ``make test-fast`` (``-m "not slow and not data"``) leaves it out. Tests
    that call :func:`tests.helpers.require_data` themselves carry the marker in their file."""
    for item in items:
        if DATA_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.data)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data directory (``../shared/data``); a test asking for it skips without it."""
    return require_data()


@pytest.fixture
def toy_pairs(tmp_path: Path) -> Callable[[int], Path]:
    """Factory: ``toy_pairs(repeat)`` writes ``tests.helpers.TOY_PAIRS`` ``repeat`` times (8 pairs
    each) to ``tmp_path/toy.tsv`` and returns its path."""
    return lambda repeat=25: write_toy_pairs(tmp_path / "toy.tsv", repeat)


@pytest.fixture
def pairs_slice(tmp_path: Path, data_dir: Path) -> Callable[..., Path]:
    """Factory: ``pairs_slice(count, stride=1)`` writes that slice of the shared training pairs
    to ``tmp_path/slice.tsv`` (see ``tests.helpers.slice_of_pairs``); skips without the data."""
    return lambda count, start=0, stride=1: slice_of_pairs(tmp_path / "slice.tsv", count, start, stride)


@pytest.fixture(scope="session")
def make_model() -> Callable[..., SentenceModel]:
    """The :func:`tiny_model` factory: ``make_model("wlo", seed=3)``."""
    return tiny_model
