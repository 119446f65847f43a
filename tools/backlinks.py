"""The back-links from ``helpers/`` to the notebooks: one computed sentence in every public docstring.

    python tools/backlinks.py --check      # exit 1, naming each function or class whose sentence is not the computed one
    python tools/backlinks.py --write      # rewrite those sentences in place (that sentence only; make backlinks)
    python tools/backlinks.py --unreached  # the public functions and classes no notebook calls or reaches

Each public function and class of a ``helpers`` module (defined at the top of its module, name without ``_``) carries
exactly one of three sentences, on one line of its docstring:

- ``Introduced in ``NN_name``.``: the first notebook that calls it. The English notebooks come first, in order, then
  ``notebooks/zh/`` (named ``zh/<stem>``: a helper only the Chinese cells call, or a notebook written in Chinese only).
  A notebook calls a helper when a code cell imports it from ``helpers`` (``from helpers.flops import forward_flops``;
  a re-export such as ``from helpers import count_model`` is followed to where it is defined) or reaches it as an
  attribute of an imported helpers module (``torch_ref.build(...)``).
- ``No notebook calls it; it works behind the helpers of ``NN_name``.``: no notebook calls it, and ``NN_name`` is
  the first notebook, in the same order, that calls a helper which reaches it.
- ``No notebook calls it or reaches it.``: nothing a notebook calls leads to it (the tests, ``tools/`` or the
  explorer alone may use it): ``--unreached`` lists them, each a question whether it should be in helpers at all.

"Reaches" is a static call graph read from helpers' source with ``ast`` (no module is imported): a top-level function
or class reaches every helpers function, class and module-level variable its code names (signature and body, methods
included, a name resolved through the module's imports, re-exports and star imports, or ``module.name``); a
module-level variable reaches what its statements name (``LLAMA = Family(..., flops=flops)``, and the families'
table that reads them). Two lookups by name are followed too: ``globals()[name]`` reaches every name of its module's
namespace that some string of helpers spells (``torch_ref`` builds the class a family names, ``torch_ref="..."``), and
a package that imports its submodules by name (``pkgutil.iter_modules(__path__)`` with ``importlib.import_module``:
the exercise banks) reaches the statements of each. The graph over-approximates: notebook 00 runs the command line
(``helpers.cli.main``), which can reach every analysis, every count reads the families' table, the checker loads
every bank and ``torch_ref.build`` can build every class. So "behind" names the first notebook that reaches the helper
without passing through those four (``HUBS``); else, for a family's module (or its ``torch_ref`` model), the first
notebook that names a shipped config of that family (``"gpt-oss-20b"``); else the first that reaches it at all. The
sentence is computed, never written by hand:
``tests/test_docstrings.py`` runs ``--check`` and names the function and the sentence it expects.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass, field
from typing import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "helpers"
# the nodes through which everything is reached: the command line (notebook 00 runs it), the families' table (every
# count reads it), the exercise checker (it loads every notebook's bank) and torch_ref.build (it builds the class a
# family names). A helper is "behind" the first notebook
# that reaches it without passing through them, where one does, else the first that reaches it at all
HUBS = {("helpers.cli", "main"), ("helpers.families", "FAMILIES"), ("helpers.exercises", "_load"),
        ("helpers.torch_ref", "build")}
WIDTH = 120  # the longest line a rewritten docstring line may have

INTRODUCED = "Introduced in ``{}``."
BEHIND = "No notebook calls it; it works behind the helpers of ``{}``."
UNREACHED = "No notebook calls it or reaches it."
# any of the three, wrapped or not, with whatever a hand-written one adds before its full stop ("``…`` (and …)."):
# the generated one is on one line and ends at the name
SENTENCE = re.compile(r"(?:Introduced\s+in\s+``[^`]*``|No\s+notebook\s+calls\s+it(?:;\s+it\s+works\s+behind\s+the"
                      r"\s+helpers\s+of\s+``[^`]*``|\s+or\s+reaches\s+it)?)(?:\s*\([^()]*\))?[^.`]*\.")

Node = tuple[str, str]  # (module, top-level name); the name "" is the module's own top-level statements


@dataclass
class Module:
    """One module of helpers, read with ``ast``: what it defines, what it imports, and what it star-imports."""

    name: str
    path: Path
    tree: ast.Module
    package: bool
    defs: dict[str, ast.AST] = field(default_factory=dict)  # functions and classes at the top
    variables: dict[str, list[ast.stmt]] = field(default_factory=dict)  # module-level names and their statements
    other: list[ast.stmt] = field(default_factory=list)  # top-level statements that bind no name (register(...))
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias: (module, name or None)
    stars: list[str] = field(default_factory=list)
    exports: list[str] | None = None  # __all__


@dataclass
class Link:
    """One public function or class: where its docstring is, the sentence computed for it, and what it holds."""

    module: str
    name: str
    kind: str  # "function" or "class"
    path: Path
    line: int  # the def's line
    expected: str
    found: list[str]  # the back-link sentences its docstring holds now (whitespace as written)
    docstring: bool

    @property
    def qualname(self) -> str:
        return f"{self.module.removeprefix(PACKAGE + '.')}.{self.name}"

    def problem(self) -> str | None:
        """Why the docstring does not agree with the computation, or None."""
        where = f"{self.path.relative_to(ROOT)}:{self.line}: {self.qualname}"
        if not self.docstring:
            return f"{where}: no docstring (it should hold '{self.expected}')"
        if self.found == [self.expected]:
            return None
        if not self.found:
            return f"{where}: no back-link sentence; expected '{self.expected}'"
        if len(self.found) > 1:
            return f"{where}: {len(self.found)} back-link sentences; expected one, '{self.expected}'"
        said = " ".join(self.found[0].split())
        if said == self.expected:
            return f"{where}: '{self.expected}' is split over two lines; keep it on one (greppable)"
        return f"{where}: says '{said}'; expected '{self.expected}'"


# ---- reading helpers ----------------------------------------------------------------------------------------------

def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module: Module, level: int, name: str | None) -> str:
    """The module a relative import of ``module`` names (``from ..config import x``: level 2, "config")."""
    base = module.name.split(".") if module.package else module.name.split(".")[:-1]
    base = base[:len(base) - level + 1]
    return ".".join(base + ([name] if name else []))


def _stored(target: ast.AST) -> list[str]:
    """The names an assignment target binds or changes (``X = …``, ``X[k] = …``, ``X.y = …``, ``a, b = …``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _stored(t)]
    if isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        return _stored(target.value)
    return []


