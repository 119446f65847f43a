"""The 勘误表 (errata) of the five write-ups, and figures written the Chinese way.

Introduced in ``zh/errata``. ``data/published.json`` holds, under ``errata``, one row per claim of the write-ups that
the series corrects: the write-up's sentence verbatim, its figure (as stated, or as its own formula gives it), the
formula of the exact figure, the tensors that figure is made of (a regular expression over the tensor names of one
model class) and the notebook cell that shows why. :func:`errata` evaluates each row on its configuration with the
engine's :func:`~helpers.params.evaluate`; the notebook checks every exact figure against the engine's tensor table
and transformers' own class built on the meta device (:func:`tensor_sum`). :func:`errata_table` writes the rows as a
Markdown table whose last column links the cell of the zh twin (``02_multi_head_attention.ipynb#cell-id=02-014``:
the zh notebooks keep the English cell ids).

:func:`zh_count` writes a count as the Chinese edition does: the short form in 万 (10⁴), 亿 (10⁸) or 万亿 (10¹²)
with three significant digits, then the exact figure: ``1.09 亿（109,482,240）``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..config import load_config, published
from ..language import current_language
from ..params import evaluate, render
from ..language import UNITS
from ..report import fmt_int

SAME_QUOTE = "（同上）"
TRANSCRIBED = "†"  # after a quote whose formula is transcribed from LaTeX the write-up's page renders garbled


def zh_count(n: int, digits: int = 3) -> str:
    """A count as the Chinese edition writes it: ``109482240`` -> ``"1.09 亿（109,482,240）"``.

Introduced in ``zh/chinese_checkpoints``.
    The short form has ``digits`` significant digits (more when the unit leaves more
    before the point: 174,604,259,328 is ``1746 亿``), rounded as Python's ``round`` does; below 10,000 there is no
    short form (``"1,536"``). Negative counts keep their sign on both forms.
    """
    if n < 0:
        return "−" + zh_count(-n, digits).replace("（", "（−")
    for unit, size in UNITS:
        if n >= size:
            decimals = max(0, digits - len(str(n // size)))
            if len(str(int(round(n / size, decimals)))) > len(str(n // size)):  # 9.996 rounds up to 10.0
                decimals = max(0, decimals - 1)
            return f"{round(n / size, decimals):.{decimals}f} {unit}（{fmt_int(n)}）"
    return fmt_int(n)


@dataclass(frozen=True)
class Erratum:
    """One corrected claim: the write-up's sentence and figure, the exact figure, and where the series shows why.

    ``theirs`` is None where the claim states no figure (``Q、K、V是相同的``); ``theirs_label`` is the figure as the
    write-up writes it, or its formula rendered in the series' symbols; ``exact_label`` the same for the exact one.
    ``transcribed``: the quote's formula is transcribed from LaTeX that the write-up's page renders garbled.
    No notebook calls it; it works behind the helpers of ``zh/errata``.
    """

    id: str
    writeup: str
    title: str
    quote: str
    config: str
    model_class: str
    theirs: int | None
    theirs_label: str
    exact: int
    exact_label: str
    tensors: str
    minus: int
    verdict: str
    notebook: str
    cell: str
    link: str
    transcribed: bool = False

    @property
    def difference(self) -> int | None:
        """The exact figure less the write-up's (None where it gives none)."""
        return None if self.theirs is None else self.exact - self.theirs


def _figure(spec: Mapping[str, Any], config: Any) -> tuple[int, str]:
    """A figure of a row: its value (stated, else its formula evaluated) and how the table shows it."""
    value = spec["value"] if "value" in spec else evaluate(spec["formula"], config)
    label = spec.get("stated") or spec.get("label") or render(spec["formula"])
    return value, label


def errata(data: Mapping[str, Any] | None = None) -> list[Erratum]:
    """Every row of ``data["errata"]`` (``data/published.json`` by default), its figures evaluated.

    Introduced in ``zh/errata``. Each row's formulas are evaluated on its configuration read with its model class
    (``BertForPreTraining`` for a figure of the heads), so ``V``, ``H``, ``L`` ... are that model's.
    """
    data = published() if data is None else data
    titles = {w["id"]: w["title"] for w in data["writeups"]}
    labels = data["errata"]["notebooks"]
    out = []
    for row in data["errata"]["rows"]:
        config = load_config(row["config"], model_class=row["class"])
        theirs, theirs_label = _figure(row["theirs"], config) if row["theirs"] else (None, "—")
        exact, exact_label = _figure(row["exact"], config)
        link = f"[{labels[row['notebook']]}]({row['notebook']}.ipynb#cell-id={row['cell']})"
        out.append(Erratum(row["id"], row["writeup"], titles[row["writeup"]], row["quote"], row["config"],
                           row["class"], theirs, theirs_label, exact, exact_label, row["tensors"],
                           evaluate(row["minus"], config) if "minus" in row else 0, row["verdict"], row["notebook"],
                           row["cell"], link, row.get("transcribed", False)))
    return out


