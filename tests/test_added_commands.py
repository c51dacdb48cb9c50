"""Commands other packages add to ``probsent`` (the entry point group ``probsent.commands``):
the research wing adds ``eval`` this way, and probsent never imports it. A toy command added
through the group parses and runs; without the wing, ``probsent eval`` is one line naming how to
install it; probsent's own commands do not load the added ones."""
from __future__ import annotations

import argparse

import pytest

from probsent import cli

pytest.importorskip("torch")  # added commands sit beside train, with torch


class _Point:
    """An entry point as importlib.metadata gives it: ``load()`` returns the register function."""

    def __init__(self, register) -> None:
        self.register = register
        self.loaded = 0

    def load(self):
        self.loaded += 1
        return self.register


def _toy_register(subparsers: argparse._SubParsersAction):
    parser = subparsers.add_parser("toy", help="a toy command")
    parser.add_argument("--times", type=int, default=1)
    return lambda args: 40 + args.times


def test_an_added_command_parses_and_runs(monkeypatch):
    point = _Point(_toy_register)
    monkeypatch.setattr(cli, "_plugin_commands", lambda: {"toy": point})
    assert cli.main(["toy", "--times", "2"]) == 42
    assert point.loaded == 1


def test_probsents_own_commands_do_not_load_the_added_ones(monkeypatch, capsys):
    point = _Point(_toy_register)
    monkeypatch.setattr(cli, "_plugin_commands", lambda: {"toy": point})
    assert cli.main(["explain", "a", "--format", "json"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    assert point.loaded == 0


def test_eval_without_the_wing_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(cli, "_plugin_commands", lambda: {})
    assert cli.main(["eval", "--model", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e ./reproduction" in err
