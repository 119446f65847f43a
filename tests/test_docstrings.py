"""The helper library's documentation rule, and transformers kept out of helpers/ and the notebooks.

Every public function of a ``helpers`` module names the notebook that introduces it
("Introduced in ``NN_name``."), and that notebook exists and calls it by name (an import or a call in a code
cell); a function no notebook calls says so instead ("No notebook calls it; it works behind the helpers of
``NN_name``."), and then no notebook may call it. Every public class has a docstring.
``helpers.cli.main`` (the command line) is exempt; the slide/HTML tooling lives outside the package, in ``tools/sitekit.py``.
transformers is test-only: importing every helpers module must not import it, and no notebook may; the one module
that imports it, lazily and only when called, is ``helpers/fallback.py`` (a model type no family teaches, counted by
transformers' own class: the optional extra ``[hf]``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import helpers

from .conftest import ROOT

# the English notebooks, and the Chinese edition's (named ``zh/<stem>``: a helper only its cells call, such as
# plots.use_language, or one of its notebooks written in Chinese only)
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("zh/*.ipynb"))
NAME = r"((?:zh/)?\d\d_\w+|zh/\w+)"
INTRODUCED = re.compile(rf"Introduced in ``{NAME}``\.")
BEHIND = re.compile(rf"No notebook calls it; it works behind the helpers of ``{NAME}``\.")
# each notebook's code cells, where a helper is imported or called by name
CODE = {nb.relative_to(ROOT / "notebooks").with_suffix("").as_posix(): "\n".join("".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
                           if c["cell_type"] == "code") for nb in NOTEBOOKS}


def calls(code: str, name: str) -> bool:
    """Whether ``code`` imports ``name`` from helpers or calls it (``name(``, not ``x.name(``)."""
    imported = re.search(rf"^\s*from helpers[\w.]* import [^\n]*(?<![.\w]){name}\b", code, re.M)
    return bool(imported or re.search(rf"(?<![.\w\"]){name}\(", code))
# every module of the package and of its subpackages (plots, exercises); __main__ runs the command line
MODULES = sorted(m.name.removeprefix("helpers.") for m in pkgutil.walk_packages(helpers.__path__, "helpers.")
                 if m.name != "helpers.__main__")
DOCUMENTED = MODULES
EXEMPT = {("cli", "main")}


def _public(module: ModuleType, kind) -> list[tuple[str, object]]:
    """The public functions (or classes) defined in ``module`` itself, not imported into it."""
    return [(name, obj) for name, obj in vars(module).items()
            if not name.startswith("_") and kind(obj) and obj.__module__ == module.__name__]


def _class_docstrings(module: ModuleType) -> dict[str, str | None]:
    """Each top-level class's own docstring, read from the source (a dataclass or an ``nn.Module``
    subclass without one would otherwise show a generated or inherited text)."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    return {node.name: ast.get_docstring(node) for node in tree.body if isinstance(node, ast.ClassDef)}


def test_every_module_is_checked():
    assert {"count", "params", "plots", "plots.charts", "plots.diagrams", "exercises", "torch_ref", "cli", "flops",
            "memory", "lessons", "lessons.checkpoint", "spec"} <= set(DOCUMENTED)
    assert "site" not in MODULES  # the slide/HTML tooling is tools/sitekit.py, not for learners


@pytest.mark.parametrize("name", DOCUMENTED)
def test_public_functions_name_their_notebook(name):
    module = importlib.import_module(f"helpers.{name}")
    functions = [(n, f) for n, f in _public(module, inspect.isfunction) if (name, n) not in EXEMPT]
    problems = []
    for fname, function in functions:
        found, behind = INTRODUCED.findall(function.__doc__ or ""), BEHIND.findall(function.__doc__ or "")
        users = [nb for nb, code in CODE.items() if calls(code, fname)]
        if len(found) + len(behind) != 1:
            problems.append(f"{name}.{fname}: {len(found)} 'Introduced in ``NN_name``.' and {len(behind)} "
                            "'No notebook calls it; ...' sentences (one of them, once)")
        elif not (ROOT / "notebooks" / f"{(found or behind)[0]}.ipynb").is_file():
            problems.append(f"{name}.{fname}: notebooks/{(found or behind)[0]}.ipynb does not exist")
        elif found and found[0] not in users:
            problems.append(f"{name}.{fname}: introduced in {found[0]}, which never imports or calls it"
                            f" (called in: {users or 'no notebook'})")
        elif behind and users:
            problems.append(f"{name}.{fname}: says no notebook calls it, but {users} do")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_public_classes_have_docstrings(name):
    module = importlib.import_module(f"helpers.{name}")
    docstrings = _class_docstrings(module)
    missing = [cname for cname, _ in _public(module, inspect.isclass) if not (docstrings.get(cname) or "").strip()]
    assert not missing, f"helpers.{name}: classes without a docstring: {missing}"


def test_the_rule_rejects_what_it_should():
    assert calls("from helpers.flops import forward_flops, tied_table", "tied_table")
    assert calls("x = tied_table(c)", "tied_table") and not calls("x = c.tied_table(c)", "tied_table")
    assert not calls("# the shapes exercise 03.3 quotes", "exercise")
    assert INTRODUCED.findall("Counts. Introduced in ``07_decoder_llms``.") == ["07_decoder_llms"]
    assert INTRODUCED.findall("Introduced in ``07_decoder_llms``; used again later.") == []
    assert INTRODUCED.findall("Introduced in\n    ``07_decoder_llms``.") == []  # keep it greppable: one line


def test_importing_helpers_leaves_transformers_out():
    code = ("import importlib, sys\n"
            f"for name in {MODULES!r}:\n"
            "    importlib.import_module('helpers.' + name)\n"
            "assert 'torch' in sys.modules and 'matplotlib.pyplot' in sys.modules, 'not every module was imported'\n"
            "print(sorted(m for m in sys.modules if m == 'transformers' or m.startswith('transformers.')))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def _imports_transformers(source: str) -> bool:
    """An ``import transformers`` / ``from transformers ...`` statement anywhere (IPython magics dropped)."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "transformers" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "transformers":
            return True
    return False


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_notebook_imports_transformers(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            assert "import transformers" not in source and "from transformers" not in source, f"cell {i}"
            assert not _imports_transformers(source), f"cell {i}"


# the fallback for untaught model types builds transformers' class on demand, and the simulator runs
# it on fake tensors: its only importers
TRANSFORMERS_IMPORTERS = {ROOT / "helpers" / "fallback.py", ROOT / "helpers" / "simulate.py"}


@pytest.mark.parametrize("path", sorted(set((ROOT / "helpers").rglob("*.py")) - TRANSFORMERS_IMPORTERS),
                         ids=lambda p: str(p.relative_to(ROOT / "helpers")))
def test_no_helpers_module_imports_transformers(path):
    assert not _imports_transformers(path.read_text(encoding="utf-8")), "even a lazy import inside a function"


def test_the_import_check_sees_imports():
    assert _imports_transformers("import numpy, transformers.models")
    assert _imports_transformers("def f():\n    from transformers import BertModel")
    assert not _imports_transformers("from helpers import torch_ref  # not transformers")
