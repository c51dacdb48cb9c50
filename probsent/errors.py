"""The exceptions probsent raises for bad input; the CLI prints each as a single line.

Every one is a :class:`ProbsentError`, and also the built-in exception Python code expects
for its kind of fault, so ``except FileNotFoundError`` or ``except ValueError`` catches it:

- :class:`MissingFileError` (a ``FileNotFoundError``): a model, data file or directory that
  does not exist;
- :class:`InvalidValueError` (a ``ValueError``): a setting out of range, a damaged or
  inconsistent model or data file.

Wrong argument types in the Python API raise the built-in ``TypeError``.
"""


class ProbsentError(Exception):
    """A user-facing error: its message is one line naming the file (and line) at fault."""


class MissingFileError(ProbsentError, FileNotFoundError):
    """A file or directory that probsent needs does not exist."""


class InvalidValueError(ProbsentError, ValueError):
    """A value (a setting, or the content of a model or data file) that probsent cannot use."""
