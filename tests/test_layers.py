"""The layers of ``helpers/``: each module has a rank, and every import points to its own rank or lower.

::

    L0  helpers.spec            the records (ConfigError, ModelConfig, Family, Param, Block, Layout) and the formula
                                language; imports no other module of helpers
    L1  helpers.families        one module per family, and the static FAMILIES table
    L2  the engine              config, params, count, report
    L3  the analyses            flops, memory, quantized, budget, serve, finetune, peak, simulate, lora, and fallback
                                (transformers' own count, which the simulator builds its model with)
    L4  the apps and the rest   cli, explorer (imported only when used), lessons/ (notebook-only modules), plots/,
                                exercises/, torch_ref/ (the torch reference models: L0–L2 only, never a family)

The graph is read statically from every module's source (``ast``): each ``import`` / ``from … import`` of a helpers
module, function-local ones and ``if TYPE_CHECKING:`` ones included (an annotation's import is an arrow too).
``from .pkg import name`` points at ``pkg.name`` where that is a module, else at ``pkg``; the implicit import of a
parent package is no arrow. The tests: every module has a rank; every arrow points to the same rank or lower; there is
no cycle (named when there is); no module imports another package's ``_private`` name; ``torch_ref`` imports nothing
from ``families``; and a fresh interpreter's ``import helpers.config`` loads nothing above L2.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

HELPERS = ROOT / "helpers"

# each module's rank: the longest entry that is the module or a package above it
RANKS = {
    "helpers.spec": 0,
    "helpers.families": 1,
    "helpers.config": 2, "helpers.params": 2, "helpers.count": 2, "helpers.report": 2,
    "helpers.language": 2,  # the language of printed text (report.table and the exercises speak it)
    "helpers.flops": 3, "helpers.memory": 3, "helpers.quantized": 3, "helpers.budget": 3, "helpers.serve": 3,
    "helpers.finetune": 3, "helpers.peak": 3, "helpers.simulate": 3, "helpers.lora": 3, "helpers.fallback": 3,
    "helpers.cli": 4, "helpers.__main__": 4, "helpers.explorer": 4,
    "helpers.lessons": 4, "helpers.plots": 4, "helpers.exercises": 4, "helpers.torch_ref": 4,
    # the package itself: the public names of the engine (eagerly) and the explorer (lazily); what it loads eagerly
    # is checked by test_importing_the_engine_loads_no_app
    "helpers": 4,
}
NAMES = {0: "L0 spec", 1: "L1 families", 2: "L2 engine", 3: "L3 analyses", 4: "L4 apps, lessons, plots, exercises, torch_ref"}


def rank(name: str) -> int | None:
    """The rank of module ``name``: its own entry in :data:`RANKS`, or its closest package's; None: no entry."""
    if name == "helpers":
        return RANKS[name]
    while name.count("."):  # a module below ``helpers``: the package's own entry is not inherited
        if name in RANKS:
            return RANKS[name]
        name = name.rpartition(".")[0]
    return None


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(HELPERS.rglob("*.py"))}