def _bound(statement: ast.stmt) -> list[str]:
    """The module-level names a top-level statement binds or changes (``X.update(...)`` changes ``X``)."""
    names = []
    for node in ast.walk(statement):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is None:
                continue
            names += [n for t in targets for n in _stored(t)]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            names += _stored(node.target)
        elif isinstance(node, ast.NamedExpr):
            names += _stored(node.target)
    if not names and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            names = [func.value.id]
    return list(dict.fromkeys(names))


def read_package(root: Path = ROOT) -> dict[str, Module]:
    """Every module of helpers and of its subpackages, by dotted name."""
    modules = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        name = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        modules[name] = module = Module(name, path, tree, path.name == "__init__.py")
        for statement in tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                module.defs[statement.name] = statement
            elif isinstance(statement, (ast.Import, ast.ImportFrom)):
                pass
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                pass  # the module's docstring
            elif names := _bound(statement):
                for n in names:
                    module.variables.setdefault(n, []).append(statement)
            else:
                module.other.append(statement)
        for node in ast.walk(tree):  # function-local imports too: they bind a name in the code that uses it
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        if alias.asname:
                            module.imports[alias.asname] = (alias.name, None)
                        else:
                            module.imports[PACKAGE] = (PACKAGE, None)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(module, node.level, node.module) if node.level else node.module or ""
                if source.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        module.stars.append(source)
                    else:
                        module.imports[alias.asname or alias.name] = (source, alias.name)
        for statement in tree.body:
            if (isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                          for t in statement.targets)):
                module.exports = [e.value for e in getattr(statement.value, "elts", [])
                                  if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return modules


# ---- the static call graph --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModuleRef:
    """A name that is a helpers module (``from helpers import torch_ref``)."""

    name: str


class Graph:
    """Which top-level function, class or variable of helpers names which (see the module's docstring)."""

    def __init__(self, modules: dict[str, Module]):
        self.modules = modules
        self._resolved: dict[tuple[str, str], Node | ModuleRef | None] = {}
        strings = set()
        for module in modules.values():
            for node in ast.walk(module.tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                    strings.add(node.value)
        self.strings = strings
        self.edges: dict[Node, set[Node]] = {}
        for module in modules.values():
            for name, definition in module.defs.items():
                self.edges[(module.name, name)] = self._named(module, [definition])
            for name, statements in module.variables.items():
                self.edges[(module.name, name)] = self._named(module, statements)
            self.edges[(module.name, "")] = self._named(module, module.other)

    def resolve(self, module: str, name: str, seen: frozenset = frozenset()) -> Node | ModuleRef | None:
        """What ``name`` means in ``module``: its own function, class or variable, an import, or a star import's."""
        key = (module, name)
        if key in self._resolved:
            return self._resolved[key]
        if key in seen or module not in self.modules:
            return None
        seen = seen | {key}
        m = self.modules[module]
        found: Node | ModuleRef | None = None
        if name in m.defs or name in m.variables:
            found = (module, name)
        elif name in m.imports:
            source, imported = m.imports[name]
            if imported is None:
                found = ModuleRef(source)
            else:
                found = self.attribute(ModuleRef(source), imported, seen)
        else:
            for star in reversed(m.stars):
                if self._exported(star, name):
                    found = self.resolve(star, name, seen)
                    if found is not None:
                        break
        self._resolved[key] = found
        return found

    def attribute(self, base: ModuleRef, name: str, seen: frozenset = frozenset()) -> Node | ModuleRef | None:
        """``module.name``: a submodule, or a name the module holds."""
        if f"{base.name}.{name}" in self.modules:
            return ModuleRef(f"{base.name}.{name}")
        return self.resolve(base.name, name, seen)

    def _exported(self, module: str, name: str) -> bool:
        m = self.modules.get(module)
        if m is None:
            return False
        return name in m.exports if m.exports is not None else not name.startswith("_")

    def namespace(self, module: str) -> set[str]:
        """Every name ``module``'s globals hold: its own, its imports', and its star imports' exports."""
        m = self.modules[module]
        names = set(m.defs) | set(m.variables) | set(m.imports)
        for star in m.stars:
            s = self.modules.get(star)
            if s is not None:
                names |= set(s.exports) if s.exports is not None else {n for n in self.namespace(star)
                                                                        if not n.startswith("_")}
        return names

    def reference(self, module: Module, expression: ast.AST) -> Node | ModuleRef | None:
        """What a ``Name`` or an ``a.b.c`` chain of names refers to in helpers, or None."""
        if isinstance(expression, ast.Name):
            return self.resolve(module.name, expression.id)
        if isinstance(expression, ast.Attribute):
            base = self.reference(module, expression.value)
            if isinstance(base, ModuleRef):
                return self.attribute(base, expression.attr)
        return None

    def _named(self, module: Module, nodes: list[ast.AST]) -> set[Node]:
        """The top-level functions, classes and variables of helpers that ``nodes`` name."""
        named: set[Node] = set()
        attributes: set[str] = set()
        looks_up_globals = False
        for top in nodes:
            for node in ast.walk(top):
                if isinstance(node, (ast.Name, ast.Attribute)):
                    target = self.reference(module, node)
                    if isinstance(target, tuple):
                        named.add(target)
                    if isinstance(node, ast.Attribute):
                        attributes.add(node.attr)
                    elif node.id == "globals":
                        looks_up_globals = True
        if looks_up_globals:  # globals()[name]: the names of this namespace a string of helpers spells
            for name in self.namespace(module.name) & self.strings:
                target = self.resolve(module.name, name)
                if isinstance(target, tuple):
                    named.add(target)
        if {"iter_modules", "import_module"} <= attributes and module.package:  # a package loading its submodules
            prefix = module.name + "."
            named |= {(m, "") for m in self.modules if m.startswith(prefix) and "." not in m[len(prefix):]}
        return named

    def closure(self, start: set[Node], through: Callable[[Node], bool] = lambda node: True) -> set[Node]:
        """Every node ``start`` reaches, ``start`` included (going on only from the nodes ``through`` accepts)."""
        seen, todo = set(start), list(start)
        while todo:
            node = todo.pop()
            if not through(node):
                continue
            for target in self.edges.get(node, ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen


# ---- the notebooks ------------------------------------------------------------------------------------------------

def notebooks(root: Path = ROOT) -> dict[str, str]:
    """Each notebook's code cells (IPython's ``%`` and ``!`` lines blanked), English first, then ``zh/<stem>``."""
    paths = sorted((root / "notebooks").glob("*.ipynb")) + sorted((root / "notebooks").glob("zh/*.ipynb"))
    code = {}
    for path in paths:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        code[path.relative_to(root / "notebooks").with_suffix("").as_posix()] = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line for s in sources for line in s.splitlines())
    return code


def called(graph: Graph, code: str) -> set[Node]:
    """The helpers a notebook's code imports by name, or reaches as ``module.name`` of an imported helpers module."""
    tree = ast.parse(code)
    aliases: dict[str, ModuleRef] = {}
    used: set[Node] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == PACKAGE:
            for alias in node.names:
                target = graph.attribute(ModuleRef(node.module), alias.name)
                if isinstance(target, ModuleRef):
                    aliases[alias.asname or alias.name] = target
                elif target is not None:
                    used.add(target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    aliases[alias.asname or PACKAGE] = ModuleRef(alias.name if alias.asname else PACKAGE)

    def reference(expression: ast.AST) -> Node | ModuleRef | None:
        if isinstance(expression, ast.Name):
            return aliases.get(expression.id)
        if isinstance(expression, ast.Attribute):
            base = reference(expression.value)
            return graph.attribute(base, expression.attr) if isinstance(base, ModuleRef) else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(target := reference(node), tuple):
            used.add(target)
    return used


# ---- the sentences ------------------------------------------------------------------------------------------------

def public(modules: dict[str, Module]) -> list[tuple[Module, ast.AST]]:
    """Every public function and class: defined at the top of a helpers module (``__main__`` aside), no ``_``."""
    return [(m, d) for m in modules.values() if not m.name.endswith(".__main__")
            for name, d in m.defs.items() if not name.startswith("_")]


def _docstring(definition: ast.AST) -> ast.Constant | None:
    body = definition.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].value
    return None


def _segment(lines: list[str], node: ast.AST) -> str:
    """The source text of ``node`` (its lines joined, cut at its columns)."""
    text = lines[node.lineno - 1:node.end_lineno]
    text[-1] = text[-1][:node.end_col_offset]
    text[0] = text[0][node.col_offset:]
    return "".join(text)


def family_notebooks(modules: dict[str, Module], order: dict[str, str], root: Path = ROOT) -> dict[str, str]:
    """Each family module, and the first notebook that names a shipped config of its model type (``"llama-7b"`` in a
    code cell: the families' table is how a count reaches the family, so the graph alone cannot tell which)."""
    family_of = {}
    for m in modules.values():
        if m.name.startswith(f"{PACKAGE}.families."):
            for model_type in re.findall(r'model_type="([^"]+)"', m.path.read_text(encoding="utf-8")):
                family_of.setdefault(model_type, m.name)
    shipped = {p.stem: json.loads(p.read_text(encoding="utf-8")).get("model_type")
               for p in (root / "data" / "models").glob("*.json")}
    out: dict[str, str] = {}
    for nb, code in order.items():
        for name in re.findall(r"[\"']([\w.\-]+)[\"']", code):
            if shipped.get(name) in family_of:
                out.setdefault(family_of[shipped[name]], nb)
    return out


def links(root: Path = ROOT) -> list[Link]:
    """The computed sentence of every public function and class, beside what its docstring holds."""
    modules = read_package(root)
    graph = Graph(modules)
    order = notebooks(root)
    direct = {nb: called(graph, code) for nb, code in order.items()}
    reached = {nb: graph.closure(nodes) for nb, nodes in direct.items()}
    near = {nb: graph.closure(nodes, lambda node: node not in HUBS) for nb, nodes in direct.items()}
    taught = family_notebooks(modules, order, root)
    result = []
    sources: dict[Path, list[str]] = {}
    for module, definition in public(modules):
        node = (module.name, definition.name)
        first = next((nb for nb in order if node in direct[nb]), None)
        family = module.name.replace(f"{PACKAGE}.torch_ref.", f"{PACKAGE}.families.")  # a family's reference model
        behind = next((nb for nb in order if node in near[nb]), None) or taught.get(family) or next(
            (nb for nb in order if node in reached[nb]), None)
        expected = INTRODUCED.format(first) if first else BEHIND.format(behind) if behind else UNREACHED
        doc = _docstring(definition)
        found = []
        if doc is not None:
            lines = sources.setdefault(module.path, module.path.read_text(encoding="utf-8").splitlines(keepends=True))
            found = SENTENCE.findall(_segment(lines, doc))
        kind = "class" if isinstance(definition, ast.ClassDef) else "function"
        result.append(Link(module.name, definition.name, kind, module.path, definition.lineno, expected, found,
                           doc is not None))
    return result


# ---- rewriting ----------------------------------------------------------------------------------------------------

def _fit(line: str, start: int, end: int, indent: str) -> list[str]:
    """``line`` (holding a sentence at ``start:end``) cut so each piece is at most WIDTH long where it can be."""
    if len(line.rstrip("\n")) <= WIDTH:
        return [line]
    newline = "\n" if line.endswith("\n") else ""
    before, sentence, after = line[:start].rstrip(), line[start:end], line[end:].rstrip("\n")
    pieces = [before] if before.strip() and before.strip() not in ('"""', "'''") else []
    head = indent + sentence if pieces else before + sentence
    if len(head + after) <= WIDTH or not after.strip() or after.strip() in ('"""', "'''"):
        pieces.append(head + after)
    else:
        pieces += [head, indent + after.lstrip()]
    return [p + "\n" for p in pieces[:-1]] + [pieces[-1] + newline]


def _rewrite(lines: list[str], definition: ast.AST, sentence: str) -> bool:
    """Put ``sentence`` in place of the docstring's back-link (or after its text, where it has none); True if changed."""
    doc = _docstring(definition)
    first, last = doc.lineno - 1, doc.end_lineno - 1
    indent = " " * definition.body[0].col_offset
    text = "".join(lines[first:last + 1])
    found = list(SENTENCE.finditer(text))
    if len(found) > 1:
        raise ValueError(f"{definition.name}: {len(found)} back-link sentences, one expected")
    if found:
        match = found[0]
        if match.group(0) == sentence:
            return False
        new = text[:match.start()] + sentence + text[match.end():]
        start = text.rfind("\n", 0, match.start()) + 1  # the line the sentence now sits on
        end = new.find("\n", start)
        end = len(new) if end < 0 else end + 1
        offset = match.start() - start
        rest = _fit(new[start:end], offset, offset + len(sentence), indent)
        lines[first:last + 1] = (new[:start] + "".join(rest) + new[end:]).splitlines(keepends=True)
        return True
    closing = lines[last].rstrip("\n")
    quote = closing[-3:]
    if quote not in ('"""', "'''"):
        raise ValueError(f"{definition.name}: a docstring without triple quotes")
    body = closing[:-3]
    if body.strip() in ("", '"""', "'''") and not body.lstrip().startswith(('"""', "'''")):  # closing on its own line
        previous = lines[last - 1] if last > first else ""
        blank = previous.strip() and _block(previous, indent)
        lines[last:last] = (["\n"] if blank else []) + [indent + sentence + "\n"]
    else:
        blank = _block(body, indent)
        body = body.rstrip()
        cut = body.rfind(" ", len(indent) + 4, WIDTH + 1) if len(body) > WIDTH else -1
        text = [body + "\n"] if cut < 0 else [body[:cut] + "\n", indent + body[cut + 1:] + "\n"]  # a long line: cut
        lines[last:last + 1] = text + (["\n"] if blank else []) + [indent + sentence + quote + "\n"]
    return True


def _block(line: str, indent: str) -> bool:
    """Whether a docstring's last line ends a list, a literal block or a table (the sentence then starts a paragraph)."""
    stripped = line.strip().removeprefix('"""')
    deeper = line.startswith(indent + " ") and not line.lstrip().startswith('"""')
    return deeper or stripped.startswith(("- ", "* ", ">>>", ":", "|", "+")) or stripped.endswith("::")


def write(root: Path = ROOT) -> list[Link]:
    """Rewrite every docstring whose back-link differs from the computed one; the links rewritten."""
    changed = [link for link in links(root) if link.problem() is not None and link.docstring]
    by_path: dict[Path, list[Link]] = {}
    for link in changed:
        by_path.setdefault(link.path, []).append(link)
    for path, items in by_path.items():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        tree = ast.parse("".join(lines))
        defs = {d.name: d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        for link in sorted(items, key=lambda k: -k.line):  # from the bottom: the lines above keep their numbers
            _rewrite(lines, defs[link.name], link.expected)
        path.write_text("".join(lines), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list the docstrings out of step; exit 1 if any (default)")
    mode.add_argument("--write", action="store_true", help="rewrite the back-link sentence where it differs")
    mode.add_argument("--unreached", action="store_true", help="list the public names no notebook calls or reaches")
    args = parser.parse_args(argv)
    if args.write:
        changed = write()
        print(f"{len(changed)} back-link sentences rewritten in {len({link.path for link in changed})} files")
        problems = [p for link in links() if (p := link.problem())]
    elif args.unreached:
        for link in links():
            if link.expected == UNREACHED:
                print(f"{link.path.relative_to(ROOT)}:{link.line}: {link.kind} {link.qualname}")
        return 0
    else:
        problems = [p for link in links() if (p := link.problem())]
    print("\n".join(problems))
    if problems:
        print(f"{len(problems)} back-links out of step with the notebooks: python tools/backlinks.py --write",
              file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
