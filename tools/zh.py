"""The Chinese edition (中文版): notebooks/zh/ made from the English notebooks and the translations in data/zh/.

    python tools/zh.py skeleton notebooks/01_embeddings.ipynb   # add the English cells a translation file lacks
    python tools/zh.py build [notebooks/01_embeddings.ipynb ...] # write notebooks/zh/ (make zh executes them)
    python tools/zh.py check                                    # what is missing, stale or off; exit 1 if anything
    python tools/zh.py stamp notebooks/01_embeddings.ipynb 01-002  # a revised translation now answers the English
    python tools/zh.py stamp --unchanged notebooks/01_embeddings.ipynb 01-002  # the English changed, the Chinese holds

One source of truth. The code of a zh notebook is the English notebook's code, cell for cell (plus one cell that
switches ``helpers.plots`` to Chinese); its prose comes from ``data/zh/<notebook>.md``, where each Markdown cell
of the English notebook has one entry, keyed by the cell's id and the hash of the English text it translates::

    <!-- cell 01-002 en 3f0a1c9e2b7d -->
    ## 词嵌入表：V × H
    ...

When an English Markdown cell changes, its hash no longer matches and ``check`` (and ``tests/test_zh.py``) names
the cell and shows what changed in the English, word by word, against the English the translation was made for (the
version of the notebook in git history whose cell has that hash): revise the translation, ``stamp`` it, run ``make zh``.
``stamp`` refuses a cell whose English changed while its translation did not (the translation as it stood in git
before the English changed); ``--unchanged`` says the translation still answers the new English. The zh notebooks that exist only in Chinese
(``ZH_ONLY``: the 勘误表 and the Chinese checkpoints) are written in notebooks/zh/ directly.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import difflib
import functools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from helpers.language import UNITS as _UNITS  # the Chinese units of large numbers: 万, 亿, 万亿
from helpers.language import english_words, printed_dictionary, printed_line

UNITS = dict(_UNITS)
ROOT = Path(__file__).resolve().parent.parent
EN_DIR = ROOT / "notebooks"
ZH_DIR = EN_DIR / "zh"
TRANSLATIONS = ROOT / "data" / "zh"
GLOSSARY = ROOT / "data" / "glossary.zh.json"
# notebooks written in Chinese only: no English twin, no translation file
ZH_ONLY = ("errata.ipynb", "chinese_checkpoints.ipynb")
MIN_CHINESE_SHARE = 0.9  # of a zh notebook's Markdown cells (the rest: formulas, code names)

HEADER = re.compile(r"^<!-- cell (?P<id>\S+) en (?P<sha>[0-9a-f]{12}) -->[ \t]*$", re.M)
PREAMBLE = ("<!-- Chinese translation of notebooks/{name}: one entry per Markdown cell, keyed by the cell's id and the\n"
            "     hash of the English text it translates (python tools/zh.py; make zh). Edit the text under a header. -->\n")
LANGUAGE_CELL_ID = "zh-language"
LANGUAGE_SOURCE = 'from helpers.plots import use_language\n\nuse_language("zh")  # 图、表和打印出的每一行都用中文'
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# a figure with thousands separators, as the English prints it (109,482,240)
GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?![\d,])")
# the Chinese short form beside a figure: 1.09 亿（109,482,240） or 1.09 亿 (109,482,240)
SHORT_FORM = re.compile(r"(?P<short>\d+(?:\.\d+)?)\s*(?P<unit>万亿|亿|万)\s*[（(]\s*(?P<exact>\d{1,3}(?:,\d{3})+)\s*[）)]")


@dataclass(frozen=True)
class Entry:
    """One translated Markdown cell: the English hash it was made for, and the Chinese text."""

    sha: str
    text: str


def source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (nbformat stores a list of lines or a string)."""
    s = cell.get("source", "")
    return s if isinstance(s, str) else "".join(s)