def _statements(nodes):
    """Every import statement among ``nodes`` and below them (function-local ones and ``if TYPE_CHECKING:`` ones too)."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
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


def test_every_module_has_a_rank():
    missing = sorted(name for name in MODULES if rank(name) is None)
    assert not missing, f"modules without a rank in RANKS (tests/test_layers.py; the README's layer table): {missing}"


def test_every_import_points_down():
    upward = [f"{name} (L{rank(name)}) -> {target} (L{rank(target)})" for name, targets in sorted(graph().items())
              for target in sorted(targets) if rank(target) is not None and rank(name) is not None
              and rank(target) > rank(name)]
    assert not upward, "imports pointing to a higher layer:\n" + "\n".join(upward)


def test_no_import_cycle():
    found = cycles(graph())
    lines = []
    for circle in found:
        cycle = circle[:circle.index(circle[0], 1) + 1]
        rest = circle[len(cycle):]
        lines.append(" -> ".join(cycle) + f"  (a circle of {len(set(circle))} modules" +
                     (f"; also {', '.join(rest)})" if rest else ")"))
    assert not found, "import cycles in helpers/:\n" + "\n".join(lines)


# the packages whose modules share a kit of private names: torch_ref's blocks.py is imported by every reference model
SHARED_PRIVATE = {"helpers.torch_ref.blocks"}
# private names families still reach for in each other (a family module's body, to move to a shared module of
# helpers.families, or to make public where it lives): none left, and no new one may be added
KNOWN_REACHES: set[tuple[str, str, str]] = set()


def private_uses(name: str, source: str) -> set[tuple[str, str]]:
    """(module, name) for each ``_private`` name (not a dunder) module ``name`` takes from another helpers module:
    ``from .x import _y``, or ``x._y`` where ``x`` was imported as a module."""
    package = name if MODULES.get(name, Path()).name == "__init__.py" else name.rpartition(".")[0]
    found: set[tuple[str, str]] = set()
    modules: dict[str, str] = {}  # local name -> the helpers module it is bound to
    tree = ast.parse(source)
    for node in _statements([tree]):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = package
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        base = ".".join(filter(None, (base if node.level else "", node.module or "")))
        if not base.startswith("helpers"):
            continue
        for alias in node.names:
            if f"{base}.{alias.name}" in MODULES:
                modules[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif alias.name.startswith("_") and not alias.name.startswith("__"):
                found.add((base, alias.name))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.add((modules[node.value.id], node.attr))
    return {(module, private) for module, private in found if module != name}


def test_no_module_takes_another_modules_private_name():
    taken = []
    for name, path in MODULES.items():
        for module, private in sorted(private_uses(name, path.read_text(encoding="utf-8"))):
            package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
            shared = module in SHARED_PRIVATE and package == module.rpartition(".")[0]
            if not shared and (name, module, private) not in KNOWN_REACHES:
                taken.append(f"{name} takes {module}.{private}")
    assert not taken, "private names used outside their module (make them public, or move them):\n" + "\n".join(taken)


def test_torch_ref_imports_no_family():
    """The torch reference models are an independent check of the families: they read a parsed config (L0–L2), never
    a family's code."""
    reaching = {name: sorted(t for t in targets if t == "helpers.families" or t.startswith("helpers.families."))
                for name, targets in graph().items() if name == "helpers.torch_ref" or name.startswith("helpers.torch_ref.")}
    assert not any(reaching.values()), {k: v for k, v in reaching.items() if v}
    assert all(rank(t) <= 2 or t.startswith("helpers.torch_ref") for name, targets in graph().items()
               if name.startswith("helpers.torch_ref") for t in targets)


def test_spec_imports_nothing_of_helpers():
    assert graph()["helpers.spec"] == set()


def test_importing_the_engine_loads_no_app():
    """A fresh interpreter's ``import helpers.config`` (which runs ``helpers/__init__.py`` first) loads L0–L2 only."""
    code = "import sys, helpers.config; print(' '.join(sorted(m for m in sys.modules if m.startswith('helpers'))))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    above = [m for m in loaded if m != "helpers" and (rank(m) is None or rank(m) > 2)]
    assert "helpers.config" in loaded and not above, f"import helpers.config loads {above}"


def test_the_explorer_is_the_module_and_explore_the_function():
    """``helpers.explore`` (the app) is a function, reached lazily; its module is ``helpers.explorer``."""
    import helpers
    from helpers import explore, explorer

    assert callable(explore) and helpers.explore is explorer.explore


@pytest.mark.parametrize("source, expected", [
    ("from . import spec\nfrom .x import _y\n", {("helpers.x", "_y")}),
    ("from .families import llama\nllama._derive(1)\n", {("helpers.families.llama", "_derive")}),
    ("from .spec import read_int as _read_int\nx.__name__\n", set()),
])
def test_private_uses_sees_both_kinds(source, expected):
    assert private_uses("helpers.config", source) == expected


def test_the_graph_sees_every_kind_of_import():
    """The reader finds relative, absolute, function-local and ``TYPE_CHECKING`` imports."""
    source = ("from typing import TYPE_CHECKING\nfrom . import params\nfrom .families import base\nimport helpers.count\n"
              "if TYPE_CHECKING:\n    from .flops import x\nelse:\n    from .memory import y\n"
              "def f():\n    from .report import table\n    from .families.heads import linear\n")
    assert imports("helpers.config", source) == {"helpers.params", "helpers.families.base", "helpers.count",
                                                 "helpers.flops", "helpers.memory", "helpers.report",
                                                 "helpers.families.heads"}
    assert imports("helpers.families.llama", "from ..spec import Param\nfrom . import qwen3\nfrom .base import Family\n") \
        == {"helpers.spec", "helpers.families.qwen3", "helpers.families.base"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"a"}, "d": {"d"}}) == [["a", "b", "a", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert rank("helpers.families.llama") == 1 and rank("helpers.plots.peak") == 4 and rank("helpers") == 4
    assert rank("helpers.nowhere") is None


def test_no_comment_names_an_issue():
    """The code says what it does and why, not which issue asked for it: an issue number in a comment or docstring of
    ``helpers/``, ``tests/`` or ``tools/`` goes stale the day the issue closes."""
    issue = re.compile(r"\bissue\s*#?\d+", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{n}" for folder in ("helpers", "tests", "tools")
             for path in sorted((ROOT / folder).rglob("*")) if path.suffix in (".py", ".j2")
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if issue.search(line)]
    assert not found, "issue numbers in the code: " + ", ".join(found)
