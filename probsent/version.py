"""The version of probsent, in one place (the package, its files and pyproject.toml read it)."""

__version__ = "0.1.0"
