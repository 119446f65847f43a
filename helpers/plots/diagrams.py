"""Diagrams of what is counted, drawn from the engine's own parameter table.

Introduced in ``00_overview``. Two primitives that the notebooks' pictures build on, so that a picture
can never disagree with the count it illustrates:

- :func:`matrix_boxes`: each module's tensors drawn to scale as stored (a weight of shape rows × columns
  is a rectangle of that size, a bias or a norm vector a thin bar beside it), labelled with name, shape
  and count. Area is parameter count.
- :func:`block_stack`: a model or a layer as a column of boxes (one per sublayer), bottom to top with
  arrows, shaded by share, with residual connections and a "× L" bracket where layers repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgb
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ..params import Param, total
from .charts import COLOURS

__all__ = ["Block", "modules", "matrix_boxes", "block_stack", "blocks_from", "shade"]


def modules(params: Iterable[Param]) -> dict[str, list[Param]]:
    """The rows grouped by module (``...query.weight`` and ``...query.bias`` -> ``...query``), in table order.

    No notebook calls it; it works behind the helpers of ``02_multi_head_attention``.
    """
    grouped: dict[str, list[Param]] = {}
    for p in params:
        grouped.setdefault(p.name.rsplit(".", 1)[0], []).append(p)
    return grouped


def shade(colour: str, strength: float) -> tuple[float, float, float]:
    """``colour`` mixed with white: ``strength`` 1 is the colour itself, 0 is white.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    strength = min(max(strength, 0.0), 1.0)
    return tuple(1 - strength * (1 - c) for c in to_rgb(colour))  # type: ignore[return-value]


def _luminance(rgb: tuple[float, float, float]) -> float:
    """Relative luminance (ITU-R BT.709 weights): below about 0.45, white text reads better than black."""
    r, g, b = rgb
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _shape(p: Param) -> str:
    return "×".join(f"{n:,}" for n in p.shape)


def matrix_boxes(params: Sequence[Param], ax: plt.Axes | None = None, title: str | None = None,
                 label: Mapping[str, str] | None = None, per_row: int | None = None,
                 bar: float | None = None) -> plt.Axes:
    """Every module of ``params`` drawn to scale, as stored: a 2-D tensor of shape (rows, cols) is a
    rows × cols rectangle, a 1-D tensor a bar of its length, beside its module's weight.

    ``label`` renames modules for the picture (default: the last part of the module's name); ``per_row``
    wraps the modules into rows; ``bar`` is the drawn width of a vector (default: 3% of the largest side).
    Each module is labelled with its name above and its shapes and exact count below. Colours follow the
    component (``Param.component``). No notebook calls it; it works behind the helpers of ``03_feed_forward``.
    """
    ax = ax or plt.subplots()[1]
    grouped = modules(params)
    names = list(grouped)
    per_row = per_row or len(names)
    biggest = max(max(p.shape) for p in params)
    bar = bar or 0.03 * biggest
    gap = 0.25 * biggest

    def size(p: Param) -> tuple[float, float]:  # drawn (width, height)
        return (p.shape[1], p.shape[0]) if len(p.shape) == 2 else (bar, p.shape[0] if p.shape else 1)

    rows_of_modules = [names[i:i + per_row] for i in range(0, len(names), per_row)]
    top = 0.0  # rows go downwards: each row's base sits below the previous row's labels
    widest = 0.0
    for row in rows_of_modules:
        height = max(size(p)[1] for m in row for p in grouped[m])
        y = top - height
        x = 0.0
        for module in row:
            tensors = grouped[module]
            colour = COLOURS.get(tensors[0].component, "#999999")
            left, tallest = x, 0.0
            for p in tensors:
                w, h = size(p)
                ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="white", linewidth=0.8,
                                       alpha=0.9 if len(p.shape) == 2 else 0.6))
                x += w + 0.15 * bar
                tallest = max(tallest, h)
            centre = (left + x) / 2
            short = (label or {}).get(module, module.rsplit(".", 1)[-1])
            ax.text(centre, y + tallest + 0.04 * biggest, short, ha="center", va="bottom", fontsize=9,
                    fontweight="bold")
            shapes = " + ".join(_shape(p) for p in tensors)
            ax.text(centre, y - 0.04 * biggest, f"{shapes}\n= {total(tensors):,}", ha="center", va="top",
                    fontsize=8)
            x += gap
        widest = max(widest, x - gap)
        top = y - 0.9 * gap - 0.12 * biggest
    ax.set_xlim(-0.05 * biggest, widest + 0.05 * biggest)
    ax.set_ylim(top + 0.5 * gap, 0.22 * biggest)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax


