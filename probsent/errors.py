"""The one exception type probsent raises for bad input; the CLI prints it as a single line."""


class ProbsentError(Exception):
    """A user-facing error: its message is one line naming the file (and line) at fault."""