def lines(text: str) -> list[str]:
    """``text`` as nbformat's list of lines, each with its newline but the last."""
    return text.splitlines(keepends=True)


def en_hash(text: str) -> str:
    """The hash that ties a translation to the English text it translates: sha256, 12 hex digits."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def load(path: Path) -> dict[str, Any]:
    """A notebook as JSON."""
    return json.loads(path.read_text(encoding="utf-8"))


def dump(nb: Mapping[str, Any]) -> str:
    """A notebook as nbformat writes it (indent 1, sorted keys, UTF-8 as is, a final newline)."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def translation_path(en_path: Path) -> Path:
    """data/zh/<stem>.md for an English notebook."""
    return TRANSLATIONS / f"{en_path.stem}.md"


def english_notebooks() -> list[Path]:
    """The English notebooks, in reading order."""
    return sorted(EN_DIR.glob("*.ipynb"))


def parse(text: str) -> dict[str, Entry]:
    """The entries of a translation file, by cell id (a duplicate id is an error)."""
    heads = list(HEADER.finditer(text))
    out: dict[str, Entry] = {}
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        if m["id"] in out:
            raise ValueError(f"cell {m['id']} has two entries")
        out[m["id"]] = Entry(m["sha"], text[m.end():end].strip("\n"))
    return out


def render(name: str, entries: Iterable[tuple[str, Entry]]) -> str:
    """A translation file's text: the preamble, then one header and text per entry."""
    body = "\n\n".join(f"<!-- cell {cid} en {e.sha} -->\n{e.text}" for cid, e in entries)
    return PREAMBLE.format(name=name) + "\n" + body + "\n"


