"""Pictures introduced in ``04_layer_norm``."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from ..params import Param, is_norm, total
from .diagrams import Block, block_stack

__all__: list[str] = ["norm_blocks", "norm_positions"]

# Each layout: (box label, pattern of the rows it counts), bottom to top; the residual pairs and the
# repeated span as block_stack takes them; and how the layout is named. A layer's pattern matches
# every layer (the box counts all L of them); the checkpoint names decide which layout a table has.
_LAYOUTS = {
    "bert": (
        [("embeddings (word + position + segment)", r"embeddings\.(?!LayerNorm)"),
         ("LayerNorm", r"embeddings\.LayerNorm\."),
         ("attention", r"encoder\.layer\.\d+\.attention\.(self|output\.dense)\."),
         ("LayerNorm (attention.output)", r"encoder\.layer\.\d+\.attention\.output\.LayerNorm\."),
         ("feed-forward", r"encoder\.layer\.\d+\.(intermediate|output)\.dense\."),
         ("LayerNorm (output)", r"encoder\.layer\.\d+\.output\.LayerNorm\."),
         ("pooler", r"pooler\.")],
        [(2, 2), (4, 4)], (2, 5), "post-LN"),
    "gpt2": (
        [("embeddings (wte + wpe)", r"transformer\.w[tp]e\."),
         ("LayerNorm (ln_1)", r"transformer\.h\.\d+\.ln_1\."),
         ("attention", r"transformer\.h\.\d+\.attn\."),
         ("LayerNorm (ln_2)", r"transformer\.h\.\d+\.ln_2\."),
         ("feed-forward", r"transformer\.h\.\d+\.mlp\."),
         ("LayerNorm (ln_f)", r"transformer\.ln_f\."),
         ("lm head (untied)", r"lm_head\.")],
        [(1, 2), (3, 4)], (1, 4), "pre-LN"),
    "llama": (
        [("embeddings (embed_tokens)", r"model\.embed_tokens\."),
         ("RMSNorm (input_layernorm)", r"model\.layers\.\d+\.input_layernorm\."),
         ("attention", r"model\.layers\.\d+\.self_attn\."),
         ("RMSNorm (post_attention_layernorm)", r"model\.layers\.\d+\.post_attention_layernorm\."),
         ("feed-forward", r"model\.layers\.\d+\.mlp\."),
         ("RMSNorm (norm)", r"model\.norm\."),
         ("lm head", r"lm_head\.")],
        [(1, 2), (3, 4)], (1, 4), "pre-norm, RMSNorm"),
}


def _layout(params: Sequence[Param]) -> str:
    first = params[0].name
    return "gpt2" if first.startswith("transformer.") else "llama" if first.startswith("model.") else "bert"


def norm_blocks(params: Sequence[Param]) -> tuple[list[Block], list[tuple[int, int]], tuple[int, int], str]:
    """The boxes of :func:`norm_positions` for one model: each box counts its rows over all layers.

    Returns the blocks (bottom to top; a box with no rows, such as a tied head, is left out), the residual
    pairs, the repeated span and the layout's name. Every row of the table falls in exactly one box.
    Introduced in ``04_layer_norm``.
    """
    parts, residuals, span, name = _LAYOUTS[_layout(params)]
    blocks, seen = [], set()
    for label, pattern in parts:
        rows = [p for p in params if re.match(pattern, p.name)]
        seen |= {p.name for p in rows}
        if rows:
            blocks.append(Block(label, total(rows), rows[0].component))
    missed = [p.name for p in params if p.name not in seen]
    if missed:
        raise ValueError(f"rows in no box: {missed[:3]}")
    return blocks, list(residuals), span, name


def _residual(ax: plt.Axes, x: float, width: float, i: int, j: int, k: int, start: float | None = None) -> float:
    """A skip connection from the arrow into box ``i`` to a ⊕ on the arrow out of box ``j``; returns the ⊕'s height."""
    step, height = 1.5, 0.8  # as block_stack lays its boxes out
    y0 = i * step - 0.22 if start is None else start
    y1 = j * step + height + 0.2
    side = x + width + 0.3 + 0.3 * k
    centre = x + width / 2
    ax.plot([centre, side, side, centre + 0.14], [y0, y0, y1, y1], color="#555555", linewidth=1)
    ax.text(centre, y1, "⊕", ha="center", va="center", fontsize=13, color="#333333",
            bbox=dict(boxstyle="circle,pad=0.0", facecolor="white", edgecolor="none"))
    return y1


def norm_positions(models: Mapping[str, Sequence[Param]], title: str | None = None,
                   figsize: tuple[float, float] = (12, 4.9)) -> plt.Axes:
    """Where the norms sit in the residual stream, one column per model, drawn from its parameter table.

    ``models`` maps a heading to a model's rows (BERT, GPT-2 or LLaMA names). Each column runs from the
    embeddings (bottom) to the top; the layer's boxes are bracketed "× L" and count all L layers; ⊕ marks where a
    residual connection adds the sublayer's input back. Boxes are shaded by their share of the model (norms
    are nearly white: a rounding error); each heading gives the number of norms and their parameters.
    Introduced in ``04_layer_norm``.
    """
    fig, ax = plt.subplots(figsize=figsize)
    width, gap = 3.4, 3.0
    columns = [(heading, params, *norm_blocks(params)) for heading, params in models.items()]
    top = max(len(blocks) for _, _, blocks, *_ in columns) * 1.5 - 0.2
    for k, (heading, params, blocks, residuals, (i, j), name) in enumerate(columns):
        layers = len({p.layer for p in params if p.layer is not None})
        x = k * (width + gap)
        block_stack(blocks, ax=ax, whole=total(params), repeat=(i, j, f"× L = {layers}"), x=x, width=width)
        last = None
        for n, (a, b) in enumerate(residuals):
            start = None if last is None or a * 1.5 - 0.22 > last + 0.3 else last + 0.33
            last = _residual(ax, x, width, a, b, n, start)
        norms = [p for p in params if is_norm(p)]
        count = len({p.name.rsplit(".", 1)[0] for p in norms})
        ax.text(x + width / 2, top, f"{heading}: {name}\n{count} norms, {total(norms):,} parameters",
                ha="center", va="bottom", fontsize=10)
    ax.set_ylim(-0.6, top + 1.0)
    ax.set_xlim(-1.7, len(columns) * (width + gap) - gap + 1.0)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return ax
