"""The layout docs/ARCHITECTURE.md describes, read from its map and from the source of
``probsent/``, the research wing ``reproduction/`` (its tests aside) and ``benchmarks/``: every
module is in exactly one room of the map, no room imports a room above it, and no module imports
another in a cycle. The wing's door is one-way: no probsent module imports the wing, and the wing
reaches probsent only through its public modules and the declared facade
(``probsent/integrations/research_facade.py``). Every import counts, those inside functions included; only
those for type annotations do not."""
from __future__ import annotations

import ast
import fnmatch
import functools
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPS = ("probsent", "reproduction", "benchmarks")  # the folders whose modules the map must place
# the folders a map entry may start from, the longest first (``reproduction/experiments/plan.py``)
ROOTS = ("reproduction/evaluation", "reproduction/experiments", "probsent", "reproduction", "benchmarks")
WING_TESTS = "reproduction/tests/"  # the wing's tests, like tests/, are not on the map
# what the wing may import from probsent: the public modules (of those with an ``__all__``, only
# its names) and the one declared facade, which stays small
PUBLIC = {"probsent", "probsent.api", "probsent.errors", "probsent.version", "probsent.cli",
          "probsent.data.development_sets", "probsent.training", "probsent.models", "probsent.gaussian",
          "probsent.export", "probsent.inputs", "probsent.files.atomic_writes",
          "probsent.integrations.research_facade"}
FACADE = "probsent.integrations.research_facade"
MAX_FACADE_NAMES = 12
MAP = REPO / "docs" / "ARCHITECTURE.md"


