"""The layout docs/ARCHITECTURE.md describes: no module imports another in a cycle, and the
lower rooms never import the upper ones (read from the source: top-level and local imports,
not those only for type annotations)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "probsent"
# room -> rooms it must never import
FORBIDDEN = {
    "inputs": {"api", "models", "training", "evaluation", "cli", "scoring", "spark", "workers", "integrations"},
    "data": {"models", "training", "evaluation", "api", "cli", "scoring", "spark", "workers", "integrations"},
    "models": {"training", "evaluation", "api", "cli", "scoring", "spark", "workers", "integrations"},
    "training": {"evaluation", "api", "cli", "scoring", "spark", "workers", "corpus_io", "integrations"},
    "evaluation": {"cli", "scoring", "spark", "workers", "corpus_io", "integrations"},
    "api": {"evaluation", "cli", "scoring", "spark", "workers", "corpus_io", "integrations"},
}


def _imports() -> dict[str, set[str]]:
    """Module -> the probsent modules it imports."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and getattr(block.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) in typing_only:  # annotations only: never imported at run time
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("probsent"):
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names |= {a.name for a in node.names if a.name.startswith("probsent")}
        found[module] = names
    return found


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "probsent"


def test_lower_rooms_never_import_upper_ones() -> None:
    wrong = [(m, i) for m, names in _imports().items() for i in names
             if _room(i) in FORBIDDEN.get(_room(m), set())]
    assert wrong == []


def test_no_import_cycles_between_modules() -> None:
    imports = _imports()
    graph = {m: {i for i in names if i in imports} for m, names in imports.items()}
    graph = {m: {i for i in names if i != m and i != "probsent"} for m, names in graph.items()}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                cycle.extend(path + [node, nxt])
                return True
            if state.get(nxt) is None and visit(nxt, path + [node]):
                return True
        state[node] = 2
        return False

    assert not any(visit(m, []) for m in sorted(graph) if state.get(m) is None), cycle
