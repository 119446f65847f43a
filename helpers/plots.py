"""Figures shared by the notebooks: one style, deterministic output (no dates, no random colours).

Introduced in ``00_overview``. Notebook-specific figures are added here as functions, each naming the
notebook that introduces it. Cells that draw end with ``plt.show()`` so nbval sees only the stable
``<Figure size ...>`` text.
"""

from __future__ import annotations

from typing import Mapping

import matplotlib.pyplot as plt

# one colour per component, the same in every notebook
COLOURS: dict[str, str] = {
    "embeddings": "#4C72B0",
    "attention": "#DD8452",
    "feed-forward": "#55A868",
    "layer norm": "#C44E52",
    "pooler": "#8172B3",
    "lm head": "#937860",
    "MLM head": "#DA8BC3",
    "NSP head": "#8C8C8C",
    "classifier": "#CCB974",
}


def apply_style() -> None:
    """The series' matplotlib style: fixed size and dpi, no top/right spines."""
    plt.rcParams.update({
        "figure.figsize": (8.0, 4.5),
        "figure.dpi": 100,
        "savefig.dpi": 100,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "font.size": 11,
    })


def component_bars(groups: Mapping[str, int], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """Horizontal bars of parameters per component, labelled with exact counts and shares.

    Introduced in ``00_overview``.
    """
    ax = ax or plt.subplots()[1]
    whole = sum(groups.values())
    names = list(groups)[::-1]
    values = [groups[n] for n in names]
    ax.barh(names, values, color=[COLOURS.get(n, "#999999") for n in names])
    for y, v in enumerate(values):
        ax.text(v, y, f"  {v:,} ({100 * v / whole:.2f}%)", va="center", fontsize=9)
    ax.set_xlabel("parameters")
    ax.set_xlim(0, max(values) * 1.45)
    ax.set_title(title)
    return ax
