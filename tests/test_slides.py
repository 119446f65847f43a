"""The reveal.js decks of ``make slides`` start offline and show what the notebooks' slide metadata says.

Each deck is opened in headless Chromium with the network cut off (names resolve nowhere, http goes to a
dead proxy, and Chromium's net log must show no request from the page). What a deck must hold is computed
from its .ipynb (tools/sitekit.py), never typed in. Chromium is required: without it these tests fail
(``make test`` installs the Debian package). The fixture runs ``make slides`` first, which rebuilds only
decks older than their notebooks, so the tests always look at the current decks.
"""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tools.sitekit import (
    cjk_characters, deck_display_math, font_face_urls, is_solution, normalize_text, notes_texts, on_slides, prose_runs,
    slide_cell_ids, slide_hashes, slide_layout, slide_type, solution_runs, source,
)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# the Chinese edition (notebooks/zh: the twins of the English notebooks and the Chinese-only ones); decks and pages
# of both languages are checked alike
ZH_NOTEBOOKS = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
SITE_NOTEBOOKS = NOTEBOOKS + ZH_NOTEBOOKS
SLIDES = ROOT / "build" / "slides"
SLIDES_ZH = ROOT / "build" / "slides-zh"


def nb_id(notebook: Path) -> str:
    """A test id: the notebook's stem, ``zh/<stem>`` for the Chinese edition."""
    return f"zh/{notebook.stem}" if notebook.parent.name == "zh" else notebook.stem


def page_key(page: Path) -> str:
    """The key of a built page in :func:`open_pages`' result: its path under build/ (``slides-zh/03_….slides.html``)."""
    return page.resolve().relative_to((ROOT / "build").resolve()).as_posix()

from tools import build_site  # noqa: E402


def make(target: str) -> None:
    """Run ``make -s TARGET`` in the repository, one at a time across test processes (xdist)."""
    (ROOT / "build").mkdir(exist_ok=True)
    with open(ROOT / "build" / ".site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(["make", "-s", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"make {target} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def deck_of(notebook: Path) -> Path:
    return (SLIDES_ZH if notebook.parent.name == "zh" else SLIDES) / f"{notebook.stem}.slides.html"


def open_pages(target: str, pages: list[Path], config: dict) -> dict[str, tuple]:
    """``make TARGET``, then open every page once (two Chromiums at a time): {file name: (Dom, network requests)}.

    Shared with tests/test_html.py. A missing Chromium fails the tests rather than skipping them.
    """
    make(target)
    try:
        build_site.chromium()
    except FileNotFoundError as e:
        pytest.fail(str(e))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda page: build_site.probe(page, config), pages)
        return {page_key(page): r for page, r in zip(pages, results)}


CJK_FAMILY = "Noto Sans SC subset"  # the @font-face family of data/fonts in tools/*_offline.html.j2
REMOVE_INPUT = "remove-input"  # nbconvert's cell tag: the deck shows the cell's output without its code


