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
import io
import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import TextIO

from .config import DATA_DIR, model_names

__all__: list[str] = ["current_language", "translate", "english_words"]

LANGUAGES = ("en", "zh")
DICTIONARY = DATA_DIR / "zh" / "plots.json"
# the lines the notebooks print, one file per notebook (data/zh/printed/08_flops_and_memory.json): the same format
PRINTED = DATA_DIR / "zh" / "printed"
# a word of English prose: letters only, capitalised or lower case (acronyms, CamelCase, code names are not prose)
_WORD = re.compile(r"[A-Za-z][a-z]+")
_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")
_GROUP = re.compile(r"\\g<(\w+)>")
_MATH = re.compile(r"\$[^$]*\$")  # mathtext: tick labels such as $\mathdefault{10^{3}}$


# groups of a pattern that hold a round figure in millions (m_...) or billions (b_...), written with 万 or 亿
ROUND_FIGURES = {"m_": 10**6, "b_": 10**9}
UNITS: tuple[tuple[str, int], ...] = (("万亿", 10**12), ("亿", 10**8), ("万", 10**4))  # largest first


def round_figure(figure: str, scale: int) -> str:
    """A round figure a paper or a card writes in millions or billions, as Chinese writes it: ``("60", 10**6)`` ->
    ``"6000 万"``, ``("2.8", 10**9)`` -> ``"28 亿"``; exact (no digit is lost or rounded).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    value = Decimal(figure.replace(",", "")) * scale
    unit, size = next(((u, n) for u, n in UNITS if value >= n), ("", 1))
    return f"{format((value / size).normalize(), 'f')} {unit}".rstrip()


@dataclass
class _State:
    language: str = "en"


STATE = _State()  # set by helpers.plots.use_language, the one switch


@dataclass(frozen=True)
class _Dictionary:
    exact: dict[str, str]
    patterns: tuple[tuple[re.Pattern[str], str], ...]
    keep: frozenset[str]


def _read_dictionary(files: list) -> _Dictionary:
    data = [json.loads(path.read_text(encoding="utf-8")) for path in files]
    exact = {k: v for d in data for k, v in d.get("exact", {}).items()}
    patterns = tuple((re.compile(regex), replacement) for d in data for regex, replacement in d.get("patterns", []))
    keep = frozenset(w for d in data for w in d.get("keep", [])) | frozenset(model_names())  # bert-base-uncased stays
    return _Dictionary(exact, patterns, keep)


@functools.lru_cache(maxsize=1)
def dictionary() -> _Dictionary:
    """The figures' dictionary, ``data/zh/plots.json``, read once: exact entries, compiled patterns and the words kept
    as they are.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return _read_dictionary([DICTIONARY])


@functools.lru_cache(maxsize=1)
def printed_dictionary() -> _Dictionary:
    """The printed lines' dictionary: the figures' (:func:`dictionary`), then one file per notebook in
    ``data/zh/printed/``, whose entries win. A figure never reads these files: a table header's "key" (键名, a GPU's
    key in 10_budgets) is not the key tensor of a figure.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return _read_dictionary([DICTIONARY, *sorted(PRINTED.glob("*.json"))])


def current_language() -> str:
    """The language the helpers draw and print in now: ``"en"`` (the default) or ``"zh"``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return STATE.language


def _match(text: str, d: _Dictionary) -> tuple[str, bool] | None:
    """``text``'s exact entry or the first pattern that matches all of it, and whether it covers the text; None when no
    entry does."""
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
                if key[:2] in ROUND_FIGURES:  # "60 million", "2.8 billion": 6000 万, 28 亿
                    return round_figure(value, ROUND_FIGURES[key[:2]])
                if not key.startswith("t_"):
                    return value
                value, ok = _line(value, d)
                covered = covered and ok
                return value
            return _GROUP.sub(group, replacement), covered
    return None


def _line(text: str, d: _Dictionary) -> tuple[str, bool]:
    """One line in Chinese, and whether an entry covers it: its exact entry, else the first pattern that matches all
    of it (the groups named ``t_...`` translated in turn: a model's name stays, its part does not), else the line
    unchanged (covered when it has no English words).
    """
    found = _match(text, d)
    return found if found is not None else (text, not english_words(text, d))


