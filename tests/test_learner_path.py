"""The notebooks as a learner walks through them: notes folded, answers after questions, one legend, a short deck.

Read from the .ipynb files alone (no build, no browser):
(a) every speaker-notes cell is labelled ("**Speaker notes") and folded in JupyterLab (``jupyter.source_hidden``);
(b) a notes cell that names an exercise (``NN.k``) comes after that exercise's solution, so neither a hint nor an
    answer reaches the learner before the answer cell;
(c) the exercises of a notebook are numbered NN.1, NN.2, ... in the order they appear, each with its solution after it;
(d) from notebook 06 on, one legend slide ("## Symbols", a ``| symbol | meaning |`` table), and across the series
    each symbol has one meaning;
(e) deck 09 keeps at most 30 subslides before its appendix (42 subslides were too many for one session).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.sitekit import cell_positions, is_solution, on_slides, slide_layout, slide_type, source  # noqa: E402

from tests.test_slides import NOTEBOOKS, load  # noqa: E402

NOTES_LABEL = "**Speaker notes"
LEGEND_FROM = 6  # the first notebook with a legend slide
APPENDIX_NOTEBOOK, MAX_MAIN_SUBSLIDES = "09", 30


def number(notebook: Path) -> str:
    """The two-digit number a notebook's exercise ids start with: ``08`` for 08_flops_and_memory."""
    return notebook.stem[:2]


def exercise_ids(text: str, nn: str) -> list[str]:
    """The exercise ids ``NN.k`` of notebook ``nn`` named in a text (``08.4``, not ``08.45%`` or ``108.4``)."""
    return re.findall(rf"(?<![\d.]){nn}\.\d+(?!\d|\.\d)", text)


def headed(nb: dict, word: str, nn: str) -> list[tuple[int, str]]:
    """``(cell index, id)`` of the Markdown cells that open with ``**Word NN.k``, in order."""
    out = []
    for i, cell in enumerate(nb["cells"]):
        m = re.search(rf"^\s*\*\*{word} ({nn}\.\d+)\b", source(cell), flags=re.M) if cell.get("cell_type") == "markdown" \
            else None
        if m:
            out.append((i, m.group(1)))
    return out


def legend(markdown: str) -> dict[str, str]:
    """The rows of a ``| symbol | meaning |`` table: {symbol: meaning}, both stripped."""
    rows: dict[str, str] = {}
    lines = iter(markdown.splitlines())
    for line in lines:
        if re.fullmatch(r"\s*\|\s*symbol\s*\|\s*meaning\s*\|\s*", line, flags=re.I):
            next(lines, None)  # |---|---|
            for row in lines:
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if not row.strip().startswith("|") or len(cells) != 2:
                    break
                rows[cells[0]] = cells[1]
    return rows


def legend_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c.get("cell_type") == "markdown" and source(c).startswith("## Symbols")]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notes_are_labelled_and_folded(notebook):
    nb = load(notebook)
    notes = [c for c in nb["cells"] if slide_type(c) == "notes"]
    assert [c["id"] for c in notes if not source(c).startswith(NOTES_LABEL)] == [], f"notes not opening with {NOTES_LABEL}"
    folded = [c["id"] for c in notes if c.get("metadata", {}).get("jupyter", {}).get("source_hidden") is not True]
    assert folded == [], "notes cells not folded (metadata.jupyter.source_hidden)"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notes_on_an_exercise_come_after_its_solution(notebook):
    nb, nn = load(notebook), number(notebook)
    solution_at = {ex: i for i, ex in headed(nb, "Solution", nn)}
    early = []
    for i, cell in enumerate(nb["cells"]):
        if slide_type(cell) == "notes":
            early += [(cell["id"], ex) for ex in exercise_ids(source(cell), nn) if i < solution_at.get(ex, len(nb["cells"]))]
    assert early == [], "speaker notes naming an exercise before its solution cell (a hint or an answer too early)"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_in_numerical_order_each_with_its_solution(notebook):
    nb, nn = load(notebook), number(notebook)
    exercises, solutions = headed(nb, "Exercise", nn), headed(nb, "Solution", nn)
    assert exercises, f"notebook {nn} has no exercises"
    ids = [ex for _, ex in exercises]
    assert ids == [f"{nn}.{k}" for k in range(1, len(ids) + 1)], f"exercises out of order: {ids}"
    assert [ex for _, ex in solutions] == ids, "one solution per exercise, in the same order"
    for (q, ex), (a, _) in zip(exercises, solutions):
        assert q < a and is_solution(nb["cells"][a]), f"{ex}: the solution must follow the question, tagged 'solution'"
    asked, answered = {ex: i for i, ex in exercises}, {ex: i for i, ex in solutions}
    checks = [(i, ex) for i, c in enumerate(nb["cells"]) if c.get("cell_type") == "code"
              for ex in re.findall(rf'check\("({nn}\.\d+)"', source(c))]
    assert sorted(ex for _, ex in checks) == sorted(ids), "one check(...) answer cell per exercise"
    assert [ex for i, ex in checks if not asked[ex] < i < answered[ex]] == [], \
        "each answer cell sits between its exercise and its solution"


