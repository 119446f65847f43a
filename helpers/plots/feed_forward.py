"""Pictures introduced in ``03_feed_forward``."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import Polygon, Rectangle

from ..params import Param, total
from .charts import COLOURS
from .diagrams import matrix_boxes, modules, shade

__all__: list[str] = ["ffn_diagram"]


def _linear(rows: Sequence[Param]) -> tuple[int, int, bool]:
    """``(in, out, stored out × in)`` of one linear module: its bias has the output's length; without a
    bias the weight is taken as ``nn.Linear`` stores it (out × in)."""
    weight = next(p for p in rows if len(p.shape) == 2)
    bias = next((p for p in rows if len(p.shape) == 1), None)
    rows_, cols = weight.shape
    if bias is not None and bias.shape[0] == cols and rows_ != cols:
        return rows_, cols, False  # Conv1D (GPT-2): in × out
    return cols, rows_, True


def _flow(params: Sequence[Param], ax: plt.Axes, title: str | None = None,
          symbols: tuple[str, str] = ("H", "I")) -> plt.Axes:
    """The feed-forward block as a flow H → I → H (see :func:`ffn_diagram`)."""
    linears = list(modules(params).values())
    if len(linears) != 2:
        raise ValueError(f"ffn_diagram draws two linear modules, got {len(linears)}")
    (h_in, inner, out_x_in), (inner_in, h_out, _) = (_linear(rows) for rows in linears)
    if inner_in != inner or h_in != h_out:
        raise ValueError("the two linear modules do not chain H -> I -> H")
    H, I = h_in, inner
    colour = COLOURS["feed-forward"]
    bar, step = 0.07 * I, 0.75 * I
    widths = (H, I, H)
    names = (f"x  ({symbols[0]} = {H:,})", f"GELU(x W₁ + b₁)  ({symbols[1]} = {I:,})", f"y  ({symbols[0]} = {H:,})")
    xs = [k * step for k in range(3)]
    for x, w, name in zip(xs, widths, names):
        ax.add_patch(Rectangle((x - bar / 2, -w / 2), bar, w, facecolor=colour, edgecolor="white"))
        ax.text(x, -I / 2 - 0.05 * I, name, ha="center", va="top", fontsize=9)
    for k, rows in enumerate(linears):
        weight = next(p for p in rows if len(p.shape) == 2)
        left, right = xs[k] + bar / 2, xs[k + 1] - bar / 2
        a, b = widths[k] / 2, widths[k + 1] / 2
        ax.add_patch(Polygon([(left, -a), (right, -b), (right, b), (left, a)], closed=True,
                             facecolor=shade(colour, 0.3), edgecolor=shade(colour, 0.6)))
        sym = f"W{'₁₂'[k]}"
        pair = (symbols[0], symbols[1]) if k == 0 else (symbols[1], symbols[0])
        paper = f"({pair[0]} × {pair[1]}): {widths[k]:,} × {widths[k + 1]:,}"
        stored = "×".join(f"{n:,}" for n in weight.shape)
        order = "out × in" if out_x_in else "in × out"
        text = (f"{sym} {paper}\nstored [{stored}] ({order})\n"
                f"weight + bias = {total(rows):,}")
        ax.text((left + right) / 2, 0, text, ha="center", va="center", fontsize=8.5)
    ax.set_xlim(-0.3 * step, 2 * step + 0.3 * step)
    ax.set_ylim(-0.72 * I, 0.58 * I)
    ax.axis("off")
    ax.grid(False)
    ax.set_title(title or f"{symbols[0]} → {symbols[1]} → {symbols[0]}: {H:,} → {I:,} → {H:,}, "
                 f"{total(params):,} parameters, the same at every position", fontsize=10)
    return ax


def ffn_diagram(params: Sequence[Param], title: str | None = None, figsize: tuple[float, float] = (12, 4.2)
                ) -> plt.Figure:
    """One layer's feed-forward block drawn from its rows of the parameter table, in two panels.

    Left, the flow H → I → H: each vector a bar whose height is its width (to scale), and between them a band
    for each weight matrix, labelled with the maths' shape (in × out), the shape the table stores and the exact
    count of weight and bias. Right, the same tensors as stored (:func:`matrix_boxes`: area = parameters), each
    weight marked as the maths' matrix or its transpose. ``params`` are the rows of two linear modules, weight
    and bias each, as BERT (``nn.Linear``, out × in) and GPT-2 (``Conv1D``, in × out) store them.
    Introduced in ``03_feed_forward``.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=figsize, width_ratios=(1.25, 1))
    _flow(params, left, title)
    label = {}
    for k, (module, rows) in enumerate(modules(params).items()):
        transposed = _linear(rows)[2]
        label[module] = f"{module} (W{'₁₂'[k]}{'ᵀ' if transposed else ''})"
    matrix_boxes(params, ax=right, title="As stored (area = parameters)", label=label)
    fig.tight_layout()
    return fig
