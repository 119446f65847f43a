"""The reader's language: what the helpers draw and print, in English (the default) or in Chinese.

Introduced in ``zh/00_overview``. One switch, :func:`helpers.plots.use_language` (the set-up cell of every zh
notebook), sets it for everything the helpers show: the figures' texts (translated as they are drawn, see
:mod:`helpers.plots.language`), the column headers of the printed tables (:func:`helpers.report.table`) and the
exercise checker's feedback (:func:`helpers.exercises.check`). One dictionary, ``data/zh/plots.json``, holds the
Chinese of every such text: exact entries first, then regular expressions for texts with figures in them
(``12 layers``, ``V = 30,522``). Figures are copied, never reformatted; in English every text is printed and drawn
as the helpers write it. This module imports no matplotlib, so the command line and the tables can read it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

from .config import DATA_DIR, model_names

__all__: list[str] = ["current_language", "translate", "english_words"]

LANGUAGES = ("en", "zh")
DICTIONARY = DATA_DIR / "zh" / "plots.json"
# a word of English prose: letters only, capitalised or lower case (acronyms, CamelCase, code names are not prose)
_WORD = re.compile(r"[A-Za-z][a-z]+")
_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")
_GROUP = re.compile(r"\\g<(\w+)>")
_MATH = re.compile(r"\$[^$]*\$")  # mathtext: tick labels such as $\mathdefault{10^{3}}$


@dataclass
class _State:
    language: str = "en"


STATE = _State()  # set by helpers.plots.use_language, the one switch


@dataclass(frozen=True)
class _Dictionary:
    exact: dict[str, str]
    patterns: tuple[tuple[re.Pattern[str], str], ...]
    keep: frozenset[str]


@functools.lru_cache(maxsize=1)
def dictionary() -> _Dictionary:
    """``data/zh/plots.json``, read once: exact entries, compiled patterns and the words kept as they are.

    No notebook calls it; it works behind the helpers of ``zh/00_overview`` (and the zh edition's checks).
    """
    data = json.loads(DICTIONARY.read_text(encoding="utf-8"))
    patterns = tuple((re.compile(regex), replacement) for regex, replacement in data.get("patterns", []))
    keep = frozenset(data.get("keep", [])) | frozenset(model_names())  # a config's name (bert-base-uncased) stays
    return _Dictionary(dict(data.get("exact", {})), patterns, keep)


def current_language() -> str:
    """The language the helpers draw and print in now: ``"en"`` (the default) or ``"zh"``.

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    return STATE.language


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
def translation(text: str) -> tuple[str, bool]:
    """``text`` in Chinese, and whether entries cover all of it: the whole text's exact entry or pattern, else line by
    line (the figures' checker asks the second).

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    d = dictionary()
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
    return translation(text)[0]


def english_words(text: str) -> list[str]:
    """The words of English prose in ``text``: tokens of letters only (``mean``, ``Parameters``), not code names
    (``query.weight``, ``W_Q``, ``bf16``), acronyms or CamelCase (``BERT``, ``LayerNorm``), math (``$10^{3}$``),
    the shipped configs' names (``bert-base-uncased``) nor the dictionary's ``keep`` words (``Gemma``).

    A text with English words that no entry of the dictionary covers is what :func:`helpers.plots.untranslated`
    lists. No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    keep = dictionary().keep
    words = []
    for token in _TOKEN.findall(_MATH.sub(" ", text)):
        token = token.strip(".-")
        if not token or token in keep or any(ch.isdigit() or ch in "_." for ch in token):
            continue
        words += [part for part in token.split("-") if part not in keep and _WORD.fullmatch(part)]
    return words


def say(text: str) -> str:
    """A text the helpers print, in the reader's language: ``text`` as it is in English, :func:`translate` of it in
    Chinese.

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    return text if STATE.language == "en" else translate(text)
