"""The series' style and colours, and its charts of counts, shares and errors.

Introduced in ``00_overview``. Each function names the notebook that introduces it.
"""

from __future__ import annotations

from typing import Mapping, Sequence, SupportsFloat

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ..params import Param

__all__ = ["COLOURS", "apply_style", "component_bars", "estimate_error_plot", "error_parts_bars", "stacked_bars", "share_lines", "vocab_share_plot", "head_blocks", "layer_stack", "seq_len_share_lines", "memory_bars"]

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
    """The series' matplotlib style: fixed size and dpi, no top/right spines.

    Introduced in ``00_overview``.
    """
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


def share_lines(widths: Sequence[int], shares: Mapping[str, Sequence[SupportsFloat]], title: str,
                ax: plt.Axes | None = None, xlabel: str = "hidden size H") -> plt.Axes:
    """Each component's share of the total (in percent) against the hidden size H, H on a log-2 axis.

    Introduced in ``06_full_bert``.
    """
    ax = ax or plt.subplots()[1]
    for g, values in shares.items():
        ax.plot(widths, [100 * float(v) for v in values], marker="o", color=COLOURS.get(g, "#999999"), label=g)
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(widths), [str(w) for w in widths])
    ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of all parameters (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=9)
    ax.set_title(title)
    return ax


# --- added for 01_embeddings, 02_multi_head_attention and 03_feed_forward --------------------------

def vocab_share_plot(curves: Mapping[str, tuple[Sequence[int], Sequence[float]]],
                     points: Mapping[str, tuple[int, float, str]], title: str,
                     ax: plt.Axes | None = None) -> plt.Axes:
    """The embedding tables' share of the total (in percent) against the vocabulary size V.

    ``curves`` maps a label to ``(V values, shares)`` for one shape (H, L, I ... fixed); ``points``
    maps a model name to ``(V, share, colour)``, drawn as labelled dots (each label goes to the first
    side where it overlaps no earlier label). Introduced in ``01_embeddings``.
    """
    ax = ax or plt.subplots()[1]
    for (label, (xs, ys)), style in zip(curves.items(), ("-", "--", ":", "-.")):
        ax.plot(list(xs), [100 * y for y in ys], style, color="#4C72B0", label=label, linewidth=1.5)
    xs_all = [x for xs, _ in curves.values() for x in xs] + [x for x, _, _ in points.values()]
    ax.set_xlim(0, 1.08 * max(xs_all))
    ax.set_ylim(0, 65)
    renderer = ax.figure.canvas.get_renderer()
    placed = []
    sides = ((6, -3, "left", "top"), (-6, 3, "right", "bottom"), (6, 3, "left", "bottom"), (-6, -3, "right", "top"))
    for name, (x, y, colour) in sorted(points.items(), key=lambda item: item[1][0]):
        ax.scatter([x], [100 * y], color=colour, zorder=3)
        for dx, dy, ha, va in sides:
            text = ax.annotate(f"{name} {100 * y:.1f}%", (x, 100 * y), textcoords="offset points",
                               xytext=(dx, dy), ha=ha, va=va, fontsize=8)
            box = text.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            if (dx, dy) != sides[-1][:2]:
                text.remove()
        placed.append(box)
    ax.set_xlabel("vocabulary size V")
    ax.set_ylabel("embeddings, % of all parameters")
    ax.xaxis.set_major_formatter(lambda v, _: f"{v / 1000:,.0f}k")
    ax.legend(loc="lower right", fontsize=9)
    ax.set_title(title)
    return ax


def head_blocks(H: int, A: int, ax: plt.Axes | None = None) -> plt.Axes:
    """The four H×H attention matrices as stored (out × in), each cut into A bands of d_k = H / A.

    W_Q, W_K and W_V give each head d_k rows; W_O gives each head d_k columns. Head 0 is drawn dark.
    Introduced in ``02_multi_head_attention``.
    """
    ax = ax or plt.subplots()[1]
    d_k = H // A
    colour, light, dark = COLOURS["attention"], "#F6D5BC", "#A0522D"
    names = ("query.weight  (W_Q)", "key.weight  (W_K)", "value.weight  (W_V)", "output.dense.weight  (W_O)")
    gap = 0.25 * H
    for m, name in enumerate(names):
        x0 = m * (H + gap)
        for h in range(A):
            fill = dark if h == 0 else (colour if h % 2 else light)
            if m < 3:  # rows h·d_k .. (h+1)·d_k, drawn from the top
                patch = Rectangle((x0, H - (h + 1) * d_k), H, d_k, facecolor=fill, edgecolor="white", linewidth=0.5)
            else:  # columns h·d_k .. (h+1)·d_k
                patch = Rectangle((x0 + h * d_k, 0), d_k, H, facecolor=fill, edgecolor="white", linewidth=0.5)
            ax.add_patch(patch)
        ax.text(x0 + H / 2, H * 1.04, name, ha="center", va="bottom", fontsize=9)
        piece = f"{d_k}×{H}" if m < 3 else f"{H}×{d_k}"
        ax.text(x0 + H / 2, -0.05 * H, f"{A} heads × ({piece})\n= {H}² = {H * H:,}", ha="center", va="top", fontsize=9)
    ax.set_xlim(-0.05 * H, 4 * H + 3 * gap + 0.05 * H)
    ax.set_ylim(-0.3 * H, 1.2 * H)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"H = {H}, A = {A} heads of d_k = {d_k} (head 0 dark): the split changes no count")
    return ax