@dataclass(frozen=True)
class Block:
    """One box of a :func:`block_stack`: a label, its exact parameter count, its component (for the colour)
    and an optional second line (a formula, say).
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    label: str
    count: int
    component: str
    detail: str = ""


def blocks_from(params: Sequence[Param], parts: Mapping[str, str], detail: Mapping[str, str] | None = None
                ) -> list[Block]:
    """Blocks for :func:`block_stack` from the table: ``parts`` maps a box label to a name prefix, and the
    box counts every row whose name starts with it (component from its first row).

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    blocks = []
    for label, prefix in parts.items():
        rows = [p for p in params if p.name.startswith(prefix)]
        if not rows:
            raise ValueError(f"no tensor starts with {prefix!r}")
        blocks.append(Block(label, total(rows), rows[0].component, (detail or {}).get(label, "")))
    return blocks


def block_stack(blocks: Sequence[Block], ax: plt.Axes | None = None, title: str | None = None,
                whole: int | None = None, residuals: Sequence[tuple[int, int]] = (),
                repeat: tuple[int, int, str] | None = None, x: float = 0.0, width: float = 3.0) -> plt.Axes:
    """A column of boxes from bottom to top, joined by arrows: the data flow through a model or a layer.

    Each box shows its label, exact count and share of ``whole`` (default: the sum of the boxes), and is
    shaded by that share (the largest box is the component's full colour). ``residuals`` holds pairs
    ``(i, j)``: a skip connection from the input of box ``i`` that is added (⊕) to the output of box ``j``.
    ``repeat = (i, j, text)`` brackets boxes ``i..j`` (e.g. ``"× L = 12"``). ``x`` and ``width`` place the
    column, so two stacks can stand side by side on one axes.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    ax = ax or plt.subplots()[1]
    whole = whole or sum(b.count for b in blocks) or 1
    largest = max(b.count for b in blocks) or 1
    height, step = 0.8, 1.5
    for i, b in enumerate(blocks):
        y = i * step
        share = b.count / whole
        strength = 0.15 + 0.85 * (b.count / largest) ** 0.5 if b.count else 0.0
        face = shade(COLOURS.get(b.component, "#999999"), strength) if b.count else (0.97, 0.97, 0.97)
        ax.add_patch(FancyBboxPatch((x, y), width, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor=face, edgecolor=COLOURS.get(b.component, "#666666"), linewidth=1.2))
        percent = f"{100 * share:.2f}%" if share >= 0.0001 else "< 0.01%"
        count = f"{b.count:,} ({percent})" if b.count else "0 parameters"
        text = f"{b.label}\n{count}" + (f"\n{b.detail}" if b.detail else "")
        ax.text(x + width / 2, y + height / 2, text, ha="center", va="center", fontsize=8.5,
                color="white" if _luminance(face) < 0.45 else "black")
        if i:
            ax.add_patch(FancyArrowPatch((x + width / 2, y - step + height), (x + width / 2, y),
                                         arrowstyle="-|>", mutation_scale=10, color="#555555"))
    for k, (i, j) in enumerate(residuals):
        side = x + width + 0.25 + 0.2 * (k % 2)
        y0, y1 = i * step - 0.25, j * step + height + 0.3
        ax.plot([x + width / 2, side, side, x + width / 2 + 0.12], [y0, y0, y1, y1], color="#555555", linewidth=1)
        ax.text(x + width / 2, y1, "⊕", ha="center", va="center", fontsize=12, color="#555555")
    if repeat:
        i, j, text = repeat
        left = x - 0.25
        y0, y1 = i * step - 0.3, j * step + height + 0.45
        ax.plot([left + 0.12, left, left, left + 0.12], [y0, y0, y1, y1], color="black", linewidth=1.2)
        ax.text(left - 0.08, (y0 + y1) / 2, text, ha="right", va="center", fontsize=10, fontweight="bold")
    # several stacks may share an axes: the limits cover every column drawn so far
    extent = (x - 1.6, x + width + 0.8, -0.6, len(blocks) * step + 0.2)
    seen = getattr(ax, "_stack_extent", None)
    if seen:
        extent = (min(extent[0], seen[0]), max(extent[1], seen[1]), -0.6, max(extent[3], seen[3]))
    ax._stack_extent = extent  # type: ignore[attr-defined]
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.axis("off")
    ax.grid(False)
    if title:
        ax.set_title(title)
    return ax
