"""Pictures introduced in ``06_full_bert``: a treemap of where a model's parameters sit, from the engine's table.

A treemap cuts one rectangle into pieces whose areas are proportional to the counts: first one piece per
component, then each component into its kinds of tensor (the word table, ``W_Q`` summed over the layers, the
biases ...). :func:`squarify` lays out one level (Bruls, Huizing & van Wijk 2000, "Squarified Treemaps"): the
pieces are placed largest first, in rows along the shorter side, each row as long as it keeps its pieces near
square.
"""

from __future__ import annotations

import re
from typing import Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from ..params import Param, is_norm, linear_biases, total
from .charts import COLOURS
from .diagrams import shade

__all__: list[str] = ["squarify", "treemap_parts", "parameter_treemap"]

Rect = tuple[float, float, float, float]  # x, y, width, height

# BERT's tensors by the name the checkpoint gives them (layer index removed), and what the notebooks call them
_KINDS = {
    "embeddings.word_embeddings.weight": "word table",
    "embeddings.position_embeddings.weight": "position table",
    "embeddings.token_type_embeddings.weight": "segment table",
    "attention.self.query.weight": "W_Q",
    "attention.self.key.weight": "W_K",
    "attention.self.value.weight": "W_V",
    "attention.output.dense.weight": "W_O",
    "intermediate.dense.weight": "W₁",
    "output.dense.weight": "W₂",
    "pooler.dense.weight": "W_p",
}


def squarify(values: Sequence[float], x: float, y: float, width: float, height: float) -> list[Rect]:
    """Rectangles tiling ``(x, y, width, height)`` with areas proportional to ``values``, in the order given.

    The squarified layout of Bruls et al. (2000): largest value first, each row laid along the shorter side
    of what is left, and a value joins the current row only while that makes the row's worst aspect ratio
    no worse. Zero values get a rectangle of zero area. Introduced in ``06_full_bert``.
    """
    if any(v < 0 for v in values):
        raise ValueError("a treemap needs values >= 0")
    whole = sum(values)
    rects: list[Rect] = [(x, y, 0.0, 0.0)] * len(values)
    if not whole:
        return rects
    order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: -values[i])
    areas = [values[i] * width * height / whole for i in order]

    def worst(row: list[float], side: float) -> float:
        s = sum(row)
        return max(max(side * side * a / (s * s), s * s / (side * side * a)) for a in row)

    i = 0
    while i < len(areas):
        side = min(width, height)
        j = i + 1
        while j < len(areas) and worst(areas[i:j + 1], side) <= worst(areas[i:j], side):
            j += 1
        row, s = areas[i:j], sum(areas[i:j])
        if width >= height:   # a column on the left, its pieces stacked upwards
            w, cursor = s / height, y
            for k, a in enumerate(row):
                rects[order[i + k]] = (x, cursor, w, a / w)
                cursor += a / w
            x, width = x + w, width - w
        else:                 # a row at the bottom, its pieces side by side
            h, cursor = s / width, x
            for k, a in enumerate(row):
                rects[order[i + k]] = (cursor, y, a / h, h)
                cursor += a / h
            y, height = y + h, height - h
        i = j
    return rects


def _tensor_kind(param: Param) -> str:
    """What kind of tensor a row is, the same for every layer: ``"W_Q"``, ``"word table"``, ``"biases"``,
    ``"γ"``, ``"β"`` ... (names not known to BERT fall back to the name without its layer index)."""
    if is_norm(param):
        return "γ" if param.name.endswith("weight") else "β"
    if linear_biases([param]):
        return "biases"
    key = re.sub(r"^.*?\.\d+\.", "", param.name)   # encoder.layer.0.attention... -> attention...
    return _KINDS.get(key, key)


