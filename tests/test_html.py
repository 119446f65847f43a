"""The HTML pages of ``make html`` render offline, formulas typeset, and the index lists them in reading order.

Same set-up as tests/test_slides.py: headless Chromium without network (required: a missing browser fails),
expectations computed from the notebooks, and ``make html`` run first (it rebuilds only what changed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_slides import (  # one build lock, one browser runner
    CJK_FAMILY, NOTEBOOKS, REMOVE_INPUT, ROOT, SITE_NOTEBOOKS, ZH_NOTEBOOKS, build_site, cell_html, load, nb_id,
    open_pages, page_key,
)

from tools.sitekit import font_face_urls, normalize_text, notebook_title, page_display_math  # noqa: E402

HTML = ROOT / "build" / "html"
HTML_ZH = ROOT / "build" / "html-zh"
EXTRA_PAGES = [HTML / "index.html", HTML / "cheatsheet.html", HTML_ZH / "index.html", HTML_ZH / "glossary.html"]


def page_of(notebook: Path) -> Path:
    return (HTML_ZH if notebook.parent.name == "zh" else HTML) / f"{notebook.stem}.html"


@pytest.fixture(scope="module")
def opened():
    """Every page and the index built and opened once: {file name: (Dom, network requests)}."""
    return open_pages("html", [page_of(nb) for nb in SITE_NOTEBOOKS] + EXTRA_PAGES,
                      {"fonts": [CJK_FAMILY]})


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_page_renders_offline(notebook, opened):
    dom, requests = opened[page_key(page_of(notebook))]
    assert dom.probe.get("done"), "the page (or MathJax) did not finish within the virtual time budget"
    assert dom.probe["errors"] == [], "load failures or script errors"
    assert requests == [], "the page asked the network for these"
    assert normalize_text(notebook_title(load(notebook))) in normalize_text(dom.text)


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_page_holds_every_cell(notebook, opened):
    """Learners read the whole notebook, exercise solutions included (the slides leave those out)."""
    dom, _ = opened[page_key(page_of(notebook))]
    assert dom.cell_ids == [c["id"] for c in load(notebook)["cells"]]


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_page_loads_its_cjk_font_offline(notebook, opened):
    """The page declares the series' CJK font by relative URLs to files under build/, and both faces load."""
    urls = font_face_urls(page_of(notebook).read_text(encoding="utf-8"))
    assert [u.rsplit("/", 1)[-1] for u in urls] == list(build_site.CJK_FONTS.values())
    for url in urls:
        target = (page_of(notebook).parent / url).resolve()
        assert "://" not in url and target.is_file() and (ROOT / "build") in target.parents, f"{url} -> {target}"
    dom, requests = opened[page_key(page_of(notebook))]
    assert dom.probe.get("done"), "the page did not finish within the virtual time budget"
    assert dom.probe.get("fonts") == {f"{CJK_FAMILY} {w}": "loaded" for w in ("400", "700")}
    assert requests == []


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_page_keeps_the_code_the_deck_hides(notebook, opened):
    """A cell tagged ``remove-input`` loses its code in the deck only: the page, for self-study, shows it."""
    tagged = [c["id"] for c in load(notebook)["cells"]
              if c.get("cell_type") == "code" and REMOVE_INPUT in c["metadata"].get("tags", [])]
    if not tagged:
        pytest.skip(f"no cell of {notebook.name} is tagged {REMOVE_INPUT}")
    page = page_of(notebook).read_text(encoding="utf-8")
    assert [i for i in tagged if "jp-InputArea" not in cell_html(page, i)] == []


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_links_between_pages_resolve(notebook, opened):
    """A link to another notebook (``01_embeddings.ipynb``) leads to its page."""
    dom, _ = opened[page_key(page_of(notebook))]
    local = [href.split("#")[0] for href, _ in dom.links if ":" not in href and not href.startswith("#")]
    assert [h for h in local if not (page_of(notebook).parent / h).is_file()] == []


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_page_formulas_are_typeset(notebook, opened):
    dom, _ = opened[page_key(page_of(notebook))]
    expected = page_display_math(load(notebook))
    assert dom.math_display >= expected, f"MathJax found {dom.math_display} display formulas, the notebook has {expected}"
    assert dom.math_rendered == dom.math_scripts, f"{dom.math_scripts} formulas found, {dom.math_rendered} typeset"
    assert dom.math_errors == 0


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_page_loads_only_files_inside_build(notebook):
    page = page_of(notebook).read_text(encoding="utf-8")
    refs = re.findall(r'<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"', page)
    assert any("MathJax.js" in r for r in refs), refs
    for ref in refs:
        assert "://" not in ref and not ref.startswith("/"), f"not a relative URL: {ref}"
        target = (page_of(notebook).parent / ref.split("?")[0]).resolve()
        assert target.is_file() and (ROOT / "build") in target.parents, f"{ref} -> {target}"


def test_index_links_every_page_in_reading_order(opened):
    dom, requests = opened[page_key(HTML / "index.html")]
    assert requests == [] and dom.probe["errors"] == []
    expected = [(f"{nb.stem}.html", notebook_title(load(nb))) for nb in NOTEBOOKS] + [build_site.CHEATSHEET]
    assert NOTEBOOKS and dom.links == [("../html-zh/index.html", "中文")] + expected
    assert all((HTML / href).is_file() for href, _ in dom.links)


