"""The code in the worked solutions runs: a learner who copies it gets what the solution says.

A solution cell (tagged ``solution``) may hold a fenced ``python`` block, the reference function of a code
exercise: it is executed and must pass its exercise's check. It may also name library calls inline
(`` `select(param_table(c), component=LM_HEAD)` ``): each call of a ``helpers`` function must match that
function's signature, so a keyword that does not exist (``group=`` for ``component=``) fails here, not in a
learner's notebook.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path
from typing import Any, Callable

import pytest

import helpers
from helpers.exercises import BANK, _load, verdict

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
SOLUTION = re.compile(r"^\*\*Solution (\d\d\.\d+)\.\*\*")
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
INLINE = re.compile(r"`([^`\n]+)`")
_load()


def solutions(path: Path) -> list[tuple[str, str]]:
    """``("NN.K", markdown)`` for each solution cell of a notebook."""
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        text = "".join(cell["source"])
        match = SOLUTION.match(text)
        if cell["cell_type"] == "markdown" and "solution" in cell["metadata"].get("tags", []) and match:
            found.append((match.group(1), text))
    return found


def library() -> dict[str, list[Callable[..., Any]]]:
    """Every public function and class defined in ``helpers`` and its modules, by name."""
    found: dict[str, list[Callable[..., Any]]] = {}
    modules = [helpers] + [importlib.import_module(m.name)
                           for m in pkgutil.walk_packages(helpers.__path__, "helpers.")
                           if m.name not in ("helpers.__main__", "helpers.lessons.fsdp_check")]
    for module in modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or not callable(obj):
                continue
            if getattr(obj, "__module__", "").startswith("helpers") and obj not in found.setdefault(name, []):
                found[name].append(obj)
    return {name: objs for name, objs in found.items() if objs}


def inline_calls(markdown: str) -> list[tuple[str, ast.Call]]:
    """``(snippet, call)`` for each call by plain name inside an inline code span (fenced blocks left out)."""
    calls = []
    for span in INLINE.findall(BLOCK.sub("", markdown)):
        try:
            tree = ast.parse(span.strip(), mode="eval")
        except SyntaxError:
            continue
        calls += [(span, node) for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    return calls


def binds(function: Callable[..., Any], call: ast.Call) -> bool:
    """Whether ``call``'s positional count and keyword names fit ``function``'s signature."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return True
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return True
    try:
        signature.bind(*[None] * len(call.args), **{k.arg: None for k in call.keywords})
    except TypeError:
        return False
    return True


CASES = [(path, eid, text) for path in NOTEBOOKS for eid, text in solutions(path)]


@pytest.mark.parametrize("path, eid, text", CASES, ids=[eid for _, eid, _ in CASES])
def test_inline_library_calls_match_their_signatures(path, eid, text):
    functions = library()
    for span, call in inline_calls(text):
        name = call.func.id
        if name in functions:
            assert any(binds(f, call) for f in functions[name]), (
                f"solution {eid} ({path.name}): `{span}` does not fit {name}{inspect.signature(functions[name][0])}")


@pytest.mark.parametrize("path, eid, text", [c for c in CASES if BLOCK.search(c[2])],
                         ids=[eid for _, eid, text in CASES if BLOCK.search(text)])
def test_solution_code_runs_and_passes_its_check(path, eid, text):
    namespace: dict[str, Any] = {}
    for block in BLOCK.findall(text):
        exec(compile(block, f"<solution {eid}>", "exec"), namespace)  # noqa: S102 - our own notebooks' text
    defined = [v for k, v in namespace.items() if inspect.isfunction(v) and not k.startswith("_")]
    assert defined, f"solution {eid}: its code block defines no function"
    if BANK[eid].kind == "code":
        assert verdict(eid, defined[-1]).startswith("correct on all"), f"solution {eid}: its code fails the check"


def test_a_wrong_keyword_is_caught():
    """The slip this file exists for: solution 07.1 once called ``select(..., group=LM_HEAD)``."""
    functions = library()
    (_, wrong), = [c for c in inline_calls("`select(param_table(c), group=LM_HEAD)`") if c[1].func.id == "select"]
    (_, right), = [c for c in inline_calls("`select(param_table(c), component=LM_HEAD)`") if c[1].func.id == "select"]
    assert not any(binds(f, wrong) for f in functions["select"])
    assert any(binds(f, right) for f in functions["select"])