@functools.lru_cache(maxsize=4096)
def translation(text: str, printed: bool = False) -> tuple[str, bool]:
    """``text`` in Chinese, and whether entries cover all of it: the whole text's exact entry or pattern, else line by
    line (the figures' checker asks the second). From the figures' dictionary, or, for a text the helpers print
    (``printed``), from the printed lines' (:func:`printed_dictionary`).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    d = printed_dictionary() if printed else dictionary()
    if "\n" in text:  # an exact entry or a pattern for the whole text (a box whose lines make one sentence)
        whole = _line(text, d)
        if whole[0] != text or text in d.exact:
            return whole
    lines = [_line(line, d) for line in text.split("\n")]
    return "\n".join(line for line, _ in lines), all(ok for _, ok in lines)


def translate(text: str, printed: bool = False) -> str:
    """``text`` in Chinese from ``data/zh/plots.json`` (and, where ``printed``, ``data/zh/printed/``): the whole
    text's exact entry or pattern, else line by line (an exact entry, else the first regular expression that matches
    the whole line); what no entry covers stays.

    Figures in a text are copied, never reformatted, but for a pattern's round figure in millions or billions
    (:func:`round_figure`).
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return translation(text, printed)[0]


def english_words(text: str, d: _Dictionary | None = None) -> list[str]:
    """The words of English prose in ``text``: tokens of letters only (``mean``, ``Parameters``), not code names
    (``query.weight``, ``W_Q``, ``bf16``), acronyms or CamelCase (``BERT``, ``LayerNorm``), math (``$10^{3}$``),
    the shipped configs' names (``bert-base-uncased``) nor the ``keep`` words (``Gemma``) of ``d`` (the figures'
    dictionary unless given).

    A text with English words that no entry of the dictionary covers is what :func:`helpers.plots.untranslated`
    lists. No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    keep = (d or dictionary()).keep
    words = []
    for token in _TOKEN.findall(_MATH.sub(" ", text)):
        token = token.strip(".-")
        if not token or token in keep or any(ch.isdigit() or ch in "_." for ch in token):
            continue
        words += [part for part in token.split("-") if part not in keep and _WORD.fullmatch(part)]
    return words


def say(text: str) -> str:
    """A text the helpers print, in the reader's language: ``text`` as it is in English, :func:`translate` of it in
    Chinese (with the printed lines' entries).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return text if STATE.language == "en" else translate(text, printed=True)


_CELL = re.compile(r"\S+(?: \S+)*")  # a column of a printed line: words separated by single spaces


def display_width(text: str) -> int:
    """The columns ``text`` takes in a fixed-width font: two for a wide character (汉字, full-width punctuation).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


@functools.lru_cache(maxsize=4096)  # notebooks print the same lines again (tables, loops); the dictionary is fixed
def printed_line(line: str) -> str:
    """A line a notebook prints, in Chinese: its entry in the dictionary (``data/zh/plots.json`` and
    ``data/zh/printed/``), else column by column (columns are separated by two or more spaces, as the notebooks'
    tables print them), each column starting where it started in English, so a table's rows stay aligned.

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    d = printed_dictionary()
    found = _match(line, d)
    if found is not None:
        return found[0]
    if not english_words(line, d):
        return line
    out = ""
    for cell in _CELL.finditer(line):
        text = _line(cell.group(0), d)[0]
        column = display_width(line[:cell.start()])
        gap = column - display_width(out)
        out += " " * (gap if not out.strip() or gap >= 2 else 2) + text
    return out


class _PrintedStream(io.TextIOBase):
    """``sys.stdout`` in a zh notebook: each line written passes through :func:`printed_line` (a line not yet ended
    waits for its end, or for a flush)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *done, self.pending = self.pending.split("\n")
        if done:
            self.stream.write("".join(printed_line(line) + "\n" for line in done))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(printed_line(self.pending))
            self.pending = ""
        self.stream.flush()

    def __getattr__(self, name: str):  # fileno, encoding, isatty ... of the stream underneath
        return getattr(self.stream, name)


def print_in(lang: str) -> None:
    """In a running notebook (IPython), what the cells print passes through :func:`printed_line` from now on
    (``"zh"``), or is printed as written (``"en"``). Outside IPython nothing changes; :func:`helpers.plots.use_language`
    calls it.

    No notebook calls it; it works behind the helpers of ``zh/00_overview``.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return
    if lang == "zh" and not isinstance(sys.stdout, _PrintedStream):
        sys.stdout = _PrintedStream(sys.stdout)
    elif lang != "zh" and isinstance(sys.stdout, _PrintedStream):
        sys.stdout.flush()
        sys.stdout = sys.stdout.stream