def layer_stack(layers: Mapping[str, Sequence[Param]], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """One horizontal bar per layer, 100% wide, one segment per module (weight and bias together).

    ``layers`` maps a label to that layer's parameter rows (``helpers.Param``: name, component, count),
    segments coloured by component and labelled with their share. Introduced in ``03_feed_forward``.
    """
    ax = ax or plt.subplots()[1]
    labels = list(layers)[::-1]
    seen: set[str] = set()
    for y, label in enumerate(labels):
        modules: dict[str, tuple[str, int]] = {}
        for p in layers[label]:
            module = p.name.rsplit(".", 1)[0]
            component, n = modules.get(module, (p.component, 0))
            modules[module] = (component, n + p.count)
        whole = sum(n for _, n in modules.values())
        left = 0.0
        for module, (component, n) in modules.items():
            share = 100 * n / whole
            ax.barh(y, share, left=left, color=COLOURS.get(component, "#999999"), edgecolor="white",
                    label=None if component in seen else component)
            seen.add(component)
            if share >= 5:
                short = module.replace("attention.self.", "").replace("attention.output.dense", "attn out")
                ax.text(left + share / 2, y, f"{short}\n{share:.1f}%", ha="center", va="center", fontsize=8)
            left += share
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of one encoder layer's parameters (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, fontsize=9, frameon=False)
    ax.grid(False)
    ax.set_title(title)
    return ax


# --- added for 08_flops_and_memory -----------------------------------------------------------------

def seq_len_share_lines(lengths: Sequence[int], shares: Mapping[str, Mapping[str, Sequence[float]]],
                        contexts: Mapping[str, int], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """Shares of the forward FLOPs (percent) against the sequence length S on a log-2 axis.

    ``shares`` maps a model to ``{part: share per length}`` (one colour per model, one line style per
    part); ``contexts`` marks each model's trained context length with a dotted line.
    Introduced in ``08_flops_and_memory``.
    """
    ax = ax or plt.subplots()[1]
    palette = ("#4C72B0", "#DD8452", "#55A868", "#C44E52")
    for i, (model, parts) in enumerate(shares.items()):
        colour = palette[i % len(palette)]
        for (part, values), style in zip(parts.items(), ("-", "--", ":")):
            ax.plot(list(lengths), [100 * float(v) for v in values], style, marker="o", markersize=3,
                    color=colour, label=f"{model}: {part}")
        if model in contexts:
            ax.axvline(contexts[model], color=colour, linestyle=":", linewidth=1)
            ax.text(contexts[model], 101, f" S = {contexts[model]:,}", color=colour, fontsize=8, va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(lengths), [f"{s // 1024}k" if s >= 1024 else str(s) for s in lengths])
    ax.minorticks_off()
    ax.set_xlabel("sequence length S (B = 1)")
    ax.set_ylabel("share of forward FLOPs (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(title, pad=14)
    return ax


def memory_bars(bars: Mapping[str, Mapping[str, int]], title: str, ax: plt.Axes | None = None,
                legend: bool = True) -> plt.Axes:
    """Stacked bars of bytes (drawn in GiB), one bar per setting, one segment per part, totals on top.

    A part whose name contains "estimate" is hatched. Colours follow the parts' first appearance in a
    fixed palette. Introduced in ``08_flops_and_memory``.
    """
    ax = ax or plt.subplots()[1]
    palette = ("#4C72B0", "#8172B3", "#DD8452", "#55A868", "#8C8C8C", "#C44E52", "#CCB974", "#64B5CD")
    parts: list[str] = []
    for segments in bars.values():
        parts += [p for p in segments if p not in parts]
    names = list(bars)
    bottoms = [0.0] * len(names)
    for i, part in enumerate(parts):
        values = [bars[n].get(part, 0) / 2**30 for n in names]
        ax.bar(names, values, bottom=bottoms, color=palette[i % len(palette)], width=0.6, label=part,
               hatch="//" if "estimate" in part else None, edgecolor="white")
        bottoms = [b + v for b, v in zip(bottoms, values)]
    for x, whole in enumerate(bottoms):
        ax.text(x, whole, f"{whole:,.2f} GiB", ha="center", va="bottom", fontsize=9)
    ax.set_ylim(0, max(bottoms) * 1.15)
    ax.set_ylabel("GiB (2³⁰ bytes)")
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.set_title(title)
    return ax
