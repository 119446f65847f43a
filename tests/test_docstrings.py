"""The helper library's documentation rule, and transformers kept out of helpers/ and the notebooks.

Every public function and class of a ``helpers`` module carries one back-link sentence, computed by
``tools/backlinks.py`` and never written by hand: "Introduced in ``NN_name``." (the first notebook that imports it
or calls it as ``module.name``), "No notebook calls it; it works behind the helpers of ``NN_name``." (the first
notebook whose helpers reach it, through helpers' static call graph) or "No notebook calls it or reaches it.". A
docstring that says otherwise fails here, naming the function and the sentence expected; ``make backlinks``
(``python tools/backlinks.py --write``) rewrites it. Every public class has a docstring.
The slide/HTML tooling lives outside the package, in ``tools/sitekit.py``.
transformers is test-only: importing every helpers module must not import it, and no notebook may; the one module
that imports it, lazily and only when called, is ``helpers/fallback.py`` (a model type no family teaches, counted by
transformers' own class: the optional extra ``[hf]``).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import helpers

from tools import backlinks  # tools/backlinks.py: make backlinks, and the check below

from .conftest import ROOT

# the English notebooks, and the Chinese edition's (named ``zh/<stem>``)
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("zh/*.ipynb"))
# every module of the package and of its subpackages (plots, exercises); __main__ runs the command line
MODULES = sorted(m.name.removeprefix("helpers.") for m in pkgutil.walk_packages(helpers.__path__, "helpers.")
                 if m.name != "helpers.__main__")
DOCUMENTED = MODULES


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


@functools.lru_cache(maxsize=1)
def _links() -> dict[str, list[backlinks.Link]]:
    """The tool's back-links (one reading of helpers and of the notebooks), by module."""
    by_module: dict[str, list[backlinks.Link]] = {}
    for link in backlinks.links():
        by_module.setdefault(link.module.removeprefix("helpers."), []).append(link)
    return by_module


@pytest.mark.parametrize("name", DOCUMENTED)
def test_backlinks_are_the_computed_ones(name):
    problems = [p for link in _links().get(name, []) if (p := link.problem())]
    assert not problems, "\n".join(problems + ["make backlinks (python tools/backlinks.py --write) rewrites them"])


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_tool_sees_every_public_name(name):
    module = importlib.import_module(f"helpers.{name}")

    def function(obj) -> bool:  # an lru_cache'd one too
        return inspect.isfunction(inspect.unwrap(obj))

    imported = {(n, "class" if inspect.isclass(obj) else "function")
                for kind in (function, inspect.isclass) for n, obj in _public(module, kind)}
    assert {(link.name, link.kind) for link in _links().get(name, [])} == imported


@pytest.mark.parametrize("name", DOCUMENTED)
def test_public_classes_have_docstrings(name):
    module = importlib.import_module(f"helpers.{name}")
    docstrings = _class_docstrings(module)
    missing = [cname for cname, _ in _public(module, inspect.isclass) if not (docstrings.get(cname) or "").strip()]
    assert not missing, f"helpers.{name}: classes without a docstring: {missing}"


def _called(code: str) -> set[str]:
    graph = backlinks.Graph(backlinks.read_package())
    return {f"{module.removeprefix('helpers.')}.{name}" for module, name in backlinks.called(graph, code)}


def test_a_notebook_calls_what_it_imports_or_names_through_a_module():
    assert _called("from helpers.flops import forward_flops, tied_table") == {"flops.forward_flops", "flops.tied_table"}
    assert _called("from helpers import count_model") == {"count.count_model"}  # a re-export: where it is defined
    assert _called("from helpers.plots import use_language") == {"plots.language.use_language"}  # a star import
    assert _called("from helpers.cli import main as helpers_cli") == {"cli.main"}
    assert _called("from helpers import torch_ref\nm = torch_ref.build(c)") == {"torch_ref.build"}
    assert _called("x = tied_table(c)  # never imported: not a helper") == set()
    assert _called("x = c.tied_table(c)") == set()


def test_the_call_graph_follows_names_imports_and_lookups():
    graph = backlinks.Graph(backlinks.read_package())
    reached = graph.closure({("helpers.torch_ref", "build")})
    assert ("helpers.torch_ref.gpt2", "GPT2LMHeadModel") in reached  # globals()[family.torch_ref]
    assert ("helpers.torch_ref.gpt2", "GPT2Block") in reached  # named in GPT2Model's body
    assert ("helpers.exercises.nb02", "") in graph.closure({("helpers.exercises", "check")})  # the banks, by name
    assert ("helpers.families.llama", "flops") in graph.closure({("helpers.families", "FAMILIES")})


def test_the_sentences_are_recognised():
    found = backlinks.SENTENCE.findall
    assert found("Counts. Introduced in ``07_decoder_llms``.") == ["Introduced in ``07_decoder_llms``."]
    assert found("No notebook calls it; it works behind the helpers of ``zh/errata`` (and tools).") == [
        "No notebook calls it; it works behind the helpers of ``zh/errata`` (and tools)."]
    assert found("Introduced in\n    ``07_decoder_llms``.")  # found, then flagged: one line, to keep it greppable
    assert found("No notebook calls it or reaches it.") == [backlinks.UNREACHED]


def _rewritten(source: str, sentence: str) -> str:
    lines = source.splitlines(keepends=True)
    backlinks._rewrite(lines, ast.parse(source).body[0], sentence)
    return "".join(lines)


def test_the_rewrite_changes_that_sentence_only():
    behind = backlinks.BEHIND.format("06_full_bert")
    assert _rewritten('def f():\n    """Counts.\n\n    Introduced in ``07_decoder_llms``.\n    """\n', behind) == (
        f'def f():\n    """Counts.\n\n    {behind}\n    """\n')
    long = "Counts every tensor of the model, the embeddings, the layers and the head, as the checkpoint stores them."
    assert _rewritten(f'def f():\n    """{long} Introduced in\n    ``07_decoder_llms``. Then more."""\n', behind) == (
        f'def f():\n    """{long}\n    {behind} Then more."""\n')  # on one line, cut where it would pass 120
    assert _rewritten('class C:\n    """A record."""\n', behind) == f'class C:\n    """A record.\n    {behind}"""\n'
    assert _rewritten(f'class C:\n    """{long} And then a few words."""\n', behind) == (
        f'class C:\n    """{long} And\n    then a few words.\n    {behind}"""\n')  # a line past 120: cut
    assert _rewritten('class C:\n    """A list:\n\n    - one\n    """\n', behind) == (
        f'class C:\n    """A list:\n\n    - one\n\n    {behind}\n    """\n')


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