def _module(path: Path) -> str:
    """``probsent/models/__init__.py`` -> ``probsent.models``; ``experiments/plan.py`` -> ``reproduction.experiments.plan``."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files() -> dict[str, Path]:
    """Every module of the three folders, by its path from the repository root."""
    return {path.relative_to(REPO).as_posix(): path for top in TOPS for path in sorted((REPO / top).rglob("*.py"))
            if not path.relative_to(REPO).as_posix().startswith(WING_TESTS)}


def rooms_of_the_map(text: str) -> list[tuple[str, list[str]]]:
    """The rooms of the map's table, bottom first: (name, path patterns). In a cell, an entry with
    a ``/`` names a folder: from the repository root where it starts with one of :data:`TOPS`,
    else from the cell's top folder (at first ``probsent``); a bare entry is in the last folder
    named (at first ``probsent/``); ``.py`` may be left out and ``*`` matches any name."""
    rows = re.findall(r"^\| ([^|]+) \| ([^|]+) \| [^|]+ \|$", text.split("## The rooms", 1)[1].split("\n## ", 1)[0],
                      flags=re.MULTILINE)
    rooms = []
    for name, cell in (row for row in rows if row[0].strip() != "room"):  # the header row is no room
        top = folder = "probsent"
        patterns = []
        for entry in re.findall(r"`([^`]+)`", cell):
            entry = entry if entry.endswith(".py") else entry + ".py"
            if "/" in entry:
                root = next((r for r in ROOTS if entry.startswith(r + "/")), None)
                top = root or top
                entry = entry if root else f"{top}/{entry}"
                folder, entry = entry.rsplit("/", 1)
            patterns.append(f"{folder}/{entry}")
        rooms.append((name.strip(), patterns))
    return rooms


ROOMS = rooms_of_the_map(MAP.read_text(encoding="utf-8"))


def _room_of() -> dict[str, int]:
    """Module -> the index of its room on the map (0: the bottom one)."""
    return {_module(path): index for relative, path in _files().items()
            for index, (_, patterns) in enumerate(ROOMS) if any(fnmatch.fnmatch(relative, p) for p in patterns)}


@functools.cache  # read once for the tests below (they do not change it)
def _imports() -> dict[str, set[str]]:
    """Module -> the modules of the three folders it imports (``from a import b`` imports ``a.b``
    where that is a module, else ``a``)."""
    known = {_module(path) for path in _files().values()}
    found: dict[str, set[str]] = {}
    for path in _files().values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and getattr(block.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(block)}
        names: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:  # annotations only: never imported at run time
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                names |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                          for a in node.names}
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
        found[_module(path)] = {name for name in names if name in known and name != _module(path)}
    return found


def test_the_map_places_every_module_in_exactly_one_room() -> None:
    files = _files()
    placed = {relative: [name for name, patterns in ROOMS if any(fnmatch.fnmatch(relative, p) for p in patterns)]
              for relative in files}
    assert len(ROOMS) >= 10
    assert [relative for relative, rooms in placed.items() if not rooms] == []  # on the map
    assert {relative: rooms for relative, rooms in placed.items() if len(rooms) > 1} == {}  # in one room only
    stale = [p for _, patterns in ROOMS for p in patterns if not any(fnmatch.fnmatch(f, p) for f in files)]
    assert stale == []  # every entry of the map names a module that exists


def test_no_room_imports_a_room_above_it() -> None:
    room = _room_of()
    upward = [(module, ROOMS[room[module]][0], name, ROOMS[room[name]][0])
              for module, names in _imports().items() for name in names if room[name] > room[module]]
    assert upward == []


def test_no_import_cycles_between_modules() -> None:
    graph = _imports()
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend(path + [node, nxt])
                return True
            if state.get(nxt) is None and visit(nxt, path + [node]):
                return True
        state[node] = 2
        return False

    assert not any(visit(m, []) for m in sorted(graph) if state.get(m) is None), cycle


def test_the_map_reader_on_a_hand_made_table() -> None:
    text = ("## The rooms, bottom to top\n\n| room | modules | job |\n|---|---|---|\n"
            "| low | `errors`, `data/pairs.py`, `corpus.py` | x |\n"
            "| high | `reproduction/experiments/plan.py`, `rounds/round_*.py`, `benchmarks/bench_*.py` | y |\n\n## Next\n")
    assert rooms_of_the_map(text) == [
        ("low", ["probsent/errors.py", "probsent/data/pairs.py", "probsent/data/corpus.py"]),
        ("high", ["reproduction/experiments/plan.py", "reproduction/experiments/rounds/round_*.py",
                  "benchmarks/bench_*.py"])]


def _every_import(path: Path) -> set[str]:
    """The module names a file imports, at run time or not (``from a import b``: ``a``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return names


def test_no_product_module_imports_the_research_wing() -> None:
    """The door is one-way: probsent runs, and its wheel builds, without ``reproduction/``
    (``probsent eval`` comes in through the entry point group ``probsent.commands``)."""
    product = sorted((REPO / "probsent").rglob("*.py"))
    assert len(product) > 50
    reaching = {path.relative_to(REPO).as_posix(): sorted(n for n in _every_import(path)
                                                          if n.split(".")[0] == "reproduction")
                for path in product}
    assert {path: names for path, names in reaching.items() if names} == {}


def test_the_wing_imports_only_probsents_public_modules_and_its_facade() -> None:
    wing = sorted((REPO / "reproduction").rglob("*.py"))
    assert len(wing) > 50
    internal = {path.relative_to(REPO).as_posix(): sorted(n for n in _every_import(path)
                                                          if n.split(".")[0] == "probsent" and n not in PUBLIC)
                for path in wing}
    assert {path: names for path, names in internal.items() if names} == {}


def declared_names(module: str, root: Path = REPO) -> list[str] | None:
    """The ``__all__`` a module under ``root`` assigns (read from its source), or None if it has none."""
    path = root / (module.replace(".", "/") + ".py")
    path = path if path.is_file() else root / module.replace(".", "/") / "__init__.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def test_the_wing_imports_only_the_declared_names_of_public_modules() -> None:
    """``from probsent.api import X`` is public only where the module's ``__all__`` lists X: a name
    a public module merely imports (``Vocabulary`` before it was declared) is no door."""
    declared = {module: declared_names(module) for module in PUBLIC}
    undeclared = []
    for path in sorted((REPO / "reproduction").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in declared and declared[node.module] is not None:
                undeclared += [f"{path.relative_to(REPO).as_posix()}: {node.module}.{a.name}" for a in node.names
                               if a.name not in declared[node.module]]
    assert undeclared == []


def test_declared_names_reads_a_hand_made_module(tmp_path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""doc"""\n__all__ = ["a", "b"]  # two\nc = 1\n')
    (package / "plain.py").write_text("x = 1\n")
    assert declared_names("pkg", tmp_path) == ["a", "b"]
    assert declared_names("pkg.plain", tmp_path) is None


def test_the_facade_stays_small() -> None:
    """At most MAX_FACADE_NAMES internal names reach the wing; a name more means one less
    elsewhere, or a public name declared and documented instead."""
    names = declared_names(FACADE)
    assert names is not None and len(names) == len(set(names))
    assert len(names) <= MAX_FACADE_NAMES, names


def test_the_facade_declares_what_it_offers() -> None:
    """Every name of ``probsent.integrations.research_facade`` is in its ``__all__``, and every name there is
    one the wing uses (the door does not widen unnoticed)."""
    import probsent.integrations.research_facade as facade

    offered = {name for name in vars(facade) if not name.startswith("_") and name != "annotations"}
    assert offered == set(facade.__all__)
    used = set()
    for path in sorted((REPO / "reproduction").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "probsent.integrations.research_facade":
                used |= {a.name for a in node.names}
    assert set(facade.__all__) - used == set()
