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


def estimate_error_plot(sizes: Mapping[str, int], errors: Mapping[str, int], families: Mapping[str, str],
                        title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """An estimate's error in percent of the exact count against the exact count (log x), a labelled point per model.

    Introduced in ``07_decoder_llms``. ``errors`` holds ``exact - estimate`` per model; ``families``
    colours the points (fixed colours in order of first appearance).
    """
    ax = ax or plt.subplots()[1]
    palette = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860")
    colour = {f: palette[i % len(palette)] for i, f in enumerate(dict.fromkeys(families.values()))}
    for family in colour:
        names = [n for n in sizes if families[n] == family]
        ax.scatter([sizes[n] for n in names], [100 * errors[n] / sizes[n] for n in names],
                   color=colour[family], label=family, zorder=3)
    for n in sizes:
        ax.annotate(n, (sizes[n], 100 * errors[n] / sizes[n]), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("exact parameters (log scale)")
    ax.set_ylabel("(exact - estimate) / exact, %")
    ax.legend(frameon=False)
    ax.set_title(title)
    return ax


def error_parts_bars(parts: Mapping[str, Mapping[str, int]], totals: Mapping[str, int], title: str,
                     ax: plt.Axes | None = None) -> plt.Axes:
    """Stacked horizontal bars: each part of ``exact - estimate`` in percent of the exact count, per model.

    Introduced in ``07_decoder_llms``. Negative parts (grouped-query attention) stack to the left of zero.
    """
    ax = ax or plt.subplots()[1]
    palette = ("#4C72B0", "#8172B3", "#C44E52", "#55A868", "#DD8452", "#937860")
    models = list(parts)[::-1]
    names = list(dict.fromkeys(k for m in models for k in parts[m]))
    right = [0.0] * len(models)
    left = [0.0] * len(models)
    for i, name in enumerate(names):
        shares = [100 * parts[m].get(name, 0) / totals[m] for m in models]
        starts = [r if s >= 0 else l for s, r, l in zip(shares, right, left)]
        ax.barh(models, shares, left=starts, color=palette[i % len(palette)], label=name)
        right = [r + max(s, 0.0) for s, r in zip(shares, right)]
        left = [l + min(s, 0.0) for s, l in zip(shares, left)]
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("part of the error, % of the exact count")
    ax.legend(frameon=False, fontsize=9)
    ax.set_title(title)
    return ax


# --- added for 05_pooler_and_heads and 06_full_bert ------------------------------------------------

from typing import Sequence  # noqa: E402


def stacked_bars(columns: Mapping[str, Mapping[str, int]], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """One stacked bar per model, one segment per component, each bar labelled with its exact total.

    Introduced in ``05_pooler_and_heads``.
    """
    ax = ax or plt.subplots()[1]
    groups: list[str] = []
    for parts in columns.values():
        groups += [g for g in parts if g not in groups]
    names = list(columns)
    bottoms = [0] * len(names)
    for g in groups:
        values = [columns[n].get(g, 0) for n in names]
        ax.bar(names, values, bottom=bottoms, color=COLOURS.get(g, "#999999"), label=g, width=0.6)
        bottoms = [b + v for b, v in zip(bottoms, values)]
    for x, whole in enumerate(bottoms):
        ax.text(x, whole, f"{whole:,}", ha="center", va="bottom", fontsize=9)
    ax.set_ylim(0, max(bottoms) * 1.12)
    ax.yaxis.set_major_formatter(lambda v, _: f"{v / 1e6:,.0f}M")
    ax.set_ylabel("parameters")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
    ax.set_title(title)
    return ax


def share_lines(widths: Sequence[int], shares: Mapping[str, Sequence[float]], title: str,
                ax: plt.Axes | None = None) -> plt.Axes:
    """Each component's share of the total (in percent) against the hidden size H, H on a log-2 axis.

    Introduced in ``06_full_bert``.
    """
    ax = ax or plt.subplots()[1]
    for g, values in shares.items():
        ax.plot(widths, [100 * float(v) for v in values], marker="o", color=COLOURS.get(g, "#999999"), label=g)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(widths), [str(w) for w in widths])
    ax.minorticks_off()
    ax.set_xlabel("hidden size H (I = 4H, A = H/64, L = 12, V = 30522)")
    ax.set_ylabel("share of all parameters (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=9)
    ax.set_title(title)
    return ax