def test_zh_index_links_every_zh_page_the_glossary_and_the_cheatsheet(opened):
    dom, requests = opened[page_key(HTML_ZH / "index.html")]
    assert requests == [] and dom.probe["errors"] == []
    expected = [(f"{nb.stem}.html", notebook_title(load(nb))) for nb in ZH_NOTEBOOKS] + build_site.ZH_EXTRAS
    assert ZH_NOTEBOOKS and dom.links == [("../html/index.html", "English")] + expected
    assert all((HTML_ZH / href).is_file() for href, _ in dom.links)
    assert dom.probe.get("fonts") == {f"{CJK_FAMILY} {w}": "loaded" for w in ("400", "700")}


@pytest.mark.parametrize("page", [*SITE_NOTEBOOKS, *EXTRA_PAGES], ids=lambda p: nb_id(p) if p.suffix == ".ipynb" else page_key(p))
def test_every_page_has_a_language_switch_to_its_twin(page, opened):
    """Each page of the site opens with a link to the same page in the other language (its index when there is none)."""
    built = page_of(page) if page.suffix == ".ipynb" else page
    dom, _ = opened[page_key(built)]
    href, label = dom.links[0]
    zh = built.parent == HTML_ZH
    assert label == ("English" if zh else "中文")
    twin = (built.parent / href).resolve()
    assert twin.is_file() and twin.parent == (HTML if zh else HTML_ZH).resolve()
    assert twin.name in (built.name, "index.html")
    if page.suffix == ".ipynb" and (NOTEBOOKS[0].parent / ("" if zh else "zh") / page.name).is_file():
        assert twin.name == built.name, "a page with a twin in the other language links to the twin"


def test_glossary_page_shows_every_term(opened):
    import json

    dom, requests = opened[page_key(HTML_ZH / "glossary.html")]
    assert requests == [] and dom.probe["errors"] == []
    terms = json.loads((ROOT / "data" / "glossary.zh.json").read_text(encoding="utf-8"))["terms"]
    text = " ".join(dom.text.split())
    assert [t["zh"] for t in terms if " ".join(t["zh"].split()) not in text] == []
    assert dom.probe.get("fonts") == {f"{CJK_FAMILY} {w}": "loaded" for w in ("400", "700")}


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_solutions_are_folded(notebook, opened):
    """Each solution sits in a closed <details> (click to open), so a learner tries the exercise first."""
    page = page_of(notebook).read_text(encoding="utf-8")
    solutions = [c["id"] for c in load(notebook)["cells"] if "solution" in c["metadata"].get("tags", [])]
    assert solutions, "a notebook without exercise solutions"
    for cell_id in solutions:
        anchor = page.index(f'id="cell-id={cell_id}"')
        opening = page.rfind('<details class="solution">', 0, anchor)
        assert opening != -1 and page.rfind("</details>", opening, anchor) == -1, f"solution {cell_id} is not folded"
    label = build_site.SOLUTION_SUMMARY["zh" if notebook.parent.name == "zh" else "en"]
    assert page.count(f"<summary>{label}</summary>") == len(solutions), "the fold's label is in the page's language"


def test_cheatsheet_shows_every_rule_as_computed(opened):
    """The page holds each rule's formula and the value helpers give now; it loads nothing from the network."""
    from tools import cheatsheet

    dom, requests = opened[page_key(HTML / "cheatsheet.html")]
    assert requests == [] and dom.probe["errors"] == []
    text = " ".join(dom.text.split())
    rules = cheatsheet.rules()
    missing = [(r.name, part) for r in rules for part in (r.name, r.formula, r.value, r.note) if part
               and " ".join(part.split()) not in text]
    assert missing == [], "the built page differs from cheatsheet.rules(): run `make html`"
    formulas = " | ".join(r.formula for r in rules)
    for taught in ["(V + P + T)·H", "4H² + 4H", "2H·I + I + H", "2H + 4L·H", "H² + H", "12H² + 13H", "C·H + C",
                   "2A·d_k·H + 2A_kv·d_k·H", "N − L·(E − k)·3H·I", "12·L·H²", "4L·B·S²·H", "3 × forward", "6·N·D",
                   "2L·A_kv·d_k·S·B", "S·B·H·(34 + 5·A·S/H)", "16·N / G", "HFU = 4/3 · MFU", "D ≈ 20·N",
                   "2L·B·S·(S + 1)·A·d_k", "L·(r_kv + d_rope)·S·B", "b + (constants' bits) / g", "⌈n/2⌉ + ⌈n/64⌉",
                   "16 · bytes a token", "⌈min(W − 1 + S_chunk, S) / 16⌉ + 1", "M_held + max(X_fwd, X_bwd, X_step)",
                   "10·B·S·V, 12·B·S·V", "Σ⌈b·n_i⌉₅₁₂ ≈ 20·N", "b·B·S·H a layer"]:
        assert taught in formulas, f"{taught} is not on the cheatsheet"


def test_cheatsheet_stops_on_a_disagreement():
    from tools import cheatsheet

    assert cheatsheet._same(7, 7, "x") == 7
    with pytest.raises(AssertionError, match="cheatsheet: x"):
        cheatsheet._same(7, 8, "x")


def test_cheatsheet_prints_on_one_page(tmp_path):
    """Printed (A4 landscape, the page's print style sheet), the cheatsheet is one sheet of paper."""
    import subprocess

    pdf = tmp_path / "cheatsheet.pdf"
    subprocess.run([build_site.chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--print-to-pdf={pdf}",
                    (HTML / "cheatsheet.html").as_uri()], capture_output=True, timeout=120, check=True)
    pages = re.findall(rb"/Type\s*/Page(?!s)", pdf.read_bytes())
    assert len(pages) == 1
