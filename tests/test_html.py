"""The HTML pages of ``make html`` render offline, formulas typeset, and the index lists them in reading order.

Same set-up as tests/test_slides.py: headless Chromium without network (required: a missing browser fails),
expectations computed from the notebooks, and ``make html`` run first (it rebuilds only what changed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_slides import NOTEBOOKS, ROOT, load, open_pages  # one build lock, one browser runner

from sitekit import normalize_text, notebook_title, page_display_math  # noqa: E402  (.ci/, put on sys.path by test_slides)

HTML = ROOT / "build" / "html"


def page_of(notebook: Path) -> Path:
    return HTML / f"{notebook.stem}.html"


@pytest.fixture(scope="module")
def opened():
    """Every page and the index built and opened once: {file name: (Dom, network requests)}."""
    return open_pages("html", [page_of(nb) for nb in NOTEBOOKS] + [HTML / "index.html"], {})


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_page_renders_offline(notebook, opened):
    dom, requests = opened[page_of(notebook).name]
    assert dom.probe.get("done"), "the page (or MathJax) did not finish within the virtual time budget"
    assert dom.probe["errors"] == [], "load failures or script errors"
    assert requests == [], "the page asked the network for these"
    assert normalize_text(notebook_title(load(notebook))) in normalize_text(dom.text)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_page_holds_every_cell(notebook, opened):
    """Learners read the whole notebook, exercise solutions included (the slides leave those out)."""
    dom, _ = opened[page_of(notebook).name]
    assert dom.cell_ids == [c["id"] for c in load(notebook)["cells"]]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_links_between_pages_resolve(notebook, opened):
    """A link to another notebook (``01_embeddings.ipynb``) leads to its page."""
    dom, _ = opened[page_of(notebook).name]
    local = [href.split("#")[0] for href, _ in dom.links if ":" not in href and not href.startswith("#")]
    assert [h for h in local if not (HTML / h).is_file()] == []


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_page_formulas_are_typeset(notebook, opened):
    dom, _ = opened[page_of(notebook).name]
    expected = page_display_math(load(notebook))
    assert dom.math_display >= expected, f"MathJax found {dom.math_display} display formulas, the notebook has {expected}"
    assert dom.math_rendered == dom.math_scripts, f"{dom.math_scripts} formulas found, {dom.math_rendered} typeset"
    assert dom.math_errors == 0


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_page_loads_only_files_inside_build(notebook):
    page = page_of(notebook).read_text(encoding="utf-8")
    refs = re.findall(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"', page)
    assert any("MathJax.js" in r for r in refs), refs
    for ref in refs:
        assert "://" not in ref and not ref.startswith("/"), f"not a relative URL: {ref}"
        target = (page_of(notebook).parent / ref.split("?")[0]).resolve()
        assert target.is_file() and (ROOT / "build") in target.parents, f"{ref} -> {target}"


def test_index_links_every_page_in_reading_order(opened):
    dom, requests = opened["index.html"]
    assert requests == [] and dom.probe["errors"] == []
    expected = [(f"{nb.stem}.html", notebook_title(load(nb))) for nb in NOTEBOOKS]
    assert NOTEBOOKS and dom.links == expected
    assert all((HTML / href).is_file() for href, _ in dom.links)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_solutions_are_folded(notebook, opened):
    """Each solution sits in a closed <details> (click to open), so a learner tries the exercise first."""
    page = page_of(notebook).read_text(encoding="utf-8")
    solutions = [c["id"] for c in load(notebook)["cells"] if "solution" in c["metadata"].get("tags", [])]
    assert solutions, "a notebook without exercise solutions"
    for cell_id in solutions:
        anchor = page.index(f'id="cell-id={cell_id}"')
        opening = page.rfind('<details class="solution">', 0, anchor)
        assert opening != -1 and page.rfind("</details>", opening, anchor) == -1, f"solution {cell_id} is not folded"
