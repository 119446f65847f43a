"""Pictures introduced in ``05_pooler_and_heads``: what sits on top of BERT's encoder, from the engine's tables."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ..params import Param, total
from .charts import COLOURS
from .diagrams import shade

__all__: list[str] = ["heads_parts", "heads_diagram"]


def _rows(params: Sequence[Param], prefix: str) -> list[Param]:
    rows = [p for p in params if p.name.startswith(prefix)]
    if not rows:
        raise ValueError(f"no tensor starts with {prefix!r}")
    return rows


def _one(params: Sequence[Param], name: str) -> Param:
    rows = [p for p in params if p.name == name]
    if len(rows) != 1:
        raise ValueError(f"expected one tensor named {name!r}, found {len(rows)}")
    return rows[0]


def _shape(p: Param) -> str:
    return "×".join(f"{n:,}" for n in p.shape)


def heads_parts(params: Sequence[Param], heads: Sequence[Param], classifier: Sequence[Param]
                ) -> dict[str, list[Param]]:
    """The rows each box of :func:`heads_diagram` counts, by box name, read from the engine's tables.

    ``params`` is ``param_table(config)`` (``BertModel``, pooler included), ``heads`` is
    ``pretraining_heads(config)`` and ``classifier`` is ``classification_head(config, C)``. Every row of the
    three tables falls in exactly one box, except the word-embedding table, which the ``decoder (tied)`` box
    shows again (the same tensor, counted once, in ``word table``). Introduced in ``05_pooler_and_heads``.
    """
    parts = {
        "word table": [_one(params, "embeddings.word_embeddings.weight")],
        "other embeddings": [p for p in _rows(params, "embeddings.") if p.name != "embeddings.word_embeddings.weight"],
        "encoder": _rows(params, "encoder."),
        "pooler": _rows(params, "pooler."),
        "NSP": _rows(heads, "cls.seq_relationship."),
        "classifier": _rows(classifier, "classifier."),
        "transform": _rows(heads, "cls.predictions.transform."),
        "decoder bias": [_one(heads, "cls.predictions.bias")],
    }
    counted = sorted(p.name for rows in parts.values() for p in rows)
    if counted != sorted(p.name for p in [*params, *heads, *classifier]):
        raise ValueError("a row of the tables falls in no box of the diagram, or in two")
    parts["decoder (tied)"] = parts["word table"]
    return parts


def heads_diagram(params: Sequence[Param], heads: Sequence[Param], classifier: Sequence[Param],
                  ax: plt.Axes | None = None, title: str | None = None) -> plt.Axes:
    """The pooler and the heads on top of BERT's encoder, every box counted from the engine's tables.

    Bottom to top: the embeddings and the ``L`` encoder layers, the final hidden states (``[CLS]`` first),
    then on the left the pooler (dense ``H×H`` + tanh on ``[CLS]`` only) feeding the NSP head (``2×H``,
    pre-training) or a classifier (``C×H``, fine-tuning), and on the right the MLM head on every position:
    its transform (dense ``H×H``, GELU, LayerNorm) and its decoder, whose ``V×H`` weight is the word table
    itself (drawn dashed, joined to the table, counted once) plus a bias of ``V``. Boxes are shaded by their
    share of ``BertForPreTraining``. Arguments as in :func:`heads_parts`. Introduced in ``05_pooler_and_heads``.
    """
    ax = ax or plt.subplots(figsize=(12, 6.4))[1]
    parts = heads_parts(params, heads, classifier)
    word = parts["decoder (tied)"][0]
    V, H = word.shape
    L = len({p.layer for p in parts["encoder"]})
    C = classifier[0].shape[0]
    whole = total(params) + total(heads)
    largest = max(total(rows) for name, rows in parts.items() if name != "decoder (tied)")

    def box(x: float, y: float, w: float, h: float, text: str, rows: Sequence[Param] | None, component: str,
            dashed: bool = False, size: float = 9.0) -> None:
        n = total(rows) if rows else 0
        strength = 0.12 + 0.78 * (n / largest) ** 0.5 if n and not dashed else 0.0
        face = shade(COLOURS.get(component, "#999999"), strength) if strength else (1.0, 1.0, 1.0)
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.1", facecolor=face,
                                    edgecolor=COLOURS.get(component, "#666666"), linewidth=1.4,
                                    linestyle="--" if dashed else "-"))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size,
                color="white" if strength > 0.7 else "black")

    def arrow(x0: float, y0: float, x1: float, y1: float, **kw) -> None:
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=11,
                                     color=kw.pop("color", "#555555"), **kw))

    def share(n: int) -> str:
        return f"{n:,} ({100 * n / whole:.2f}%)"

    # the encoder below
    other = parts["other embeddings"]
    box(2.6, 0.2, 2.9, 1.0, f"position and segment tables,\nembedding LayerNorm\n{share(total(other))}", other,
        "embeddings", size=8.5)
    box(5.7, 0.2, 2.9, 1.0, f"word table {_shape(word)}\n{share(word.count)}", [word], "embeddings", size=8.5)
    box(2.6, 1.7, 6.0, 0.9, f"encoder: L = {L} layers (attention, feed-forward, LayerNorms)\n"
        f"{share(total(parts['encoder']))}", parts["encoder"], "encoder")
    arrow(4.05, 1.2, 4.05, 1.7)
    arrow(7.15, 1.2, 7.15, 1.7)
    # the final hidden states, [CLS] first
    tokens = ["[CLS]", "h₁", "h₂", "h₃", "…", "hₙ"]
    for k, t in enumerate(tokens):
        x = 2.6 + k * 1.04
        face = shade(COLOURS["pooler"], 0.35) if k == 0 else (0.95, 0.95, 0.95)
        ax.add_patch(FancyBboxPatch((x, 3.0), 0.86, 0.45, boxstyle="round,pad=0.01,rounding_size=0.06",
                                    facecolor=face, edgecolor="#777777", linewidth=0.8))
        ax.text(x + 0.43, 3.225, t, ha="center", va="center", fontsize=9)
        arrow(x + 0.43, 2.6, x + 0.43, 3.0, color="#999999")
    ax.text(2.45, 3.225, f"final hidden\nstates, H = {H:,}", ha="right", va="center", fontsize=8.5,
            color="#555555")
    # left: pooler on [CLS], then NSP (pre-training) or a classifier (fine-tuning)
    pool = parts["pooler"]
    box(0.2, 4.0, 3.9, 0.95, f"pooler: tanh(W_p h_[CLS] + b_p)\n{' + '.join(_shape(p) for p in pool)}"
        f" = {share(total(pool))}", pool, "pooler")
    arrow(3.03, 3.45, 2.4, 4.0)
    nsp, cls = parts["NSP"], parts["classifier"]
    box(0.0, 5.45, 2.05, 0.95, f"NSP head\n{' + '.join(_shape(p) for p in nsp)}\n= {total(nsp):,}", nsp,
        "NSP head", size=8.5)
    box(2.25, 5.45, 2.05, 0.95, f"classifier, C = {C}\n{' + '.join(_shape(p) for p in cls)}\n= {total(cls):,}",
        cls, "classifier", size=8.5)
    arrow(1.4, 4.95, 1.0, 5.45)
    arrow(2.9, 4.95, 3.3, 5.45)
    ax.text(1.02, 6.5, "pre-training:\nIsNext / NotNext", ha="center", va="bottom", fontsize=8)
    ax.text(3.27, 6.5, "fine-tuning:\none of C labels", ha="center", va="bottom", fontsize=8)
    # right: the MLM head on every position
    tr, bias = parts["transform"], parts["decoder bias"]
    dense, norm = [p for p in tr if "LayerNorm" not in p.name], [p for p in tr if "LayerNorm" in p.name]
    box(5.2, 4.0, 4.6, 0.95, f"MLM transform: dense {' + '.join(_shape(p) for p in dense)}, GELU,\n"
        f"LayerNorm {' + '.join(_shape(p) for p in norm)} = {share(total(tr))}", tr, "MLM head")
    for k in range(1, 6):
        arrow(2.6 + k * 1.04 + 0.43, 3.45, 5.4 + 0.84 * (k - 1), 4.0, color="#999999")
    box(5.2, 5.45, 1.8, 0.95, f"decoder bias\n{_shape(bias[0])}\n= {total(bias):,}", bias, "MLM head", size=8.5)
    box(7.2, 5.45, 2.6, 0.95, f"decoder weight {_shape(word)}\n= the word table (tied):\n0 new parameters",
        None, "MLM head", dashed=True, size=8.5)
    arrow(7.5, 4.95, 7.5, 5.45)
    ax.text(7.5, 6.5, f"pre-training: a score for each of V = {V:,} tokens\nat the masked positions",
            ha="center", va="bottom", fontsize=8)
    # the tie: the decoder weight is the word table, one tensor (a dashed line down the right side)
    tie = COLOURS["embeddings"]
    ax.plot([9.8, 10.1, 10.1], [5.92, 5.92, 0.7], color=tie, linestyle="--", linewidth=1.3)
    arrow(10.1, 0.7, 8.6, 0.7, color=tie, linestyle="--", linewidth=1.3)
    ax.text(10.2, 3.3, "tied: one tensor,\ncounted once\n(Press & Wolf 2017)", ha="left", va="center",
            fontsize=8.5, color=tie)
    # brackets: what each model class adds
    ax.text(10.2, 1.65, f"BertModel\n{total(params):,}\n(with the pooler)", ha="left", va="center", fontsize=9,
            fontweight="bold")
    ax.text(10.2, 4.6, f"BertForPreTraining\nadds {total(heads):,}\n= {whole:,}", ha="left", va="center",
            fontsize=9, fontweight="bold", color=COLOURS["MLM head"])
    ax.set_xlim(-0.1, 12.0)
    ax.set_ylim(0.0, 7.0)
    ax.axis("off")
    ax.grid(False)
    if title:
        ax.set_title(title)
    return ax
