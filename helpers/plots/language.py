"""The figures' language: ``use_language("zh")`` draws every title, axis label, legend entry and annotation in Chinese.

Introduced in ``zh/00_overview``. The zh notebooks run the English code cell for cell, so the figures' texts
are English strings (the helpers' own, and the titles a cell passes in); in Chinese each one is translated at the
moment it is drawn (and measured, so layouts fit the Chinese text), from the dictionary ``data/zh/plots.json``:
exact entries first, then regular expressions for texts with figures in them (``12 layers``, ``V = 30,522``).
The objects keep their English text: ``get_text()`` and every printed output are the same in both languages.
The CJK glyphs come from the vendored subset of Noto Sans CJK SC in ``data/fonts`` (``make cjk-font``), so a
figure renders without a system CJK font; Latin letters and digits stay in DejaVu Sans.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import matplotlib as mpl
from matplotlib import font_manager
from matplotlib.text import Text

from ..config import DATA_DIR, model_names

__all__: list[str] = ["use_language", "current_language", "translate", "untranslated"]

LANGUAGES = ("en", "zh")
DICTIONARY = DATA_DIR / "zh" / "plots.json"
FONT_DIR = DATA_DIR / "fonts"
# the vendored CJK faces that FreeType reads (woff2, for the browsers, it does not): `make cjk-font` writes them
FONT_FILES = ("NotoSansSC-Regular.subset.otf", "NotoSansSC-Bold.subset.otf")
# matplotlib falls back glyph by glyph only along a text's list of families (a generic family such as "sans-serif"
# is one font, DejaVu Sans): the vendored family goes last in ``font.family`` and in each drawn text's own list, so
# Latin letters, digits, ×, ², γ and → keep the font they have in English and only CJK comes from Noto
# a word of English prose: letters only, capitalised or lower case (acronyms, CamelCase, code names are not prose)
_WORD = re.compile(r"[A-Za-z][a-z]+")
_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")
_GROUP = re.compile(r"\\g<(\w+)>")
_MATH = re.compile(r"\$[^$]*\$")  # mathtext: tick labels such as $\mathdefault{10^{3}}$


@dataclass
class _State:
    language: str = "en"
    saved_rc: dict[str, Any] | None = None  # ``font.family`` as it was before Chinese was switched on
    family: str = ""  # the vendored font's family name ("Noto Sans CJK SC")


_STATE = _State()
_UNTRANSLATED: set[str] = set()
_BUSY: set[int] = set()  # the texts being drawn or measured in Chinese now (a call may nest in another)


@dataclass(frozen=True)
class _Dictionary:
    exact: dict[str, str]
    patterns: tuple[tuple[re.Pattern[str], str], ...]
    keep: frozenset[str]


@functools.lru_cache(maxsize=1)
def _dictionary() -> _Dictionary:
    """``data/zh/plots.json``, read once: exact entries, compiled patterns and the words kept as they are."""
    data = json.loads(DICTIONARY.read_text(encoding="utf-8"))
    patterns = tuple((re.compile(regex), replacement) for regex, replacement in data.get("patterns", []))
    keep = frozenset(data.get("keep", [])) | frozenset(model_names())  # a config's name (bert-base-uncased) stays
    return _Dictionary(dict(data.get("exact", {})), patterns, keep)


def current_language() -> str:
    """The language the figures are drawn in now: ``"en"`` (the default) or ``"zh"``.

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    return _STATE.language


def _line(text: str, d: _Dictionary) -> tuple[str, bool]:
    """One line in Chinese, and whether an entry covers it: its exact entry, else the first pattern that matches all
    of it (the groups named ``t_...`` translated in turn: a model's name stays, its part does not), else the line
    unchanged (covered when it has no English words).
    """
    if text in d.exact:
        return d.exact[text], True
    for regex, replacement in d.patterns:
        match = regex.fullmatch(text)
        if match:
            covered = True

            def group(m: re.Match[str], match: re.Match[str] = match) -> str:
                nonlocal covered
                key = m.group(1)
                value = match.group(int(key) if key.isdigit() else key) or ""
                if not key.startswith("t_"):
                    return value
                value, ok = _line(value, d)
                covered = covered and ok
                return value
            return _GROUP.sub(group, replacement), covered
    return text, not english_words(text)


@functools.lru_cache(maxsize=4096)
def _translation(text: str) -> tuple[str, bool]:
    """``text`` in Chinese, and whether entries cover all of it: the whole text's exact entry or pattern, else line by
    line."""
    d = _dictionary()
    if "\n" in text:  # an exact entry or a pattern for the whole text (a box whose lines make one sentence)
        whole = _line(text, d)
        if whole[0] != text or text in d.exact:
            return whole
    lines = [_line(line, d) for line in text.split("\n")]
    return "\n".join(line for line, _ in lines), all(ok for _, ok in lines)


def translate(text: str) -> str:
    """``text`` in Chinese from ``data/zh/plots.json``: the whole text's exact entry or pattern, else line by line
    (an exact entry, else the first regular expression that matches the whole line); what no entry covers stays.

    Figures in a text are copied, never reformatted.
    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    return _translation(text)[0]


def english_words(text: str) -> list[str]:
    """The words of English prose in ``text``: tokens of letters only (``mean``, ``Parameters``), not code names
    (``query.weight``, ``W_Q``, ``bf16``), acronyms or CamelCase (``BERT``, ``LayerNorm``), math (``$10^{3}$``),
    the shipped configs' names (``bert-base-uncased``) nor the dictionary's ``keep`` words (``Gemma``).

    A text with English words that no entry of the dictionary covers is what :func:`untranslated` lists.
    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    keep = _dictionary().keep
    words = []
    for token in _TOKEN.findall(_MATH.sub(" ", text)):
        token = token.strip(".-")
        if not token or token in keep or any(ch.isdigit() or ch in "_." for ch in token):
            continue
        words += [part for part in token.split("-") if part not in keep and _WORD.fullmatch(part)]
    return words


def untranslated(reset: bool = False) -> list[str]:
    """The texts drawn in Chinese so far with English words that no entry of the dictionary covers (sorted); ``reset``
    empties the list. ``tools/zh_plot_texts.py`` runs the notebooks and prints it: the dictionary is complete when it
    is empty.

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
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
        if _STATE.language != "zh" or id(self) in _BUSY or not isinstance(original, str):
            return method(self, *args, **kwargs)
        chinese = translate(original)
        if not _translation(original)[1]:
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
    """Draw every figure from now on in ``lang``: ``"en"`` (English, as the helpers write it) or ``"zh"`` (Chinese).

    ``"zh"`` registers the vendored CJK font with matplotlib, appends it to ``font.family`` (Latin stays DejaVu
    Sans, CJK falls back to it glyph by glyph) and translates each text as it is drawn; ``"en"`` puts ``font.family``
    and the drawing back as they were (English figures come out byte for byte as before).
    Introduced in ``zh/00_overview``.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"use_language: {lang!r} is not one of {', '.join(map(repr, LANGUAGES))}")
    if lang == _STATE.language:
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
    _STATE.language = lang