def tensor_sum(tensors: Iterable[Any], pattern: str) -> int:
    """The elements of the tensors whose ``name`` matches ``pattern`` (``re.search``): a row's exact figure, read off a
    tensor table (the engine's ``param_table`` or the tensors transformers built).

    Introduced in ``zh/errata``.
    """
    return sum(t.count for t in tensors if re.search(pattern, t.name))


def _cell(text: str) -> str:
    """A Markdown table cell: no pipe, no line break."""
    return text.replace("|", "\\|").replace("\n", " ")


def errata_table(rows: Sequence[Erratum], model: bool = False) -> str:
    """The rows as a Markdown table: the sentence, the write-up's figure, the exact one, the difference, what is off,
    and the link to the cell that shows why (a repeated sentence shows as （同上）; a transcribed formula is marked †).

    Introduced in ``zh/errata``. ``model=True`` adds the model each row is counted on.
    """
    head = ["博文原话"] + (["模型"] if model else []) + ["博文的数字", "精确值", "相差", "问题在哪", "依据"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    previous = None
    for r in rows:
        quote = SAME_QUOTE if r.quote == previous else f"“{r.quote}”" + (TRANSCRIBED if r.transcribed else "")
        previous = r.quote
        theirs = r.theirs_label if r.theirs is None or r.theirs_label == fmt_int(r.theirs) \
            else f"{r.theirs_label} = {fmt_int(r.theirs)}"
        exact = f"{r.exact_label} = {fmt_int(r.exact)}"
        diff = "—" if r.difference is None else f"{r.difference:+,}"
        cells = [quote] + ([f"`{r.config}`"] if model else []) + [theirs, exact, diff, r.verdict, r.link]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def writeups_table(data: Mapping[str, Any]) -> str:
    """The five write-ups as a Markdown table, in the reader's language: each one's title (linked where it is online),
    then in English a gloss of the title and what it claims; in Chinese what it counts and the figure it reaches
    (``errata.summary`` of ``data/published.json``), the titles being Chinese already.

    Introduced in ``00_overview``.
    """
    zh = current_language() == "zh"
    counts = {s["writeup"]: s["counts"] for s in data["errata"]["summary"]}
    lines = (["| | 标题 | 它算的是什么 | 它得出的数字 |"] if zh else ["| | title | in English | what it claims |"]) \
        + ["|---|---|---|---|"]
    for w in data["writeups"]:
        title = f"[{w['title']}]({w['link']})" if w["link"] else w["title"]
        rest = (counts[w["id"]], w["stated"] or "—") if zh else (w["gloss"], w["claims"])
        lines.append(f"| {w['id']} | 《{title}》 | {rest[0]} | {rest[1]} |")
    return "\n".join(lines)


def quotes_table(writeups: Sequence[Mapping[str, Any]]) -> str:
    """The sentences of ``writeups`` that the series answers, as a Markdown table in the reader's language: each one
    verbatim and the notebooks that answer it (in English with a gloss of the sentence; in Chinese ``第 00、06 篇``).

    Introduced in ``00_overview``.
    """
    zh = current_language() == "zh"
    lines = ["| | 原话 | 在哪一篇讲清 |", "|---|---|---|"] if zh else \
        ["| | quoted | in English | answered in |", "|---|---|---|---|"]
    for w in writeups:
        for q in w["quotes"]:
            where = re.search(r"\((notebooks? ([\d, ]+))\)$", q["answer"])
            quote = q["zh"].replace("*", "\\*")  # a literal * in Markdown
            if zh:
                lines.append(f"| {w['id']} | {quote} | 第 {'、'.join(where.group(2).split(', '))} 篇 |")
            else:
                lines.append(f"| {w['id']} | {quote} | {q['en']} | {where.group(1)} |")
    return "\n".join(lines)
