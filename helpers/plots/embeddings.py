"""Pictures introduced in ``01_embeddings``: the embedding tables as the engine lists them, the rows one
sentence reads from them, and which tables a model family keeps."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from ..lessons.embeddings import TABLE_KINDS, embedding_tables
from ..params import EMBEDDINGS, LAYER_NORM, Param, total
from .charts import COLOURS
from .diagrams import shade

__all__: list[str] = ["embedding_lookup", "embedding_tables_grid"]

# one shade of the embeddings' colour per table, the LayerNorm in its own colour
_FACE = {
    "token": shade(COLOURS[EMBEDDINGS], 1.0),
    "position": shade(COLOURS[EMBEDDINGS], 0.55),
    "segment": shade(COLOURS[EMBEDDINGS], 0.3),
    "layer norm": shade(COLOURS[LAYER_NORM], 0.55),
}
_SEGMENT_FACE = (shade(COLOURS[EMBEDDINGS], 0.22), shade(COLOURS[EMBEDDINGS], 0.42))
_LABEL = {"token": "token table", "position": "position table", "segment": "segment table",
          "layer norm": "LayerNorm γ, β"}


def _shape(rows: Sequence[Param]) -> str:
    return " + ".join("×".join(f"{n:,}" for n in p.shape) for p in rows)


def _short(p: Param) -> str:
    """``embeddings.word_embeddings.weight`` -> ``word_embeddings.weight``."""
    parts = p.name.split(".")
    return ".".join(parts[-2:])


def embedding_lookup(params: Sequence[Param], tokens: Sequence[str], ids: Sequence[int],
                     segments: Sequence[int] = (), ax: plt.Axes | None = None,
                     title: str | None = None) -> plt.Axes:
    """How a sentence enters the model: each token reads one row of each table, the rows are summed and
    the sum goes through the LayerNorm (Devlin et al. 2019, Figure 2, with the tables' real sizes).

    ``params`` are the engine's rows (the whole table, or those under ``embeddings.``): the tables are
    found by :func:`helpers.lessons.embeddings.embedding_tables`. ``tokens`` are the WordPiece tokens, ``ids``
    their rows in the token table, ``segments`` their rows in the segment table (0 = sentence A); token
    ``j`` reads row ``j`` of the position table. Each table is labelled with its name, shape and exact
    count; the strip at the top draws the module to scale (width = parameters), with a tick at every row
    the sentence reads. A table the model lacks is left out. Introduced in ``01_embeddings``.
    """
    ax = ax or plt.subplots(figsize=(12, 5.6))[1]
    tables = embedding_tables(params)
    kinds = [k for k in TABLE_KINDS if tables[k]]
    n = len(tokens)
    x0, right = 3.7, 13.0
    pitch = (right - x0) / n
    box = 0.86 * pitch
    xs = [x0 + pitch * j + (pitch - box) / 2 for j in range(n)]

    # the strip: the whole module to scale, one part per table, ticks at the rows read
    whole = sum(total(tables[k]) for k in kinds)
    strip_y, strip_h = 7.05, 0.42
    left = x0
    starts: dict[str, tuple[float, float]] = {}
    for k in kinds:
        width = (right - x0) * total(tables[k]) / whole
        ax.add_patch(Rectangle((left, strip_y), width, strip_h, facecolor=_FACE[k], edgecolor="none"))
        starts[k] = (left, width)
        left += width
    read = {"token": list(ids), "position": list(range(n)), "segment": list(segments)}
    for k in ("token", "position", "segment"):
        if k in starts and read[k]:
            start, width = starts[k]
            rows = tables[k][0].shape[0]
            for r in read[k]:
                x = start + width * (r + 0.5) / rows
                ax.plot([x, x], [strip_y, strip_y + strip_h], color="black", linewidth=0.8)
    token_share = total(tables["token"]) / whole
    ax.text(x0 + (right - x0) * 0.62, strip_y + strip_h / 2,
            f"token table: {100 * token_share:.2f}% of the module", ha="center", va="center",
            fontsize=9, color="white", fontweight="bold")
    small = [k for k in kinds if k != "token"]
    for i, k in enumerate(small):  # the small tables: a label above, a line down to their sliver
        start, width = starts[k]
        label_x = right - (len(small) - 1 - i) * 1.75
        share = 100 * total(tables[k]) / whole
        ax.text(label_x, strip_y + strip_h + 0.42, f"{k} {share:.2f}%", ha="right", va="bottom", fontsize=8.5)
        ax.plot([label_x - 0.05, start + width / 2], [strip_y + strip_h + 0.38, strip_y + strip_h],
                color="#555555", linewidth=0.7)
    ax.text(x0 - 0.2, strip_y + strip_h / 2,
            f"to scale: {whole:,} parameters\nticks = the rows this input reads", ha="right", va="center", fontsize=8.5)

    # the lookup, one column per token (rows as in the paper's Figure 2: tokens, segments, positions)
    ys = {"input": 6.15, "token": 5.05, "segment": 3.85, "position": 2.65, "layer norm": 1.0}
    h = 0.62
    for j, (x, text) in enumerate(zip(xs, tokens)):
        ax.text(x + box / 2, ys["input"], text, ha="center", va="center", fontsize=9.5, fontweight="bold")
        ax.add_patch(FancyArrowPatch((x + box / 2, ys["input"] - 0.22), (x + box / 2, ys["token"] + h + 0.04),
                                     arrowstyle="-|>", mutation_scale=8, color="#555555"))
        cells = {"token": (str(ids[j]), _FACE["token"], "white"), "position": (str(j), _FACE["position"], "black")}
        if segments:
            cells["segment"] = ("AB"[segments[j]] + f" · {segments[j]}", _SEGMENT_FACE[segments[j] % 2], "black")
        previous = None
        for k in ("token", "segment", "position"):
            if k not in kinds or k not in cells:
                continue
            label, face, colour = cells[k]
            y = ys[k]
            ax.add_patch(Rectangle((x, y), box, h, facecolor=face, edgecolor="white"))
            ax.text(x + box / 2, y + h / 2, label, ha="center", va="center", fontsize=8.5, color=colour)
            if previous is not None:
                ax.text(x + box / 2, (previous + y + h) / 2, "+", ha="center", va="center", fontsize=11)
            previous = y
        bottom = previous if previous is not None else ys["token"]
        if "layer norm" in kinds:
            ax.add_patch(FancyArrowPatch((x + box / 2, bottom - 0.05), (x + box / 2, ys["layer norm"] + h + 0.05),
                                         arrowstyle="-|>", mutation_scale=8, color="#555555"))
    if "layer norm" in kinds:
        ax.add_patch(Rectangle((xs[0], ys["layer norm"]), xs[-1] + box - xs[0], h,
                               facecolor=_FACE["layer norm"], edgecolor="white"))
        H = tables["layer norm"][0].shape[0]
        ax.text((xs[0] + xs[-1] + box) / 2, ys["layer norm"] + h / 2,
                f"each token's sum of {H:,} numbers: (x − mean) / std · γ + β   →   encoder layer 1",
                ha="center", va="center", fontsize=9)
        ax.text(0.0, (ys["position"] + ys["layer norm"] + h) / 2, f"sum of the rows: {H:,} numbers per token",
                ha="left", va="center", fontsize=8.5, style="italic", color="#333333")

    # the tables, as the engine lists them: name, shape, exact count
    for k in kinds:
        rows = tables[k]
        name = ", ".join(_short(p) for p in rows) if k != "layer norm" else "LayerNorm.weight, .bias"
        how = {"token": "row = token id", "segment": "row = sentence", "position": "row = place j",
               "layer norm": "shared by all"}[k]
        ax.text(0.0, ys[k] + h / 2, f"{_LABEL[k]}  ({how})\n{name}\n{_shape(rows)} = {total(rows):,}",
                ha="left", va="center", fontsize=8.5, color="black")
    ax.text(0.0, ys["input"], "WordPiece tokens", ha="left", va="center", fontsize=9, fontweight="bold")
    ax.set_xlim(-0.1, right + 0.1)
    ax.set_ylim(0.75, 8.15)
    ax.axis("off")
    ax.grid(False)
    if title:
        ax.set_title(title)
    return ax


def embedding_tables_grid(models: Mapping[str, Sequence[Param]], ax: plt.Axes | None = None,
                          title: str | None = None, absent: Mapping[tuple[str, str], str] | None = None) -> plt.Axes:
    """Which embedding tables each model holds: one row per model, one column per kind (token, position,
    segment, the LayerNorm on their sum), each cell with the tensor's shape and exact count, or greyed out
    where the engine's table has no such tensor.

    ``models`` maps a label to the model's rows (:func:`helpers.params.param_table`); ``absent`` may give a
    short reason for an empty cell, keyed by ``(label, kind)`` (e.g. ``("llama-7b", "position"): "RoPE"``).
    Introduced in ``01_embeddings``.
    """
    ax = ax or plt.subplots(figsize=(11, 0.9 + 0.8 * len(models)))[1]
    names = list(models)
    width, height, gap = 2.2, 0.62, 0.12
    x0 = 2.6
    heads = {"token": "token  V × H", "position": "position  P × H", "segment": "segment  T × H",
             "layer norm": "LayerNorm on the sum  2H"}
    for i, kind in enumerate(TABLE_KINDS):
        ax.text(x0 + i * (width + gap) + width / 2, 0.2, heads[kind], ha="center", va="center",
                fontsize=9.5, fontweight="bold")
    for r, label in enumerate(names):
        y = -(r + 1) * (height + gap)
        tables = embedding_tables(models[label])
        ax.text(x0 - 0.15, y + height / 2, label, ha="right", va="center", fontsize=10)
        for i, kind in enumerate(TABLE_KINDS):
            x = x0 + i * (width + gap)
            rows = tables[kind]
            if rows:
                face, edge, style = _FACE[kind], "white", "solid"
                text = f"{_shape(rows)}\n= {total(rows):,}"
                colour = "white" if kind == "token" else "black"
            else:
                face, edge, style = (0.96, 0.96, 0.96), "#aaaaaa", "dashed"
                text = "none" + (f": {absent[(label, kind)]}" if absent and (label, kind) in absent else "")
                colour = "#666666"
            ax.add_patch(Rectangle((x, y), width, height, facecolor=face, edgecolor=edge, linestyle=style))
            ax.text(x + width / 2, y + height / 2, text, ha="center", va="center", fontsize=8.5, color=colour)
    ax.set_xlim(-0.1, x0 + 4 * (width + gap))
    ax.set_ylim(-(len(names) + 0.15) * (height + gap), 0.45)
    ax.axis("off")
    ax.grid(False)
    if title:
        ax.set_title(title)
    return ax
