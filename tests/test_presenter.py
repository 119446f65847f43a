"""The presenter standard, measured on the built decks as an instructor meets them, slide by slide.

Every deck: no visible ``assert``; at most 12 visible lines of code on one slide (every code cell shown on that
slide counted together); speaker notes on at least 60% of its slides; at least two pictures. Checks stay in
the notebooks, in cells the decks skip. ``make slides`` runs first (it rebuilds only decks older than their
notebooks).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.test_slides import SITE_NOTEBOOKS, deck_of, make, nb_id

MAX_CODE_LINES, NOTES_SHARE, MIN_PICTURES = 12, 0.6, 2


class DeckReader(HTMLParser):
    """One record per innermost ``<section>``: its visible code, whether it has notes, its pictures."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[dict] = []
        self.slides: list[dict] = []
        self.in_code_block = self.in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "section":
            if self.open:
                self.open[-1]["leaf"] = False
            self.open.append({"code": "", "notes": False, "pictures": 0, "leaf": True})
            self.slides.append(self.open[-1])
        elif not self.open:
            return
        elif tag == "aside" and "notes" in cls:
            self.open[-1]["notes"] = True
        elif tag == "img":
            self.open[-1]["pictures"] += 1
        elif tag == "div" and "hl-ipython3" in cls:
            self.in_code_block = True
        elif tag == "pre" and self.in_code_block:
            self.in_pre = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "section" and self.open:
            self.open.pop()
        elif tag == "pre" and self.in_pre:
            self.in_pre = self.in_code_block = False
            self.open[-1]["code"] += "\n"

    def handle_data(self, data: str) -> None:
        if self.in_pre and self.open:
            self.open[-1]["code"] += data


def read_deck(html: str) -> list[dict]:
    reader = DeckReader()
    reader.feed(html)
    return [s for s in reader.slides if s["leaf"]]  # a section that only wraps subslides is no slide


@pytest.fixture(scope="module")
def decks() -> dict[str, list[dict]]:
    make("slides")
    return {nb_id(nb): read_deck(deck_of(nb).read_text(encoding="utf-8")) for nb in SITE_NOTEBOOKS}


def code_lines(slide: dict) -> int:
    return len([line for line in slide["code"].splitlines() if line.strip()])


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_no_assert_on_a_slide(notebook, decks):
    shown = [s["code"] for s in decks[nb_id(notebook)] if re.search(r"^\s*assert\b", s["code"], re.M)]
    assert shown == [], "checks belong in cells the deck skips"


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_code_fits_a_slide(notebook, decks):
    assert max(map(code_lines, decks[nb_id(notebook)])) <= MAX_CODE_LINES


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_most_slides_have_speaker_notes(notebook, decks):
    slides = decks[nb_id(notebook)]
    assert sum(s["notes"] for s in slides) >= NOTES_SHARE * len(slides)


@pytest.mark.parametrize("notebook", SITE_NOTEBOOKS, ids=nb_id)
def test_every_deck_has_pictures(notebook, decks):
    assert sum(s["pictures"] for s in decks[nb_id(notebook)]) >= MIN_PICTURES


def test_the_reader_sees_what_it_measures():
    html = ('<section><section><p>t</p><aside class="notes">n</aside><img src="x"></section>'
            '<section><div class="hl-ipython3"><pre>assert x\n\ny = 1\n</pre></div></section></section>')
    first, second = read_deck(html)
    assert (first["notes"], first["pictures"], code_lines(first)) == (True, 1, 0)
    assert (second["notes"], code_lines(second)) == (False, 2) and second["code"].startswith("assert")