@pytest.mark.parametrize("notebook", [nb for nb in NOTEBOOKS if int(number(nb)) >= LEGEND_FROM], ids=lambda p: p.stem)
def test_legend_slide(notebook):
    """One legend per notebook: a slide opening with '## Symbols', or a run of them one after another where one screen
    would hold more than a reader takes in (notebook 11's 47 symbols: the model's, attention's, the vision tower's),
    each with its table, no symbol on two of them."""
    nb = load(notebook)
    cells = legend_cells(nb)
    assert cells, "no cell opens with '## Symbols'"
    slides = [c for c in nb["cells"] if on_slides(c) and slide_type(c) != "notes"]
    for cell in cells:
        assert on_slides(cell) and slide_type(cell) in ("slide", "subslide"), "each legend cell is a slide of its own"
        assert legend(source(cell)), f"{cell['id']}: the legend has no | symbol | meaning | table"
    first = slides.index(cells[0])
    assert slides[first:first + len(cells)] == cells, "the legend's slides follow one another"
    symbols = [symbol for cell in cells for symbol in legend(source(cell))]
    assert len(symbols) == len(set(symbols)), "a symbol on two of the legend's slides"


def test_each_symbol_has_one_meaning():
    meanings: dict[str, dict[str, list[str]]] = {}
    for notebook in NOTEBOOKS:
        for cell in legend_cells(load(notebook)):
            for symbol, meaning in legend(source(cell)).items():
                meanings.setdefault(symbol, {}).setdefault(meaning, []).append(number(notebook))
    assert meanings, "no legend in any notebook"
    clashes = {s: m for s, m in meanings.items() if len(m) > 1}
    assert clashes == {}, "one meaning per symbol across the series: {symbol: {meaning: [notebooks]}}"


def main_subslides(nb: dict) -> int:
    """Subslides before the first slide whose heading begins '## Appendix' (all of them without an appendix)."""
    layout = slide_layout(nb)
    for cell, pos in zip(nb["cells"], cell_positions(nb)):
        if (pos is not None and cell.get("cell_type") == "markdown" and on_slides(cell) and slide_type(cell) != "notes"
                and re.search(r"^## Appendix", source(cell), flags=re.M)):
            return sum(len(subslides) for subslides in layout[:pos[0]]) + pos[1]
    return sum(map(len, layout))


def test_deck_09_main_line_fits_a_session():
    notebook = next(nb for nb in NOTEBOOKS if number(nb) == APPENDIX_NOTEBOOK)
    assert main_subslides(load(notebook)) <= MAX_MAIN_SUBSLIDES


def test_the_readers_see_what_they_check():
    """The parsers used above find what they must (so the tests can fail)."""
    assert exercise_ids("Pose 08.4, then 08.10; not 108.4 or 08.45.2 or 2.08.4", "08") == ["08.4", "08.10"]
    assert legend("## Symbols\n\n| symbol | meaning |\n|---|---|\n| $H$ | hidden size |\n| $L$ | layers |\n\nAfter.") == {
        "$H$": "hidden size", "$L$": "layers"}
    nb = {"cells": [{"cell_type": "markdown", "source": "# a", "metadata": {"slideshow": {"slide_type": "slide"}}},
                    {"cell_type": "markdown", "source": "b", "metadata": {"slideshow": {"slide_type": "subslide"}}},
                    {"cell_type": "markdown", "source": "## Appendix: more", "metadata": {"slideshow": {"slide_type": "slide"}}},
                    {"cell_type": "markdown", "source": "c", "metadata": {"slideshow": {"slide_type": "subslide"}}}]}
    assert main_subslides(nb) == 2
