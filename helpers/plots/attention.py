"""Pictures introduced in ``02_multi_head_attention``: one attention block as a data flow drawn from the
engine's table, the split into heads at every head count, and the same input projected three ways."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ..params import Param, total
from .charts import COLOURS
from .diagrams import modules, shade

__all__: list[str] = ["attention_flow", "head_split_bars", "qkv_heatmaps"]

_LIGHT, _DARK = "#F6D5BC", "#A0522D"  # the head bands of ``head_blocks``: light / dark (head 0)


def _box(ax: plt.Axes, x: float, y: float, w: float, h: float, text: str, face, edge: str,
         fontsize: float = 9, colour: str = "black") -> None:
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=face, edgecolor=edge, linewidth=1.2))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, color=colour)


def _arrow(ax: plt.Axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color="#555555",
                                 linewidth=1.0, shrinkA=0, shrinkB=0))


def _strip(ax: plt.Axes, x: float, y: float, cells: int, cell: float, h: float) -> None:
    for i in range(cells):
        fill = _DARK if i == 0 else (COLOURS["attention"] if i % 2 else _LIGHT)
        ax.add_patch(Rectangle((x + i * cell, y), cell, h, facecolor=fill, edgecolor="white", linewidth=0.5))


def attention_flow(params: Sequence[Param], d_k: int, ax: plt.Axes | None = None, title: str | None = None,
                   symbols: Sequence[str] = ("W_Q", "W_K", "W_V", "W_O")) -> plt.Axes:
    """One attention block as a data flow, X → W_Q, W_K, W_V → heads → scaled dot-product → concat → W_O,
    every projection labelled from the engine's rows (name, shapes, exact count) and shaded by its share.

    ``params`` are one layer's attention rows (``select(param_table(c), component=ATTENTION, layer=0)``), in
    checkpoint order, one module per symbol: each but the last projects the input, the last is the output
    projection, every weight stored out × in as ``nn.Linear`` does (BERT, LLaMA; GPT-2's fused ``Conv1D``
    ``c_attn`` is refused).
    A projection of ``n·d_k`` output rows gives ``n`` heads (grouped-query keys and values give fewer), and
    the output projection reads ``A·d_k`` columns. The boxes without parameters (the split into heads,
    the attention itself, the concatenation) say so. Introduced in ``02_multi_head_attention``.
    """
    ax = ax or plt.subplots(figsize=(12, 5))[1]
    grouped = modules(params)
    names = list(grouped)
    if len(names) != len(symbols):
        raise ValueError(f"attention_flow draws separate projections stored out × in ({', '.join(symbols)}: BERT, "
                         f"LLaMA); got {len(names)} modules: {', '.join(names)}")
    inputs, output = names[:-1], names[-1]
    whole = total(params)
    largest = max(total(rows) for rows in grouped.values())
    colour = COLOURS["attention"]

    def label(i: int, module: str) -> str:
        rows = grouped[module]
        symbol = symbols[i]
        shapes = " + ".join("×".join(f"{n:,}" for n in p.shape) for p in rows)
        return f"{symbol}  ({module.rsplit('.', 1)[-1]})\n{shapes}\n{total(rows):,}"

    def face(module: str) -> tuple[float, float, float]:
        return shade(colour, 0.2 + 0.5 * total(grouped[module]) / largest)

    heads_in = [grouped[m][0].shape[0] // d_k for m in inputs]
    A = grouped[output][0].shape[1] // d_k
    most = max(heads_in + [A])
    step, bh = 1.7, 1.15  # vertical step between projections, box height
    ys = [(len(inputs) - 1) / 2 * step - i * step for i in range(len(inputs))]
    # the input
    _box(ax, 0.0, -0.6, 1.3, 1.2, "X\nS × H\ninput", (0.95, 0.95, 0.95), "#666666")
    # the input projections and their heads
    strip_x, strip_w, sh = 5.2, 2.4, 0.55
    for i, (module, y) in enumerate(zip(inputs, ys)):
        _arrow(ax, (1.3, 0.0), (2.0, y))
        _box(ax, 2.0, y - bh / 2, 2.5, bh, label(i, module), face(module), colour, fontsize=8.5)
        _arrow(ax, (4.5, y), (strip_x, y))
        _strip(ax, strip_x, y - sh / 2, heads_in[i], strip_w / most, sh)
        ax.text(strip_x, y + sh / 2 + 0.08, f"{heads_in[i]} head{'s' if heads_in[i] > 1 else ''} × d_k = {d_k}",
                ha="left", va="bottom", fontsize=8)
        _arrow(ax, (strip_x + strip_w * heads_in[i] / most + 0.05, y), (8.3, y if abs(y) < 1.2 else 0.6 * y))
    # the attention itself: no parameters
    top = max(ys) + bh / 2
    _box(ax, 8.3, -top, 2.9, 2 * top, "attention\nin every head:\nsoftmax(QKᵀ/√d_k)V\n\n0 parameters",
         (0.97, 0.97, 0.97), "#888888", fontsize=8.5)
    # concatenation, output projection, output
    _arrow(ax, (11.2, 0.0), (11.7, 0.0))
    _strip(ax, 11.7, -sh / 2, A, strip_w / most, sh)
    ax.text(11.7, sh / 2 + 0.08, f"concat: {A} × {d_k}", ha="left", va="bottom", fontsize=8)
    _arrow(ax, (11.7 + strip_w * A / most + 0.05, 0.0), (14.6, 0.0))
    _box(ax, 14.6, -bh / 2, 2.5, bh, label(len(names) - 1, output), face(output), colour, fontsize=8.5)
    _arrow(ax, (17.1, 0.0), (17.6, 0.0))
    _box(ax, 17.6, -0.6, 1.3, 1.2, "out\nS × H", (0.95, 0.95, 0.95), "#666666")
    ax.text(5.2 + strip_w / 2, -top - 0.25, "split into heads: a reshape,\n0 parameters", ha="center", va="top",
            fontsize=8, color="#555555")
    ax.text(9.45, -top - 0.25, f"parameters: {' + '.join(symbols)} = {whole:,}",
            ha="left", va="top", fontsize=10, fontweight="bold")
    ax.set_xlim(-0.2, 19.1)
    ax.set_ylim(-top - 1.1, top + 0.5)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax


def head_split_bars(splits: Sequence[tuple[int, int, int, int]], ax: plt.Axes | None = None,
                    title: str | None = None) -> plt.Axes:
    """One bar per head count: the layer's attention parameters cut into its A heads' slices (head 0 dark),
    the output bias, which belongs to no head, on top, labelled with its count on the last bar (it is too thin
    to see). Every bar has the same height.

    ``splits`` holds ``(A, d_k, one head, per layer)`` per head count, as the engine counts them
    (``total(head_slices(with_heads(c, A), 0))`` and the layer's attention rows).
    Introduced in ``02_multi_head_attention``.
    """
    ax = ax or plt.subplots()[1]
    for x, (A, _d_k, one, layer) in enumerate(splits):
        for h in range(A):
            fill = _DARK if h == 0 else (COLOURS["attention"] if h % 2 else _LIGHT)
            ax.add_patch(Rectangle((x - 0.35, h * one), 0.7, one, facecolor=fill, edgecolor="white",
                                   linewidth=0.4 if A > 16 else 0.8))
        ax.add_patch(Rectangle((x - 0.35, A * one), 0.7, layer - A * one, facecolor="#555555"))
        ax.text(x, layer * 1.02, f"{one:,}", ha="center", va="bottom", fontsize=7.5, rotation=90)
    layers = {layer for *_, layer in splits}
    for layer in layers:
        ax.axhline(layer, color="#555555", linestyle="--", linewidth=0.8)
    # b_O is H parameters on top of millions: too thin to see, so it is labelled, with its count
    A, _d_k, one, layer = splits[-1]
    x = len(splits) - 1
    ax.annotate(f"b_O: {layer - A * one:,}\n(in no head)", xy=(x + 0.35, layer - (layer - A * one) / 2),
                xytext=(x + 0.75, layer * 0.8), ha="left", va="center", fontsize=8.5,
                arrowprops={"arrowstyle": "->", "color": "#555555", "linewidth": 0.8})
    ax.set_xticks(range(len(splits)), [f"{A}\n{d_k}" for A, d_k, *_ in splits])
    ax.set_xlim(-0.7, len(splits) + 1.1)
    ax.set_ylim(0, max(layers) * 1.32)
    ax.set_xlabel("heads A   /   head width d_k")
    ax.set_ylabel("parameters per layer")
    ax.yaxis.set_major_formatter(lambda v, _: f"{v / 1e6:,.1f}M")
    ax.grid(False, axis="x")
    ax.text(len(splits) + 1.1, max(layers) * 1.3, "above each bar: one head's parameters\n"
            f"dashed: the layer's {', '.join(f'{n:,}' for n in sorted(layers))}; b_O (dark grey) on top",
            ha="right", va="top", fontsize=8, color="#555555")
    if title:
        ax.set_title(title)
    return ax


def qkv_heatmaps(x, q, k, v, axes: Sequence[plt.Axes] | None = None) -> Sequence[plt.Axes]:
    """The same input X and the three projections of it, Q, K and V, as heatmaps on one colour scale
    (rows: tokens, columns: features), each value printed in its cell.

    ``x``, ``q``, ``k``, ``v`` are 2-D arrays or torch tensors (S × H; a tensor is detached first).
    Introduced in ``02_multi_head_attention``.
    """
    mats = [np.asarray(m.detach() if hasattr(m, "detach") else m, dtype=float) for m in (x, q, k, v)]
    if axes is None:
        axes = plt.subplots(1, 4, figsize=(12, 2.6))[1]
    bound = max(float(np.abs(m).max()) for m in mats)
    titles = ("X (the one input)", "Q = X W_Q + b_Q", "K = X W_K + b_K", "V = X W_V + b_V")
    for ax, m, name in zip(axes, mats, titles):
        ax.imshow(m, cmap="RdBu_r", vmin=-bound, vmax=bound)
        for (r, c), value in np.ndenumerate(m):
            ax.text(c, r, f"{round(value, 1) + 0.0:.1f}", ha="center", va="center", fontsize=7,
                    color="white" if abs(value) > 0.6 * bound else "black")
        ax.set_title(name, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks(range(m.shape[0]), [f"token {r}" for r in range(m.shape[0])] if ax is axes[0] else [])
        ax.tick_params(length=0)
        ax.grid(False)
        for side in ax.spines.values():
            side.set_visible(False)
    return axes