def treemap_parts(params: Sequence[Param]) -> dict[str, dict[str, list[Param]]]:
    """The table's rows by component, then by kind of tensor (``"word table"``, ``"W_Q"`` summed over the
    layers, ``"biases"``, ``"γ"``, ``"β"`` ...), in the order they first appear.

    Introduced in ``06_full_bert``.
    """
    parts: dict[str, dict[str, list[Param]]] = {}
    for p in params:
        parts.setdefault(p.component, {}).setdefault(_tensor_kind(p), []).append(p)
    return parts


def _shape(rows: Sequence[Param]) -> str:
    shapes = {p.shape for p in rows}
    if len(shapes) != 1:
        return f"{len(rows)} vectors"
    shape = "×".join(f"{n:,}" for n in rows[0].shape)
    return f"{len(rows)} × {shape}" if len(rows) > 1 else shape


def parameter_treemap(params: Sequence[Param], ax: plt.Axes | None = None, title: str | None = None,
                      min_label: float = 0.004) -> plt.Axes:
    """A treemap of the table: one rectangle per component, cut into one per kind of tensor, areas ∝ counts.

    Each kind is labelled with its name, its tensors' shapes (``12 × 768×768``: one per layer) and its exact
    count and share; pieces under ``min_label`` of the whole (too thin to read) are listed beside the map
    instead, with their counts. Colours follow the component. Introduced in ``06_full_bert``.
    """
    ax = ax or plt.subplots(figsize=(12, 5.8))[1]
    parts = treemap_parts(params)
    whole = total(params)
    W, Hgt = 100.0, 66.0
    groups = list(parts)
    outer = squarify([total(r for rows in parts[g].values() for r in rows) for g in groups], 0, 0, W, Hgt)
    small: dict[str, list[str]] = {}
    headline: dict[str, str] = {}
    for g, (gx, gy, gw, gh) in zip(groups, outer):
        kinds = list(parts[g])
        counts = [total(parts[g][k]) for k in kinds]
        colour = COLOURS.get(g, "#999999")
        inner = squarify(counts, gx, gy, gw, gh)
        for k, (kind, n, (x, y, w, h)) in enumerate(zip(kinds, counts, inner)):
            ax.add_patch(Rectangle((x, y), w, h, facecolor=shade(colour, 0.9 - 0.22 * (k % 3)),
                                   edgecolor="white", linewidth=1.0))
            share = 100 * n / whole
            if n / whole >= min_label and w > 4 and h > 3:
                big = w > 11 and h > 7
                text = f"{kind}\n{_shape(parts[g][kind])}\n{n:,} ({share:.2f}%)" if big else f"{kind}\n{n:,}"
                # the piece in the component's top-left corner leaves room for the component's own label
                under_label = abs(x - gx) < 1e-9 and abs(y + h - gy - gh) < 1e-9 and gw > 14 and gh > 8
                top = y + h - (5.5 if under_label else 0.0)
                ax.text(x + w / 2, (y + top) / 2, text, ha="center", va="center", fontsize=9 if big else 7.5)
            else:
                small.setdefault(g, []).append(f"  {kind} {n:,} ({share:.3f}%)")
        ax.add_patch(Rectangle((gx, gy), gw, gh, facecolor="none", edgecolor="white", linewidth=3.0))
        line = f"{g}: {sum(counts):,} ({100 * sum(counts) / whole:.2f}%)"
        if gw > 14 and gh > 8:
            ax.text(gx + 0.8, gy + gh - 0.8, line.replace(": ", "\n", 1), ha="left", va="top", fontsize=10,
                    fontweight="bold", color="#1A1A1A")
        else:
            headline[g] = line
    if small:
        lines = ["too thin to label:"]
        for g, items in small.items():
            lines += ["", headline.get(g, f"{g}:"), *items]
        ax.text(W + 1.5, Hgt, "\n".join(lines), ha="left", va="top", fontsize=8.5, family="monospace")
    ax.set_xlim(0, W + (40 if small else 0))
    ax.set_ylim(0, Hgt)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.grid(False)
    ax.set_title(title or f"{whole:,} parameters: area is count")
    return ax
