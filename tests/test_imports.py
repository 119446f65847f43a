"""The import layering of ``helpers/``: one way, no circle.

The graph is read statically from every module's source (``ast``): each ``import`` / ``from … import`` of a helpers
module, function-local ones included (a lazy import is still an arrow; only ``if TYPE_CHECKING:`` blocks, which never
run, are left out). ``from .pkg import name`` points at ``pkg.name`` where that is a module, else at ``pkg``; the
implicit import of a parent package is no arrow. The test fails on any cycle and names it, and it checks the
layering the families rely on: the core (config, params, the registry …) knows no family; ``helpers.families``
registers them (``helpers/registry.py``), and ``helpers/__init__.py`` imports it so that the registry is filled
whatever module a program imports first.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

HELPERS = ROOT / "helpers"
FAMILIES = "helpers.families"
# modules the families are built on: none may import a family, even lazily
CORE = ("helpers.config", "helpers.params", "helpers.registry")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(HELPERS.rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(nodes):
    """Every import statement among ``nodes`` and below them, except under ``if TYPE_CHECKING:``."""
    for node in nodes:
        if isinstance(node, ast.If) and _type_checking(node):
            yield from _statements(node.orelse)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        else:
            yield from _statements(ast.iter_child_nodes(node))


def imports(name: str, source: str) -> set[str]:
    """The helpers modules that module ``name`` (its ``source``) imports."""
    package = name if MODULES.get(name, Path()).name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _statements([ast.parse(source)]):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = ".".join(filter(None, (base if node.level else "", node.module or "")))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        for target in targets:
            while target and target not in MODULES:  # ``import helpers.a.b`` of a name inside a module: the module
                target = target.rpartition(".")[0]
            if target.startswith("helpers") and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    return {name: imports(name, path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each circle of modules (a strongly connected component of two or more), as one shortest cycle through it
    followed by the circle's other modules: ``[a, b, c, a, d, e]`` for a circle of five."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.add(other)
                if other == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return [_shortest_cycle(edges, component) for component in sorted(components, key=min)]


def _shortest_cycle(edges: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, breadth first inside the component."""
    start = min(component)
    parents: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(edges[node] & component):
                if other == start:
                    path = [node]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    cycle = [*reversed(path), start]
                    return cycle + sorted(component - set(cycle))
                if other not in parents:
                    parents[other] = node
                    following.append(other)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a strongly connected component always has one


def test_no_import_cycle():
    found = cycles(graph())
    lines = []
    for circle in found:
        cycle = circle[:circle.index(circle[0], 1) + 1]
        rest = circle[len(cycle):]
        lines.append(" -> ".join(cycle) + f"  (a circle of {len(set(circle))} modules" +
                     (f"; also {', '.join(rest)})" if rest else ")"))
    assert not found, "import cycles in helpers/:\n" + "\n".join(lines)


def test_the_core_knows_no_family():
    edges = graph()
    offending = {name: sorted(t for t in edges[name] if t == FAMILIES or t.startswith(FAMILIES + "."))
                 for name in CORE if name in MODULES}
    assert not any(offending.values()), f"core modules importing a family: { {k: v for k, v in offending.items() if v} }"


def test_helpers_wires_the_registry():
    """``import helpers`` (run before any of its modules) imports the families, which fill the registry."""
    assert FAMILIES in graph()["helpers"]


def test_the_graph_sees_every_kind_of_import():
    """The reader finds relative, absolute and function-local imports, and leaves ``TYPE_CHECKING`` out."""
    source = ("from typing import TYPE_CHECKING\nfrom . import params\nfrom .families import base\nimport helpers.count\n"
              "if TYPE_CHECKING:\n    from .flops import x\nelse:\n    from .memory import y\n"
              "def f():\n    from .report import table\n    from .families.heads import linear\n")
    assert imports("helpers.config", source) == {"helpers.params", "helpers.families.base", "helpers.count",
                                                 "helpers.memory", "helpers.report", "helpers.families.heads"}
    assert imports("helpers.families.llama", "from ..params import Param\nfrom . import qwen3\nfrom .base import Family\n") \
        == {"helpers.params", "helpers.families.qwen3", "helpers.families.base"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"a"}, "d": {"d"}}) == [["a", "b", "a", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
