"""Fixed-width text tables, shared by the command line and the notebooks.

Introduced in ``00_overview``.
"""

from __future__ import annotations

from typing import Sequence

from .language import display_width, say


def fmt_int(n: int) -> str:
    """An exact integer with thousands separators: ``109,482,240``.

    Introduced in ``00_overview``.
    """
    return f"{n:,}"


def fmt_share(part: int, whole: int) -> str:
    """``part`` as a percentage of ``whole`` with two decimals (exact rounding from integers).

    Introduced in ``01_embeddings``.
    """
    if whole == 0:
        return "-"
    return f"{100 * part / whole:.2f}%"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[int] = ()) -> str:
    """A fixed-width table; the columns whose indices are in ``right`` are right-aligned.

    Introduced in ``00_overview``. Headers and cells are printed in the reader's language (``use_language("zh")``:
    ``parameters`` -> ``参数量``, from ``data/zh/``; figures stay as they are); a Chinese character takes two columns.
    """
    cells = [[say(str(c)) for c in row] for row in [headers, *rows]]
    widths = [max(display_width(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        pads = [" " * (w - display_width(cell)) for cell, w in zip(row, widths)]
        parts = [pad + cell if i in right else cell + pad for i, (cell, pad) in enumerate(zip(row, pads))]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])
