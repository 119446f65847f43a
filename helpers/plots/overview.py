"""Pictures introduced in ``00_overview``: the whole BERT model as a column of boxes, from the engine's table."""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import matplotlib.pyplot as plt

from ..params import ATTENTION, EMBEDDINGS, FEED_FORWARD, POOLER, Param, render, total
from .diagrams import Block, block_stack

__all__: list[str] = ["bert_blocks", "bert_diagram"]


def _monomial(formula: str) -> str:
    """``"H*I"`` and ``"I*H"`` -> one spelling, so that equal terms add up."""
    order = "VPTHIAL"
    if "**" in formula or "+" in formula:
        return formula
    return "*".join(sorted(formula.split("*"), key=lambda s: (order.find(s) if s in order else len(order), s)))


def _formula(rows: Sequence[Param], per_layer: bool) -> str:
    """The rows' formulas added up as ``4H² + 4H`` (with ``L·(...)`` over the layers when ``per_layer``)."""
    terms = Counter(_monomial(p.formula) for p in rows)
    layers = len({p.layer for p in rows}) if per_layer else 1
    parts = [f"{n // layers}*{t}" if n // layers > 1 else t for t, n in terms.items()]
    # one common last factor (V·H + P·H + T·H) is taken out: (V + P + T)·H
    factors = {t.rsplit("*", 1)[-1] for t in terms if "*" in t and "**" not in t}
    if len(factors) == 1 and all("*" in t and "**" not in t and terms[t] == layers for t in terms) and len(terms) > 1:
        factor = factors.pop()
        text = f"({' + '.join(t.rsplit('*', 1)[0] for t in terms)})*{factor}"
    else:
        text = " + ".join(parts)
    text = render(text)
    if per_layer:
        text = f"L·({text})" if " + " in text else re.sub(r"^(\d*)", lambda m: f"{m.group(1)}L·", text)
    return text


def _rows(params: Sequence[Param], pattern: str) -> list[Param]:
    return [p for p in params if re.search(pattern, p.name)]


def bert_blocks(params: Sequence[Param]) -> list[Block]:
    """The boxes of :func:`bert_diagram`, bottom to top, each counting its rows of the engine's table over all layers.

    Embeddings, their LayerNorm, then the layer's four sublayers (self-attention, add & LayerNorm,
    feed-forward, add & LayerNorm), each summed over the ``L`` layers, then the pooler. Each block's
    ``detail`` gives the shapes (or ``L`` × one layer's count) and the formula, added up from the table's own
    formulas. Every row of ``params`` falls in exactly one box, or :class:`ValueError` says it does not (a
    decoder's table, say). Introduced in ``00_overview``.
    """
    layers = len({p.layer for p in params if p.layer is not None})
    parts = [
        ("embeddings: token, position, segment tables",  # in that order (RoBERTa stores the position table last)
         sorted((p for p in params if p.component == EMBEDDINGS), key=lambda p: "VPT".find(p.formula[0])), False),
        ("embedding LayerNorm (γ, β)", _rows(params, r"^embeddings\.LayerNorm\."), False),
        ("multi-head self-attention: Q, K, V, O", [p for p in params if p.component == ATTENTION], True),
        ("add & LayerNorm (γ, β)", _rows(params, r"\.attention\.output\.LayerNorm\."), True),
        ("feed-forward: H → I → H", [p for p in params if p.component == FEED_FORWARD], True),
        ("add & LayerNorm (γ, β)", _rows(params, r"\d\.output\.LayerNorm\."), True),
        ("pooler: dense + tanh on [CLS]", [p for p in params if p.component == POOLER], False),
    ]
    counted = [p.name for _, rows, _ in parts for p in rows]
    if sorted(counted) != sorted(p.name for p in params):
        raise ValueError("the table has rows outside the seven boxes of a BertModel (or counted twice)")
    blocks = []
    for label, rows, per_layer in parts:
        formula = _formula(rows, per_layer)
        if per_layer:
            one = total(rows) // layers
            detail = f"{layers} × {one:,} = {formula}"
        elif len(rows) > 1 and len(rows[0].shape) == 2:
            detail = " + ".join("×".join(f"{n:,}" for n in p.shape) for p in rows) + f" = {formula}"
        else:
            detail = formula
        blocks.append(Block(label, total(rows), rows[0].component, detail))
    return blocks


def bert_diagram(params: Sequence[Param], ax: plt.Axes | None = None, title: str | None = None) -> plt.Axes:
    """The whole ``BertModel`` as Vaswani et al. (2017, Fig. 1) draw its encoder, redrawn exact from the table.

    Bottom to top: the embedding tables and their LayerNorm, one encoder layer (self-attention, add &
    LayerNorm, feed-forward, add & LayerNorm) with its two residual connections and a "× L" bracket, then
    the pooler. Each box is labelled with its exact count over all layers and its share of the total, and
    shaded by that share (:func:`~helpers.plots.diagrams.block_stack`); its last line gives the shapes or
    ``L`` × one layer's count, and the formula. Boxes come from :func:`bert_blocks`, so the picture adds up
    to the table's total.
    Introduced in ``00_overview``.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(10, 6.2))
        fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.95)
    blocks = bert_blocks(params)
    whole = total(params)
    layers = len({p.layer for p in params if p.layer is not None})
    block_stack(blocks, ax, whole=whole, residuals=[(2, 2), (4, 4)],
                repeat=(2, 5, f"× L = {layers}"), x=0.0, width=5.6)
    for text in ax.texts:  # a box's three lines: larger, closer together, black; a share under 0.005% says so
        if "\n" in text.get_text():
            text.set_linespacing(1.05)
            text.set_color("black")
            text.set_fontsize(9.5)
            text.set_text(text.get_text().replace("(0.00%)", "(< 0.01%)"))
    # what goes in and what comes out
    ax.annotate("token ids,\npositions,\nsegment ids", (0.0, 0.4), xytext=(-0.5, 0.4), ha="right", va="center",
                fontsize=10, style="italic", arrowprops=dict(arrowstyle="-|>", color="#555555"))
    out = (len(blocks) - 1) * 1.5 + 0.4
    ax.annotate("pooled [CLS]\nvector", (5.6, out), xytext=(6.1, out), ha="left", va="center", fontsize=10,
                style="italic", arrowprops=dict(arrowstyle="<|-", color="#555555"))
    ax.set_xlim(-2.0, 7.4)
    ax.set_ylim(-0.3, out + 0.75)
    ax.set_title(title or f"BertModel: {whole:,} parameters", fontsize=13)
    return ax