@pytest.fixture(scope="module")
def opened():
    """Every deck built and opened once: {deck file name: (Dom, network requests)}."""
    return open_pages("slides", [deck_of(nb) for nb in SITE_NOTEBOOKS], {"deck": True, "fonts": [CJK_FAMILY]})


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks/*.ipynb: nothing to make slides from"


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_deck_starts_offline(notebook, opened):
    dom, requests = opened[page_key(deck_of(notebook))]
    assert dom.ready, f"reveal.js did not start: .reveal has classes {dom.reveal_classes}"
    assert dom.probe.get("done"), "reveal.js or MathJax did not finish within the virtual time budget"
    assert dom.probe["errors"] == [], "load failures or script errors"
    assert requests == [], "the deck asked the network for these"


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_deck_loads_only_files_inside_build(notebook, opened):
    """Every script and style sheet is a relative URL to a file under build/: the folder can be copied anywhere."""
    page = deck_of(notebook).read_text(encoding="utf-8")
    refs = re.findall(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"', page)
    assert any("reveal.js" in r for r in refs) and any("MathJax.js" in r for r in refs), refs
    for ref in refs:
        assert "://" not in ref and not ref.startswith("/"), f"not a relative URL: {ref}"
        target = (deck_of(notebook).parent / ref.split("?")[0]).resolve()
        assert target.is_file(), f"{ref} -> {target} does not exist"
        assert (ROOT / "build") in target.parents, f"{ref} points outside build/"


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_deck_loads_its_cjk_font_offline(notebook, opened):
    """The deck declares the series' CJK font by relative URLs to files under build/, and both faces load."""
    page = deck_of(notebook).read_text(encoding="utf-8")
    urls = font_face_urls(page)
    assert [u.rsplit("/", 1)[-1] for u in urls] == list(build_site.CJK_FONTS.values())
    for url in urls:
        target = (deck_of(notebook).parent / url).resolve()
        assert "://" not in url and target.is_file() and (ROOT / "build") in target.parents, f"{url} -> {target}"
    dom, requests = opened[page_key(deck_of(notebook))]
    assert dom.probe.get("done"), "the page did not finish within the virtual time budget"
    assert dom.probe.get("fonts") == {f"{CJK_FAMILY} {w}": "loaded" for w in ("400", "700")}
    assert requests == []


def test_cjk_font_holds_every_character_of_the_series():
    """Every CJK character in the notebooks (outputs too), data, templates and README has a glyph in both faces.

    A new Chinese quote fails here until ``make cjk-font`` cuts the font again.
    """
    chars = build_site.series_cjk_characters()
    in_notebooks = set().union(*(cjk_characters(nb.read_text(encoding="utf-8")) for nb in NOTEBOOKS))
    assert in_notebooks and in_notebooks <= chars, "the series quotes Chinese write-ups: the search finds nothing"
    for name in build_site.CJK_FONTS.values():
        font = build_site.FONT_DIR / name
        missing = chars - build_site.font_characters(font)
        assert not missing, f"{name} lacks {''.join(sorted(missing))}: run `make cjk-font`"
        assert font.stat().st_size < 2_000_000, f"{name}: a subset of the series' characters, 2 MB at most"
    licence = (build_site.FONT_DIR / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and build_site.NOTO_COPYRIGHT in licence


def test_font_is_confined_to_the_cjk_blocks():
    """Each @font-face of the CJK font in both templates has the unicode-range of sitekit.CJK_BLOCKS: it draws CJK only."""
    from tools.sitekit import CJK_BLOCKS

    expected = ", ".join(f"U+{lo:X}-{hi:X}" for lo, hi in CJK_BLOCKS)
    for template in ("tools/slides_offline.html.j2", "tools/html_offline.html.j2"):
        ranges = re.findall(r"unicode-range:\s*([^;]+);", (ROOT / template).read_text(encoding="utf-8"))
        assert ranges == [expected] * len(build_site.CJK_FONTS), template


def test_cjk_characters_are_found():
    assert cjk_characters("BERT 参数量《计算》，a·b — x") == set("参数量《计算》，")


def remove_input_cells(nb: dict) -> list[dict]:
    """The code cells tagged ``remove-input`` that the deck shows (not skipped)."""
    return [c for c in nb["cells"] if c.get("cell_type") == "code" and on_slides(c)
            and REMOVE_INPUT in c.get("metadata", {}).get("tags", [])]


def cell_html(page: str, cell_id: str) -> str:
    """The HTML of one cell of a deck or page: from its ``id="cell-id=..."`` to the next cell's."""
    start = page.index(f'id="cell-id={cell_id}"')
    end = page.find('id="cell-id=', start + 1)
    return page[start:end if end != -1 else len(page)]


def output_texts(cell: dict) -> list[str]:
    """The non-empty lines of a code cell's text outputs (stream, or text/plain without a picture or HTML beside it)."""
    texts = []
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if out["output_type"] == "stream":
            texts.append(source({"source": out.get("text", "")}))
        elif "text/plain" in data and not {"text/html", "text/markdown", "image/png", "image/svg+xml"} & set(data):
            texts.append(source({"source": data["text/plain"]}))
    return [line.strip() for t in texts for line in t.splitlines() if line.strip()]


def html_text(fragment: str) -> str:
    """The text of an HTML fragment: tags dropped, entities decoded."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_remove_input_hides_the_code_keeps_the_output(notebook):
    """A set-up cell tagged ``remove-input`` shows its output on the slide, not its code."""
    make("slides")
    cells = remove_input_cells(load(notebook))
    if not cells:
        pytest.skip(f"no cell of {notebook.name} is tagged {REMOVE_INPUT}")
    page = deck_of(notebook).read_text(encoding="utf-8")
    for cell in cells:
        shown = cell_html(page, cell["id"])
        assert "jp-InputArea" not in shown and "hl-ipython3" not in shown, f"cell {cell['id']}: its code is in the deck"
        assert cell.get("outputs"), f"cell {cell['id']} is tagged {REMOVE_INPUT} but has no output to show"
        missing = [t for t in output_texts(cell) if t not in html_text(shown)]
        assert missing == [], f"cell {cell['id']}: output lines missing from the deck"
        images = sum("image/png" in o.get("data", {}) for o in cell["outputs"])
        assert shown.count("<img") >= images, f"cell {cell['id']}: a picture is missing"


def test_make_slides_honours_remove_input(tmp_path):
    """The flags ``make slides`` used (build/slides/.flags) drop a tagged cell's code, keep its output and the rest."""
    make("slides")
    import shlex

    flags = shlex.split((SLIDES / ".flags").read_text(encoding="utf-8"))
    assert f"--TagRemovePreprocessor.remove_input_tags={REMOVE_INPUT}" in flags
    code = {"cell_type": "code", "execution_count": 1, "metadata": {}}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "t-1", "metadata": {"slideshow": {"slide_type": "slide"}}, "source": "# A slide"},
        {**code, "id": "t-2", "metadata": {"tags": [REMOVE_INPUT]}, "source": "plumbing_only = 1\nprint('kept output')",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "kept output\n"}]},
        {**code, "id": "t-3", "source": "taught_here = 2", "outputs": []}]}
    (tmp_path / "t.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "slides", "--log-level=ERROR",
                             "--output-dir", str(tmp_path), *flags, str(tmp_path / "t.ipynb")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    page = (tmp_path / "t.slides.html").read_text(encoding="utf-8")
    tagged, untagged = cell_html(page, "t-2"), cell_html(page, "t-3")
    assert "plumbing_only" not in page and "jp-InputArea" not in tagged and "kept output" in html_text(tagged)
    assert "taught_here" in untagged and "jp-InputArea" in untagged


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_links_between_decks_resolve(notebook, opened):
    """A link to another notebook (``01_embeddings.ipynb``) leads to its deck."""
    dom, _ = opened[page_key(deck_of(notebook))]
    local = [href.split("#")[0] for href, _ in dom.links if ":" not in href and not href.startswith("#")]
    assert [h for h in local if not (deck_of(notebook).parent / h).is_file()] == []


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_deck_has_the_slides_of_the_metadata(notebook, opened):
    dom, _ = opened[page_key(deck_of(notebook))]
    layout = slide_layout(load(notebook))
    # one top-level <section> per slide, each holding one <section> per subslide
    assert dom.sections == [len(subslides) for subslides in layout]


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_formulas_are_typeset(notebook, opened):
    dom, _ = opened[page_key(deck_of(notebook))]
    expected = deck_display_math(load(notebook))
    assert dom.math_display >= expected, f"MathJax found {dom.math_display} display formulas, the notebook has {expected}"
    assert dom.math_rendered == dom.math_scripts, f"{dom.math_scripts} formulas found, {dom.math_rendered} typeset"
    assert dom.math_errors == 0


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_solution_cells_are_skipped(notebook):
    nb = load(notebook)
    wrong = [i for i, c in enumerate(nb["cells"]) if is_solution(c) and slide_type(c) != "skip"]
    assert wrong == [], f"cells tagged 'solution' without slide_type 'skip': {wrong}"


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_no_solution_on_the_slides(notebook, opened):
    nb = load(notebook)
    dom, _ = opened[page_key(deck_of(notebook))]
    # exactly the cells that are not skipped are in the deck (nbconvert marks each cell with its id) ...
    assert all("id" in c for c in nb["cells"]), "cells without ids (nbformat >= 4.5 gives every cell one)"
    assert dom.cell_ids == slide_cell_ids(nb)
    solutions = {c["id"] for c in nb["cells"] if is_solution(c)}
    assert solutions.isdisjoint(dom.cell_ids)
    # ... and no sentence of a solution is anywhere in the deck, speaker notes included
    text = normalize_text(dom.text)
    shown = [run for run in solution_runs(nb) if run in text]
    assert shown == [], "solution text on the slides"
    # the same search finds the text of the cells that are on the slides (so it would find a solution)
    slide_text = normalize_text(dom.slide_text)
    lost = [run for c in nb["cells"] if c.get("cell_type") == "markdown" and on_slides(c)
            for run in prose_runs(source(c)) if run not in (text if slide_type(c) == "notes" else slide_text)]
    assert lost == [], "text of slide cells not found in the deck"


def test_speaker_view_opens_offline_with_the_notes():
    """Pressing S opens reveal.js's speaker view (notes plugin): both previews load and the notes show."""
    make("slides")
    with_notes = [(nb, notes_texts(load(nb))) for nb in NOTEBOOKS]
    with_notes = [(nb, notes) for nb, notes in with_notes if notes]
    assert with_notes, "no notebook has speaker notes to show"
    notebook, notes = with_notes[0]
    (h, v), text = notes[0]
    dom, requests = build_site.probe(deck_of(notebook), {"deck": True, "speaker": [h, v]}, budget_ms=10000)
    assert requests == [] and dom.probe["errors"] == []
    view = dom.probe.get("speaker")
    assert view, "no speaker view"
    assert view["title"] == "reveal.js - Speaker View"
    assert view["previews"] == 2, "the current and upcoming slide previews"
    shown = normalize_text(view["notes"])
    runs = prose_runs(text, min_words=3)
    assert all(run in shown for run in runs), f"slide {h}/{v}: notes {runs} not in the speaker view: {shown!r}"
    if with_notes:
        assert runs, f"slide {h}/{v}: notes without prose to check"


def test_slide_layout_follows_nbconvert():
    """sitekit.slide_layout reads the metadata as nbconvert's own preprocessor does."""
    from nbconvert.exporters.slides import _RevealMetadataPreprocessor
    from nbformat import from_dict

    types = ["notes", "skip", "-", "fragment", "notes", "slide", "notes", "subslide", "fragment", "fragment", "-",
             "skip", "slide", "subslide", "subslide", "fragment", "slide", "skip"]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "markdown", "source": t, "metadata": {"slideshow": {"slide_type": t}}, "id": str(i)}
                    for i, t in enumerate(types)]}
    marked, _ = _RevealMetadataPreprocessor().preprocess(from_dict(nb), {})
    layout: list[list[int]] = []
    for cell in marked.cells:
        if cell.metadata.get("slide_start"):
            layout.append([])
        if cell.metadata.get("subslide_start"):
            layout[-1].append(0)
        if cell.metadata.get("fragment_start"):
            layout[-1][-1] += 1
    assert slide_layout(nb) == layout == [[1], [0, 2], [0, 0, 1], [0]]
    assert slide_hashes(layout) == ["#/0/0/0", "#/1/0", "#/1/1/1", "#/2/0", "#/2/1", "#/2/2/0", "#/3/0"]
    # the notes before the first slide and those after a fragment are not what the speaker view shows
    assert notes_texts(nb) == [((1, 0), "notes")]


def test_probe_catches_network_and_missing_files(tmp_path):
    """The browser checks can fail: a page that loads from the network or misses a file is caught."""
    page = tmp_path / "page.html"
    page.write_text('<!DOCTYPE html><html><head><script src="https://cdn.example.com/x.js"></script>'
                    '<script src="missing.js"></script></head><body><p>hello</p>'
                    '<script>undefinedFunction()</script></body></html>')
    dom, requests = build_site.probe(page, {})
    assert requests == ["https://cdn.example.com/x.js"]
    errors = " ".join(dom.probe["errors"])
    assert "failed to load https://cdn.example.com/x.js" in errors and "missing.js" in errors
    assert "undefinedFunction" in errors and dom.probe["done"] and "hello" in dom.text
