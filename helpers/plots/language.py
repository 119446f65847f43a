"""The figures' language: ``use_language("zh")`` draws every title, axis label, legend entry and annotation in Chinese.

Introduced in ``zh/00_overview``. The zh notebooks run the English code cell for cell, so the figures' texts
are English strings (the helpers' own, and the titles a cell passes in); in Chinese each one is translated at the
moment it is drawn (and measured, so layouts fit the Chinese text), from the dictionary ``data/zh/plots.json``:
exact entries first, then regular expressions for texts with figures in them (``12 layers``, ``V = 30,522``).
The objects keep their English text: ``get_text()`` is the same in both languages. The same switch makes the printed
tables' headers and the exercise checker's feedback Chinese (:mod:`helpers.language`, which holds the language and
the dictionary without matplotlib).
The CJK glyphs come from the vendored subset of Noto Sans CJK SC in ``data/fonts`` (``make cjk-font``), so a
figure renders without a system CJK font; Latin letters and digits stay in DejaVu Sans.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import matplotlib as mpl
from matplotlib import font_manager
from matplotlib.text import Text

from ..config import DATA_DIR
from ..language import LANGUAGES, STATE as _LANGUAGE, current_language, print_in, translate, translation
from ..language import english_words  # noqa: F401  (read here by tests/test_plots_language.py)

__all__: list[str] = ["use_language", "current_language", "translate", "untranslated"]

FONT_DIR = DATA_DIR / "fonts"
# the vendored CJK faces that FreeType reads (woff2, for the browsers, it does not): `make cjk-font` writes them
FONT_FILES = ("NotoSansSC-Regular.subset.otf", "NotoSansSC-Bold.subset.otf")
# matplotlib falls back glyph by glyph only along a text's list of families (a generic family such as "sans-serif"
# is one font, DejaVu Sans): the vendored family goes last in ``font.family`` and in each drawn text's own list, so
# Latin letters, digits, ×, ², γ and → keep the font they have in English and only CJK comes from Noto


@dataclass
class _State:
    saved_rc: dict[str, Any] | None = None  # ``font.family`` as it was before Chinese was switched on
    family: str = ""  # the vendored font's family name ("Noto Sans CJK SC")


_STATE = _State()
_UNTRANSLATED: set[str] = set()
_BUSY: set[int] = set()  # the texts being drawn or measured in Chinese now (a call may nest in another)


def untranslated(reset: bool = False) -> list[str]:
    """The texts drawn in Chinese so far with English words that no entry of the dictionary covers (sorted); ``reset``
    empties the list. ``tools/zh_plot_texts.py`` runs the notebooks and prints it: the dictionary is complete when it
    is empty.

    No notebook calls it or reaches it.
    """
    texts = sorted(_UNTRANSLATED)
    if reset:
        _UNTRANSLATED.clear()
    return texts


def _in_chinese(method: Callable[..., Any]) -> Callable[..., Any]:
    """A method of ``Text`` (draw, measure, lay out) with the text translated for the call and restored after it, and
    the vendored CJK family added to the end of the text's families (a text may name its own, "monospace")."""
    @functools.wraps(method)
    def wrapper(self: Text, *args: Any, **kwargs: Any) -> Any:
        original = self._text
        if _LANGUAGE.language != "zh" or id(self) in _BUSY or not isinstance(original, str):
            return method(self, *args, **kwargs)
        chinese = translate(original)
        if not translation(original)[1]:
            _UNTRANSLATED.add(original)
        font = self._fontproperties
        if _STATE.family not in font.get_family():
            self._fontproperties = font.copy()
            self._fontproperties.set_family([*font.get_family(), _STATE.family])
        self._text = chinese
        _BUSY.add(id(self))
        try:
            return method(self, *args, **kwargs)
        finally:
            self._text, self._fontproperties = original, font
            _BUSY.discard(id(self))

    wrapper._zh_original = method  # type: ignore[attr-defined]
    return wrapper


# drawing, measuring, and the layout that legends and annotation boxes measure directly (offsetbox.TextArea)
_WRAPPED = ("draw", "get_window_extent", "_get_layout")


def _wrap_text() -> None:
    """Wrap ``Text``'s drawing and measuring once (calling it again changes nothing)."""
    for name in _WRAPPED:
        method = getattr(Text, name, None)
        if method is not None and not hasattr(method, "_zh_original"):
            setattr(Text, name, _in_chinese(method))


def _unwrap_text() -> None:
    """Put ``Text``'s own methods back (where the wrapper is still the one in place)."""
    for name in _WRAPPED:
        original = getattr(Text.__dict__.get(name), "_zh_original", None)
        if original is not None:
            setattr(Text, name, original)


def _font_files() -> list[Path]:
    missing = [name for name in FONT_FILES if not (FONT_DIR / name).is_file()]
    if missing:
        raise FileNotFoundError(f"no {', '.join(missing)} in {FONT_DIR}: run `make cjk-font`")
    return [FONT_DIR / name for name in FONT_FILES]


def _add_fonts(files: Sequence[Path]) -> str:
    """Register the font files with matplotlib, once (no system font needed); their family name.

    They stay registered in English: a font no text names changes nothing that is drawn, and a figure made in Chinese
    can still be drawn again.
    """
    manager = font_manager.fontManager
    for path in files:
        if not any(Path(entry.fname) == path for entry in manager.ttflist):
            manager.addfont(str(path))
    return font_manager.FontProperties(fname=str(files[0])).get_name()


def use_language(lang: str) -> None:
    """Draw every figure and print every line from now on in ``lang``: ``"en"`` (English, as the helpers and the
    notebooks write it) or ``"zh"`` (Chinese).

    ``"zh"`` registers the vendored CJK font with matplotlib, appends it to ``font.family`` (Latin stays DejaVu
    Sans, CJK falls back to it glyph by glyph) and translates each text as it is drawn; :func:`helpers.report.table`
    and :func:`helpers.exercises.check` read the same switch (:mod:`helpers.language`), and in a notebook each
    printed line passes through :func:`helpers.language.printed_line` (its entry in the dictionary, or its columns').
    ``"en"`` puts ``font.family`` and the drawing back as they were (English figures and printed output come out
    byte for byte as before). Introduced in ``zh/00_overview``.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"use_language: {lang!r} is not one of {', '.join(map(repr, LANGUAGES))}")
    if lang == _LANGUAGE.language:
        return
    if lang == "zh":
        family = _add_fonts(_font_files())
        _STATE.saved_rc = {"font.family": list(mpl.rcParams["font.family"])}
        mpl.rcParams["font.family"] = [f for f in mpl.rcParams["font.family"] if f != family] + [family]
        _STATE.family = family
        _wrap_text()
    else:
        for key, value in (_STATE.saved_rc or {}).items():
            mpl.rcParams[key] = value
        _unwrap_text()
        _STATE.saved_rc, _STATE.family = None, ""
    _LANGUAGE.language = lang
    print_in(lang)
