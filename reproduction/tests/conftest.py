"""The wing's test fixtures: the repository's shared ones (tests/conftest.py: the data
directory, toy pairs, tiny models, the ``data`` marker) and the harness's view of the data."""
from __future__ import annotations

from pathlib import Path

import pytest

from reproduction.evaluation.datasets import DataDir
from tests.conftest import (data_dir, make_model, pairs_slice, pytest_collection_modifyitems,  # noqa: F401
                            toy_pairs)


@pytest.fixture(scope="session")
def eval_data(data_dir: Path) -> DataDir:  # noqa: F811 (data_dir: the fixture imported above)
    """The evaluation data files of the shared data directory."""
    return DataDir(data_dir)
