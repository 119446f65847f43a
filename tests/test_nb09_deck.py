"""Deck 09's shape: a main line of at most 30 subslides (title to the last exercise), then an appendix that opens
with a slide whose heading begins "## Appendix"; a legend slide near the start. Read from the notebook's slide
metadata as nbconvert reads it (``sitekit.slide_layout``), and, where ``make slides`` has built it, from the deck."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import ROOT

from tools.sitekit import cell_positions, slide_layout, slide_type, source  # noqa: E402

NOTEBOOK = ROOT / "notebooks" / "09_modern_architectures.ipynb"
DECK = ROOT / "build" / "slides" / "09_modern_architectures.slides.html"
MAIN_LINE = 30
NB = json.loads(NOTEBOOK.read_text(encoding="utf-8"))


def _opening(heading: str) -> tuple[int, int]:
    """The (slide, subslide) of the first slide-opening Markdown cell whose first line starts with ``heading``."""
    for cell, pos in zip(NB["cells"], cell_positions(NB)):
        if (cell["cell_type"] == "markdown" and slide_type(cell) in ("slide", "subslide")
                and source(cell).lstrip().startswith(heading)):
            return pos
    raise AssertionError(f"no slide opens with {heading!r}")


def subslides_before(pos: tuple[int, int], layout: list[list[int]]) -> int:
    """How many subslides come before the subslide ``pos`` in presentation order."""
    return sum(len(s) for s in layout[:pos[0]]) + pos[1]


def test_main_line_at_most_30_subslides():
    layout = slide_layout(NB)
    appendix = _opening("## Appendix")
    assert appendix[1] == 0, "the appendix opens a horizontal slide of its own"
    main = subslides_before(appendix, layout)
    assert 0 < main <= MAIN_LINE, main
    assert sum(map(len, layout)) > main  # the appendix holds the rest


def test_appendix_comes_after_summary_and_exercises():
    layout = slide_layout(NB)
    appendix = subslides_before(_opening("## Appendix"), layout)
    for heading in ("## Summary", "## Exercises"):
        assert subslides_before(_opening(heading), layout) < appendix, heading
    exercises = [(cell, pos) for cell, pos in zip(NB["cells"], cell_positions(NB))
                 if re.match(r"\*\*Exercise 09\.\d", source(cell))]
    assert len(exercises) == 5 and all(subslides_before(pos, layout) < appendix for _, pos in exercises)


def test_legend_near_the_start():
    layout = slide_layout(NB)
    legend = _opening("## Symbols")
    assert subslides_before(legend, layout) <= 2
    cell = next(c for c in NB["cells"] if source(c).startswith("## Symbols"))
    assert source(cell).splitlines()[2] == "| symbol | meaning |"


def test_built_deck_has_the_same_layout():
    """The deck `make slides` built: one top-level section per slide, as the layout says (skipped when not built)."""
    if not DECK.exists() or DECK.stat().st_mtime < NOTEBOOK.stat().st_mtime:
        pytest.skip("deck 09 not built, or older than the notebook: run `make slides`")
    html = DECK.read_text(encoding="utf-8")
    assert html.count("## Appendix") == 0  # rendered, not raw Markdown
    assert re.search(r"<h2[^>]*>Appendix", html)
    assert len(re.findall(r"<section\b", html)) >= sum(map(len, slide_layout(NB)))


def test_the_count_can_fail():
    """The counter is not vacuous: moving the appendix heading to the end puts every subslide in the main line."""
    layout = slide_layout(NB)
    assert subslides_before((len(layout) - 1, len(layout[-1]) - 1), layout) > MAIN_LINE