def markdown_cells(nb: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Markdown cells of a notebook, in order."""
    return [c for c in nb["cells"] if c.get("cell_type") == "markdown"]


def skeleton(en_path: Path) -> Path:
    """Add to the notebook's translation file an entry, holding the English text, for every cell it lacks.

    Existing entries are kept as they are (stale ones too: ``check`` names them); the order follows the notebook,
    entries for cells the English no longer has go last.
    """
    nb = load(en_path)
    path = translation_path(en_path)
    old = parse(path.read_text(encoding="utf-8")) if path.is_file() else {}
    entries = [(c["id"], old.get(c["id"]) or Entry(en_hash(source(c)), source(c))) for c in markdown_cells(nb)]
    ids = {cid for cid, _ in entries}
    entries += [(cid, e) for cid, e in old.items() if cid not in ids]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(en_path.name, entries), encoding="utf-8")
    return path


def _git(folder: Path, *args: str) -> str | None:
    """What ``git -C folder ARGS`` prints, or None where git fails (no repository, no such revision or file)."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, encoding="utf-8")
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


@functools.lru_cache(maxsize=64)
def _english_versions(en_path: Path, head: str | None) -> tuple[tuple[str, dict[str, str]], ...]:
    """The committed versions of an English notebook up to ``head``, newest first: (commit, its Markdown cells' texts
    by id)."""
    log = _git(en_path.parent, "log", "--format=%H", head or "HEAD", "--", en_path.name) or ""
    out = []
    for commit in log.split():
        text = _git(en_path.parent, "show", f"{commit}:./{en_path.name}")
        if text is not None:
            out.append((commit, {c["id"]: source(c) for c in markdown_cells(json.loads(text))}))
    return tuple(out)


@dataclass(frozen=True)
class Made:
    """Where a translation's hash leads in git history: the English text it was made for (None where no committed
    version of the notebook has it) and the revision whose translation file holds the translation as it stood
    before the English changed (the parent of the commit that changed it; HEAD where the change is not committed)."""

    english: str | None
    before: str | None


def made_for(en_path: Path, cell_id: str, sha: str) -> Made:
    """The English that the translation of ``cell_id``, made for the English hash ``sha``, translates (see :class:`Made`)."""
    en_path = en_path.resolve()
    versions = _english_versions(en_path, (_git(en_path.parent, "rev-parse", "HEAD") or "").strip() or None)
    for i, (_, cells) in enumerate(versions):
        if cell_id in cells and en_hash(cells[cell_id]) == sha:
            return Made(cells[cell_id], f"{versions[i - 1][0]}^" if i else "HEAD")
    return Made(None, None)


def english_diff(old: str, new: str, context: int = 6) -> str:
    """What changed from ``old`` to ``new``, word by word, as ``git diff --word-diff`` writes it: ``[-removed-]`` and
    ``{+added+}`` with ``context`` words around each change; one line per group of nearby changes."""
    a, b = re.findall(r"\S+", old), re.findall(r"\S+", new)
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        words = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                words += a[i1:i2]
                continue
            if i2 > i1:
                words.append("[-" + " ".join(a[i1:i2]) + "-]")
            if j2 > j1:
                words.append("{+" + " ".join(b[j1:j2]) + "+}")
        first, last = group[0], group[-1]
        hunks.append(("… " if first[1] > 0 else "") + " ".join(words) + (" …" if last[2] < len(a) else ""))
    return "\n".join(hunks) if hunks else "(white space only)"


def what_changed(english: str | None, now: str) -> str:
    """What changed in an English cell since its translation was made: the word diff from ``english`` (the text it
    was made for) to ``now``, indented under the message; without ``english``, the start of the English now."""
    if english is None:
        start = next((ln.strip() for ln in now.splitlines() if ln.strip()), "")[:70]
        return f"the English it was made for is not in this checkout's git history; the English now: {start!r}"
    return "the English changed:\n    " + english_diff(english, now).replace("\n", "\n    ")


def stamp(en_path: Path, cell_ids: Iterable[str], unchanged: bool = False) -> None:
    """Mark the entries of ``cell_ids`` as translating the English cells as they are now.

    A cell whose English changed while its translation stayed as it was before the change is refused (SystemExit,
    showing what changed in the English) unless ``unchanged`` says that the translation answers the new English as
    it is. Where git history cannot tell, the entry is stamped."""
    nb = load(en_path)
    english = {c["id"]: source(c) for c in markdown_cells(nb)}
    path = translation_path(en_path)
    entries = parse(path.read_text(encoding="utf-8"))
    refused = []
    for cid in cell_ids:
        if cid not in english or cid not in entries:
            raise SystemExit(f"{en_path.name}: no Markdown cell {cid} with a translation")
        sha = en_hash(english[cid])
        if entries[cid].sha != sha and not unchanged:
            made = made_for(en_path, cid, entries[cid].sha)
            old = _git(path.parent, "show", f"{made.before}:./{path.name}") if made.before else None
            before = parse(old).get(cid) if old is not None else None
            if before is not None and before.text == entries[cid].text:
                refused.append(f"{en_path.name}: cell {cid}: {what_changed(made.english, english[cid])}")
                continue
        entries[cid] = Entry(sha, entries[cid].text)
    if refused:
        raise SystemExit("\n".join(refused) + f"\nnot stamped: the translation is as it was before the English "
                         f"changed; revise data/zh/{en_path.stem}.md first, or stamp with --unchanged if the "
                         "translation answers the English as it is now")
    path.write_text(render(en_path.name, entries.items()), encoding="utf-8")


def language_cell() -> dict[str, Any]:
    """The one code cell a zh notebook adds: ``helpers.plots`` draws in Chinese (set-up, hidden on the slides)."""
    return {"cell_type": "code", "execution_count": None, "id": LANGUAGE_CELL_ID, "outputs": [],
            "metadata": {"slideshow": {"slide_type": "skip"}, "tags": ["remove-input"]}, "source": lines(LANGUAGE_SOURCE)}


def build(en: Mapping[str, Any], entries: Mapping[str, Entry], name: str = "the notebook") -> dict[str, Any]:
    """The zh notebook, unexecuted: every English cell in order, Markdown from ``entries``, the language cell
    after the first code cell. Raises naming the cells whose translation is missing or stale."""
    problems = sync_problems(name, en, entries)
    if problems:
        raise ValueError("; ".join(problems))
    nb = copy.deepcopy(dict(en))
    cells: list[dict[str, Any]] = []
    added = False
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = lines(entries[cell["id"]].text)
        elif cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        cells.append(cell)
        if cell["cell_type"] == "code" and not added:
            cells.append(language_cell())
            added = True
    nb["cells"] = cells
    return nb


def sync_problems(name: str, en: Mapping[str, Any], entries: Mapping[str, Entry],
                  en_path: Path | None = None) -> list[str]:
    """Each English Markdown cell without a translation, or changed since its translation (with what changed in the
    English, from git history of ``en_path``, notebooks/<name> by default), and each orphan entry."""
    out = []
    english = {c["id"]: source(c) for c in markdown_cells(en)}
    for cid, text in english.items():
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")[:70]
        if cid not in entries:
            out.append(f"{name}: cell {cid} has no translation (English: {first!r})")
        elif entries[cid].sha != en_hash(text):
            made = made_for(en_path or EN_DIR / name, cid, entries[cid].sha)
            out.append(f"{name}: cell {cid} changed since its translation was made; "
                       f"{what_changed(made.english, text)}\n  revise data/zh/{Path(name).stem}.md, then "
                       f"`python tools/zh.py stamp notebooks/{name} {cid}` and `make zh`")
    out += [f"{name}: data/zh holds a translation of cell {cid}, which the English no longer has"
            for cid in entries if cid not in english]
    return out


def comparable(nb: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """What a zh notebook must share with the one ``build`` makes: each cell's type, id, source and metadata."""
    return [(c["cell_type"], c.get("id", ""), source(c), json.dumps(c.get("metadata", {}), sort_keys=True))
            for c in nb["cells"]]


def stale_build(en: Mapping[str, Any], entries: Mapping[str, Entry], zh: Mapping[str, Any],
                name: str = "the notebook") -> list[str]:
    """How the stored zh notebook differs from what ``make zh`` makes now (cell by cell), or []."""
    want, have = comparable(build(en, entries, name)), comparable(zh)
    if len(want) != len(have):
        return [f"{len(have)} cells where `make zh` makes {len(want)}"]
    return [f"cell {w[1]} ({w[0]}) differs" for w, h in zip(want, have) if w != h]


def strip_markup(markdown: str) -> str:
    """Markdown without formulas, code, link targets and HTML tags: the prose a reader reads."""
    text = re.sub(r"^(```|~~~).*?^\1", " ", markdown, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\$\$.+?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)|<[^>]+>|https?://\S+", " ", text)
    return text


def english_runs(markdown: str, min_words: int = 4) -> list[str]:
    """Runs of ``min_words`` or more English words in a Markdown text's prose (untranslated sentences).

    Titles and quotations kept in the original (in italics or quotation marks) are not prose."""
    text = re.sub(r'(?<![*\w])\*[^*\n]+\*(?!\*)|"[^"\n]+"|“[^”]+”|《[^》]+》', " ", strip_markup(markdown))
    runs = re.findall(r"[A-Za-z][A-Za-z'’-]*(?:[ ,]+[A-Za-z][A-Za-z'’-]*)+", text)
    return [r for r in runs if len(re.findall(r"[A-Za-z][A-Za-z'’-]*", r)) >= min_words]


def is_chinese(markdown: str) -> bool:
    """True for a Markdown cell written in Chinese: it has Chinese characters in its prose."""
    return bool(CJK.search(strip_markup(markdown)))


def chinese_share(nb: Mapping[str, Any]) -> float:
    """The share of a notebook's Markdown cells that are written in Chinese."""
    cells = markdown_cells(nb)
    return sum(is_chinese(source(c)) for c in cells) / len(cells) if cells else 0.0


def short_form_errors(text: str) -> list[str]:
    """Each ``1.09 亿（109,482,240）`` whose short form is not the exact figure rounded to the digits it shows."""
    out = []
    for m in SHORT_FORM.finditer(text):
        exact = int(m["exact"].replace(",", ""))
        decimals = len(m["short"].split(".")[1]) if "." in m["short"] else 0
        want = round(exact / UNITS[m["unit"]], decimals)
        if abs(float(m["short"]) - want) > 10 ** -(decimals + 3):
            shown = f"{want:.{decimals}f}"
            out.append(f"{m.group(0)!r}: {m['exact']} is {shown} {m['unit']}")
    return out


def unrendered_emphasis(markdown: str) -> list[str]:
    """The ``**`` pairs nbconvert's Markdown renderer (mistune) leaves as literal asterisks.

    CommonMark does not close ``**演讲者备注。**`` before a Chinese character (a closing ``**`` after punctuation must be
    followed by a space or punctuation): write ``**演讲者备注。** 这……``."""
    import mistune  # nbconvert's renderer: what the HTML pages and decks show

    rendered = mistune.create_markdown()(re.sub(r"\$\$.+?\$\$|\$[^$\n]+\$", " ", markdown, flags=re.S))
    text = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", " ", rendered, flags=re.S)
    return [m.group(0) for m in re.finditer(r".{0,12}\*\*.{0,12}", text)]


def missing_figures(english: str, chinese: str) -> list[str]:
    """The grouped figures (109,482,240) of the English text that its translation does not carry."""
    return sorted(set(GROUPED.findall(english)) - set(GROUPED.findall(chinese)))


def content_problems(en_path: Path) -> list[str]:
    """What the translation of one notebook gets wrong in substance: figures dropped or mis-shortened,
    English sentences left, too few cells in Chinese."""
    nb = load(en_path)
    path = translation_path(en_path)
    entries = parse(path.read_text(encoding="utf-8")) if path.is_file() else {}
    out = []
    translated = 0
    for cell in markdown_cells(nb):
        e = entries.get(cell["id"])
        if e is None:
            continue
        where = f"{en_path.name}: cell {cell['id']}"
        lost = missing_figures(source(cell), e.text)
        if lost:
            out.append(f"{where}: the translation drops {', '.join(lost)}")
        out += [f"{where}: {err}" for err in short_form_errors(e.text)]
        stars = unrendered_emphasis(e.text)
        if stars:
            out.append(f"{where}: bold left as literal ** (add a space after the closing **): {stars[0]!r}")
        runs = english_runs(e.text)
        if runs:
            out.append(f"{where}: English left in the prose: {runs[0]!r}")
        translated += is_chinese(e.text)
    cells = markdown_cells(nb)
    if cells and translated / len(cells) < MIN_CHINESE_SHARE:
        out.append(f"{en_path.name}: {translated} of {len(cells)} Markdown cells in Chinese "
                   f"({100 * translated / len(cells):.0f}% < {100 * MIN_CHINESE_SHARE:.0f}%)")
    return out


# what may stay English in a printed line: code and names in quotes, titles in 《》 or “”, code in backticks
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|《[^》]*》|“[^”]*”|`[^`]*`")


def printed_prose(nb: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Each line a zh notebook printed (its stream outputs) that still reads English once
    :func:`helpers.language.printed_line` has passed over it: ``(cell id, the line, its Chinese so far)``. The stored
    outputs may be English (not yet executed with the dictionary's entries) or Chinese; an entry for the line, in
    ``data/zh/printed/``, clears it."""
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") != "stream":
                continue
            for line in "".join(o["text"]).split("\n"):
                zh = printed_line(line)
                if english_words(QUOTED.sub(" ", zh), printed_dictionary()):
                    out.append((cell["id"], line, zh))
    return out


def check(paths: list[Path]) -> list[str]:
    """Every problem of the zh edition for these English notebooks: sync, content, stored notebooks."""
    out = []
    for en_path in paths:
        en = load(en_path)
        tpath = translation_path(en_path)
        if not tpath.is_file():
            out.append(f"{en_path.name}: no translation file {tpath.relative_to(ROOT)}")
            continue
        entries = parse(tpath.read_text(encoding="utf-8"))
        sync = sync_problems(en_path.name, en, entries, en_path)
        out += sync
        out += content_problems(en_path)
        zh_path = ZH_DIR / en_path.name
        if not zh_path.is_file():
            out.append(f"{en_path.name}: no notebooks/zh/{en_path.name} (make zh)")
        else:
            zh_nb = load(zh_path)
            if not sync:
                out += [f"notebooks/zh/{en_path.name}: {d}: run `make zh`"
                        for d in stale_build(en, entries, zh_nb, en_path.name)]
            out += printed_problems(zh_path)
    return out


def printed_problems(zh_path: Path, shown: int = 3) -> list[str]:
    """The lines of a zh notebook that print English: the first ``shown`` of them and how many in all."""
    prose = printed_prose(load(zh_path))
    name = zh_path.relative_to(ROOT).as_posix()
    out = [f"{name}: cell {cell} prints English: {zh!r} (an entry in data/zh/printed/; `make zh`)"
           for cell, _, zh in prose[:shown]]
    if len(prose) > shown:
        out.append(f"{name}: {len(prose) - shown} more lines print English (python tools/zh.py printed {name})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("skeleton", "build", "check"):
        p = sub.add_parser(name)
        p.add_argument("notebooks", type=Path, nargs="*", help="English notebooks (default: all)")
    p = sub.add_parser("printed", help="the lines a zh notebook prints in English, and their Chinese so far")
    p.add_argument("--all", action="store_true", help="every printed line, in Chinese: to read the tables' alignment")
    p.add_argument("notebooks", type=Path, nargs="*", help="zh notebooks (default: all)")
    p = sub.add_parser("stamp")
    p.add_argument("--unchanged", action="store_true",
                   help="the English changed and the translation, as it is, still answers it")
    p.add_argument("notebook", type=Path)
    p.add_argument("cells", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "stamp":
        stamp(args.notebook, args.cells, unchanged=args.unchanged)
        return 0
    if args.command == "printed":
        zh_paths = [p.resolve() for p in args.notebooks] or sorted(ZH_DIR.glob("*.ipynb"))
        for zh_path in zh_paths:
            if args.all:
                for cell in load(zh_path)["cells"]:
                    text = "".join("".join(o["text"]) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
                    if text:
                        print(f"--- {zh_path.stem} {cell['id']}\n" + "\n".join(map(printed_line, text.rstrip("\n").split("\n"))))
                continue
            for cell, line, zh in printed_prose(load(zh_path)):
                print(f"{zh_path.stem} {cell}\n  en: {line}\n  zh: {zh}")
        return 0
    paths = [p.resolve() for p in args.notebooks] or english_notebooks()
    if args.command == "skeleton":
        for p in paths:
            print(f"wrote {skeleton(p).relative_to(ROOT)}")
    elif args.command == "build":
        failed = []
        for p in paths:
            entries = parse(translation_path(p).read_text(encoding="utf-8"))
            try:
                nb = build(load(p), entries, p.name)
            except ValueError as e:
                failed.append(str(e))
                continue
            ZH_DIR.mkdir(parents=True, exist_ok=True)
            (ZH_DIR / p.name).write_text(dump(nb), encoding="utf-8")
            print(f"wrote notebooks/zh/{p.name}")
        if failed:
            print("\n".join(failed), file=sys.stderr)
            return 1
    elif args.command == "check":
        problems = check(paths)
        print("\n".join(problems) if problems else f"zh edition in sync: {len(paths)} notebooks")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
