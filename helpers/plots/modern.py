"""Pictures introduced in ``09_modern_architectures``: an encoder–decoder, parts of a count, a mixture-of-experts
layer, multi-head latent attention and its cache, and the design choices, each drawn from the engine's own rows and
counts."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ..lessons.design import Effect
from ..lessons.moe import moe_layer
from ..params import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Param, total
from .charts import COLOURS
from .diagrams import Block, block_stack, blocks_from, shade

__all__: list[str] = ["encoder_decoder_columns", "encoder_decoder_diagram", "count_parts_bars", "moe_layer_diagram",
                      "mla_flow", "cache_per_token_bars", "design_choice_chart"]

_ENCODER = (("self-attention", "self_attn"), ("add & LayerNorm", "norm1"), ("feed-forward", "linear"),
            ("add & LayerNorm", "norm2"))
_DECODER = (("masked self-attention", "self_attn"), ("add & LayerNorm", "norm1"),
            ("cross-attention (K, V from the encoder)", "multihead_attn"), ("add & LayerNorm", "norm2"),
            ("feed-forward", "linear"), ("add & LayerNorm", "norm3"))


def encoder_decoder_columns(params: Sequence[Param]) -> tuple[list[Block], list[Block]]:
    """The boxes of one encoder layer and one decoder layer of a 2017 Transformer (``helpers.lessons.vaswani`` names),
    bottom to top, each counted from layer 0's rows; a final norm of a stack, where the rows have one, is a last
    box, and the decoder ends with the pre-softmax projection (the shared table, tied: 0 more, §3.4).

    Introduced in ``09_modern_architectures``.
    """
    encoder: list[Block] = []
    decoder: list[Block] = []
    for column, stack, parts in ((encoder, "encoder", _ENCODER), (decoder, "decoder", _DECODER)):
        column += [blocks_from(params, {label: f"transformer.{stack}.layers.0.{prefix}"})[0] for label, prefix in parts]
        if any(p.name.startswith(f"transformer.{stack}.norm.") for p in params):
            column += blocks_from(params, {"final LayerNorm": f"transformer.{stack}.norm."})
    head = [p for p in params if p.component == LM_HEAD]
    decoder.append(Block("pre-softmax linear = the table (tied)" + (" + bias" if head else ""), total(head), LM_HEAD))
    return encoder, decoder


def encoder_decoder_diagram(params: Sequence[Param], titles: Sequence[str] = ("encoder", "decoder"),
                            ax: plt.Axes | None = None, width: float = 4.4, gap: float = 2.6) -> plt.Axes:
    """The encoder (left) and decoder (right) of a 2017 Transformer, two :func:`block_stack` columns from its rows,
    standing on the one token table both stacks share.

    Introduced in ``09_modern_architectures``. The layers are post-LN (each sublayer's input skips it and is added
    before the LayerNorm: the ⊕ lines), bracketed "× N"; an arrow carries the encoder's output to every decoder
    layer's cross-attention. Shares are of the whole count of ``params``.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(10.5, 5.2))
        fig.subplots_adjust(left=0.0, right=1.0, top=0.99, bottom=0.01)
    encoder, decoder = encoder_decoder_columns(params)
    whole = total(params)
    N = 1 + max(p.layer for p in params if p.layer is not None)
    block_stack(encoder, ax, whole=whole, residuals=[(0, 0), (2, 2)], repeat=(0, 3, f"× {N}"), x=0.0, width=width)
    right = width + gap
    block_stack(decoder, ax, whole=whole, residuals=[(0, 0), (2, 2), (4, 4)], repeat=(0, 5, f"× {N}"), x=right,
                width=width)
    step, height = 1.5, 0.8
    top = (len(encoder) - 1) * step + height / 2  # the encoder's output, to the cross-attention (box 2)
    ax.add_patch(FancyArrowPatch((width, top), (right, 2 * step + height / 2), arrowstyle="-|>", mutation_scale=12,
                                 color="#555555", connectionstyle="arc3,rad=-0.15"))
    table = [p for p in params if p.component == EMBEDDINGS]
    V, H = table[0].shape
    y = -1.6
    ax.add_patch(FancyBboxPatch((0.0, y), right + width, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                                facecolor=COLOURS[EMBEDDINGS], edgecolor=COLOURS[EMBEDDINGS]))
    ax.text((right + width) / 2, y + height / 2,
            f"one token table V×H = {V:,}×{H:,} = {total(table):,} ({100 * total(table) / whole:.2f}%)\n"
            "the source embedding, the target embedding and the pre-softmax projection (§3.4); positions: none",
            ha="center", va="center", fontsize=8.5, color="white")
    for x in (width / 2, right + width / 2):
        ax.add_patch(FancyArrowPatch((x, y + height), (x, -0.05), arrowstyle="-|>", mutation_scale=10, color="#555555"))
    rows = max(len(encoder), len(decoder))
    for x, title in ((0.0, titles[0]), (right, titles[1])):
        ax.text(x + width / 2, rows * step - 0.05, title, ha="center", va="bottom", fontsize=12, fontweight="bold")
    ax.set_ylim(y - 0.3, rows * step + 0.6)
    return ax


def count_parts_bars(parts: Mapping[str, Mapping[str, int]], title: str, ax: plt.Axes | None = None,
                     colours: Sequence[str] = ("#55A868", "#C44E52", "#4C72B0")) -> plt.Axes:
    """One horizontal bar per model, 100% wide: each part of its exact count, in percent, labelled.

    Introduced in ``09_modern_architectures``. ``parts`` maps a model to ``{part: parameters}``; the parts of a
    model must be its whole count (each bar's exact total is written at its end). Segments of 4% or more carry
    their share.
    """
    ax = ax or plt.subplots(figsize=(8.0, 4.0))[1]
    names = list(parts)[::-1]
    labels = list(dict.fromkeys(k for m in names for k in parts[m]))
    for y, model in enumerate(names):
        whole, left = sum(parts[model].values()), 0.0
        for i, label in enumerate(labels):
            share = 100 * parts[model].get(label, 0) / whole
            ax.barh(y, share, left=left, color=colours[i % len(colours)], edgecolor="white",
                    label=label if y == 0 else None)
            if share >= 6:
                ax.text(left + share / 2, y, f"{share:.1f}%", ha="center", va="center", fontsize=8, color="white")
            left += share
        ax.text(102, y, f"{whole:,}", va="center", fontsize=8.5)
    ax.set_yticks(range(len(names)), names, fontsize=9)
    ax.set_xlim(0, 122)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("share of all parameters (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.42, -0.14), ncol=len(labels), fontsize=9, frameon=False)
    ax.grid(False)
    ax.set_title(title, fontsize=11)
    return ax


def moe_layer_diagram(params: Sequence[Param], k: int, chosen: Sequence[int], ax: plt.Axes | None = None,
                      title: str | None = None, per_row: int | None = None) -> plt.Axes:
    """One mixture-of-experts layer from its rows: the router, the E routed experts with the k a token uses
    highlighted, and any shared experts (always used) drawn apart, hatched.

    Introduced in ``09_modern_architectures``. ``params`` are one layer's rows (any family: the rows are sorted by
    :func:`helpers.lessons.moe.moe_layer`); ``chosen`` are the k experts the picture highlights for one token (which ones
    a token gets depends on the router; how many parameters it uses does not). The experts are a grid of
    ``per_row`` columns (default: all in a row up to 16). The caption under the grid gives the layer's counts,
    total and used by the token.
    """
    ax = ax or plt.subplots()[1]
    layer = moe_layer(params)
    E, colour = layer.E, COLOURS[FEED_FORWARD]
    if len(chosen) != k or len(set(chosen)) != k or not all(0 <= i < E for i in chosen):
        raise ValueError(f"chosen: {list(chosen)} is not {k} distinct experts of 0..{E - 1}")
    per_row = per_row or min(E, 16)
    rows = -(-E // per_row)
    size, pad = 1.0, 0.18
    x0, y0 = 0.0, 3.2  # the grid's lower left corner; the router and the token sit below it
    for i in range(E):
        r, c = divmod(i, per_row)
        used = i in chosen
        ax.add_patch(Rectangle((x0 + c * (size + pad), y0 + (rows - 1 - r) * (size + pad)), size, size,
                               facecolor=colour if used else shade(colour, 0.18), edgecolor=colour,
                               linewidth=1.6 if used else 0.6))
        if E <= 32:
            ax.text(x0 + c * (size + pad) + size / 2, y0 + (rows - 1 - r) * (size + pad) + size / 2, str(i),
                    ha="center", va="center", fontsize=9, color="white" if used else "#333333")
    grid_w = per_row * (size + pad) - pad
    grid_h = rows * (size + pad) - pad
    shared_w = 0.0
    if layer.shared:
        shared_w = 2.6 if E <= 32 else 3.6
        n, rest = divmod(total(layer.shared), layer.per_expert)  # shared experts as wide as a routed one: n of them
        experts = f"{n} expert{'s' if n > 1 else ''}" if n and not rest else "experts"
        ax.add_patch(Rectangle((grid_w + 0.8, y0), shared_w, grid_h, facecolor=shade(colour, 0.6), edgecolor=colour,
                               hatch="//", linewidth=1.2))
        ax.text(grid_w + 0.8 + shared_w / 2, y0 + grid_h / 2, f"shared\n{experts}\n{total(layer.shared):,}\nalways used",
                ha="center", va="center", fontsize=8.5, bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    router = ", ".join("×".join(f"{n:,}" for n in p.shape) for p in layer.router)
    ax.add_patch(Rectangle((0.0, 0.9), grid_w, 1.5, facecolor=shade("#8172B3", 0.5), edgecolor="#8172B3"))
    ax.text(grid_w / 2, 1.65, f"router {router} = {total(layer.router):,}\npicks k = {k} of E = {E}", ha="center",
            va="center", fontsize=8.5)
    ax.text(grid_w / 2, 0.2, "one token's hidden state (H)", ha="center", va="center", fontsize=8.5)
    ax.add_patch(FancyArrowPatch((grid_w / 2, 0.4), (grid_w / 2, 0.9), arrowstyle="-|>", mutation_scale=10,
                                 color="#555555"))
    for i in chosen if E <= 32 else ():  # a large grid: the highlighted cells say it, lines would cross it
        r, c = divmod(i, per_row)
        target = (x0 + c * (size + pad) + size / 2, y0 + (rows - 1 - r) * (size + pad))
        ax.add_patch(FancyArrowPatch((grid_w / 2, 2.4), target, arrowstyle="-|>", mutation_scale=10, color=colour,
                                     linewidth=1.3))
    uses = layer.active(k)
    shared = f" + shared {total(layer.shared):,}" if layer.shared else ""
    ax.text(grid_w / 2, -0.2,
            f"E = {E} experts of {layer.per_expert:,} each: {total(layer.routed):,}\n"
            f"this layer: {layer.total:,}; one token uses {uses:,}\n"
            f"(router + {k} experts{shared}: {100 * uses / layer.total:.1f}%)",
            ha="center", va="top", fontsize=9)
    ax.set_xlim(-0.5, grid_w + (shared_w + 1.3 if layer.shared else 0.5))
    ax.set_ylim(-2.3, y0 + grid_h + 0.3)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)
    return ax


_MLA = ("q_a_proj", "q_a_layernorm", "q_b_proj", "kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj", "o_proj")


def _flow_box(ax: plt.Axes, x: float, y: float, w: float, h: float, text: str, face, edge: str,
              fontsize: float = 8.5) -> None:
    ax.add_patch(FancyBboxPatch((x, y - h / 2), w, h, boxstyle="round,pad=0.02,rounding_size=0.1", facecolor=face,
                                edgecolor=edge, linewidth=1.2))
    ax.text(x + w / 2, y, text, ha="center", va="center", fontsize=fontsize)


def _flow_arrow(ax: plt.Axes, start: tuple[float, float], end: tuple[float, float], colour: str = "#555555") -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=colour, linewidth=1.0,
                                 shrinkA=0, shrinkB=0))


def mla_flow(params: Sequence[Param], A: int, ax: plt.Axes | None = None, title: str | None = None) -> plt.Axes:
    """Multi-head latent attention (DeepSeek-V2 §2.1) as a data flow from one layer's rows: the query through its
    bottleneck, the joint key–value latent, the decoupled rotary key, the output, and what the cache keeps.

    Introduced in ``09_modern_architectures``. ``params`` are one layer's ``self_attn.*`` rows of a DeepSeek-V3
    table (``q_a_proj``, ``q_a_layernorm``, ``q_b_proj``, ``kv_a_proj_with_mqa``, ``kv_a_layernorm``,
    ``kv_b_proj``, ``o_proj``, any biases with them); ``A`` is the number of heads. Every size on the picture is
    read from the rows' shapes (r_q, r_kv, d_rope, d_k, d_nope, d_v), every box gives its tensor's shape and exact
    count, shaded by its share; the red frame is what each layer caches per token. A ``q_proj`` without bottleneck
    (``q_lora_rank: null``) is refused.
    """
    ax = ax or plt.subplots(figsize=(14.5, 6.0))[1]
    rows = {m: [p for p in params if f"self_attn.{m}." in p.name] for m in _MLA}
    missing = [m for m, found in rows.items() if not found]
    if missing:
        raise ValueError(f"params: no {', '.join(missing)} rows (one layer's self_attn rows of latent attention)")
    weight = {m: next(p for p in found if p.name.endswith(".weight")) for m, found in rows.items()}
    r_q, r_kv = weight["q_a_layernorm"].shape[0], weight["kv_a_layernorm"].shape[0]
    H = weight["q_a_proj"].shape[1]
    d_rope = weight["kv_a_proj_with_mqa"].shape[0] - r_kv
    d_k, d_v = weight["q_b_proj"].shape[0] // A, weight["o_proj"].shape[1] // A
    d_nope = weight["kv_b_proj"].shape[0] // A - d_v
    counts = {m: total(found) for m, found in rows.items()}
    largest = max(counts.values())
    colour, norm = COLOURS[ATTENTION], COLOURS[LAYER_NORM]

    def projection(m: str, x: float, y: float, w: float = 2.5) -> None:
        shape = "×".join(f"{n:,}" for n in weight[m].shape)
        _flow_box(ax, x, y, w, 1.05, f"{m}\n{shape}\n{counts[m]:,}", shade(colour, 0.2 + 0.5 * counts[m] / largest),
                  colour)

    def rms(m: str, x: float, y: float, size: str) -> None:
        _flow_box(ax, x, y, 1.5, 0.8, f"{m.replace('_layernorm', '')} norm\n{size} = {counts[m]:,}",
                  shade(norm, 0.25), norm, fontsize=7.5)

    yq, yc, yr = 2.3, 0.5, -1.3  # the query row, the latent row, the rotary-key row
    _flow_box(ax, 0.0, yc, 1.3, 1.2, f"h\nH = {H:,}", (0.95, 0.95, 0.95), "#666666", fontsize=9)
    _flow_arrow(ax, (1.3, yc + 0.3), (1.8, yq))
    _flow_arrow(ax, (1.3, yc - 0.35), (1.8, yc - 0.35))
    projection("q_a_proj", 1.8, yq, w=2.6)
    _flow_arrow(ax, (4.4, yq), (4.8, yq))
    rms("q_a_layernorm", 4.8, yq, "r_q")
    _flow_arrow(ax, (6.3, yq), (8.8, yq))
    ax.text(7.55, yq + 0.12, f"r_q = {r_q:,}", ha="center", va="bottom", fontsize=8)
    projection("q_b_proj", 8.8, yq)
    ax.text(10.05, yq - 0.62, f"queries: {A} heads × d_k = {d_k}", ha="center", va="top", fontsize=7.5)
    projection("kv_a_proj_with_mqa", 1.8, yc - 0.35, w=2.6)
    ax.text(3.1, yc - 0.97, f"split: r_kv = {r_kv:,} | d_rope = {d_rope}", ha="center", va="top", fontsize=7.5)
    _flow_arrow(ax, (4.4, yc - 0.1), (4.8, yc))
    rms("kv_a_layernorm", 4.8, yc, "r_kv")
    _flow_arrow(ax, (4.4, yc - 0.6), (4.8, yr))
    _flow_box(ax, 4.8, yr, 1.5, 0.8, "RoPE\n0 parameters", (0.97, 0.97, 0.97), "#888888", fontsize=7.5)
    cached = "#C44E52"  # what the cache keeps: the latent and the rotated key, one of each per layer and token
    for y, text in ((yc, f"latent c_KV\nr_kv = {r_kv:,}"), (yr, f"rotary key k_R\nd_rope = {d_rope}")):
        _flow_arrow(ax, (6.3, y), (6.7, y))
        _flow_box(ax, 6.7, y, 1.5, 0.8, text, shade(cached, 0.15), cached, fontsize=7.5)
    ax.add_patch(FancyBboxPatch((6.55, yr - 0.6), 1.8, yc - yr + 1.2, boxstyle="round,pad=0.02,rounding_size=0.1",
                                facecolor="none", edgecolor=cached, linewidth=1.6, linestyle="--"))
    ax.text(7.45, yr - 0.7, f"cached: r_kv + d_rope\n= {r_kv + d_rope:,} values a token", ha="center", va="top",
            fontsize=8, color=cached)
    _flow_arrow(ax, (8.2, yc), (8.8, yc))
    projection("kv_b_proj", 8.8, yc)
    ax.text(10.05, yc - 0.62, f"keys {A} × d_nope = {d_nope},\nvalues {A} × d_v = {d_v}", ha="center", va="top",
            fontsize=7.5)
    attention_x = 12.0
    for y in (yq, yc):
        _flow_arrow(ax, (11.3, y), (attention_x, y))
    _flow_arrow(ax, (8.2, yr), (attention_x, yr))
    ax.text(10.35, yr - 0.12, f"one rotary key for all {A} heads", ha="center", va="top", fontsize=7.5)
    _flow_box(ax, attention_x, (yq + yr) / 2, 2.2, yq - yr + 1.0,
              f"attention\nin each of\n{A} heads:\nq·k over\n{d_nope} + {d_rope},\nweights × v\n"
              f"over {d_v}\n\n0 parameters",
              (0.97, 0.97, 0.97), "#888888", fontsize=8)
    _flow_arrow(ax, (attention_x + 2.2, yc), (attention_x + 2.6, yc))
    projection("o_proj", attention_x + 2.6, yc)
    _flow_arrow(ax, (attention_x + 5.1, yc), (attention_x + 5.5, yc))
    _flow_box(ax, attention_x + 5.5, yc, 1.0, 1.2, "out\nH", (0.95, 0.95, 0.95), "#666666", fontsize=9)
    matrices = sum(c for m, c in counts.items() if "layernorm" not in m)
    ax.text(0.0, yr - 1.45, f"one layer: 5 matrices {matrices:,} + 2 norms "
                            f"{counts['q_a_layernorm'] + counts['kv_a_layernorm']:,} = {sum(counts.values()):,}",
            ha="left", va="top", fontsize=9.5, fontweight="bold")
    ax.set_xlim(-0.2, attention_x + 6.7)
    ax.set_ylim(yr - 2.0, yq + 0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)
    return ax


def cache_per_token_bars(caches: Mapping[str, int], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """One horizontal bar per attention: the values its cache holds per token, each labelled with its exact count
    and how many times the last bar's it is.

    Introduced in ``09_modern_architectures``. ``caches`` maps a label to values per token (all layers), largest
    first; the last is the reference (latent attention's, for DeepSeek-V3). A linear axis: the ratios are the
    lengths.
    """
    ax = ax or plt.subplots(figsize=(10.5, 3.4))[1]
    names = list(caches)
    reference = caches[names[-1]]
    colours = ("#4C72B0", "#8172B3", "#C44E52", "#55A868")
    for y, name in enumerate(reversed(names)):
        value = caches[name]
        ax.barh(y, value, color=colours[(len(names) - 1 - y) % len(colours)], height=0.6)
        ratio = "" if value == reference else f"  (×{value / reference:.2f})"
        ax.text(value + 0.01 * max(caches.values()), y, f"{value:,}{ratio}", va="center", fontsize=9)
    ax.set_yticks(range(len(names)), list(reversed(names)), fontsize=9)
    ax.set_xlim(0, 1.35 * max(caches.values()))
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:,.0f}")
    ax.set_xlabel("values cached per token, all layers")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title, fontsize=11)
    return ax


def _signed(n: int) -> str:
    return f"+{n:,}" if n > 0 else f"−{-n:,}" if n < 0 else "0"


def design_choice_chart(families: Mapping[str, Mapping[str, bool | None]], effects: Sequence[Effect],
                        title: str | None = None) -> tuple[plt.Axes, plt.Axes]:
    """Left: which family makes each choice (a filled cell), one row per effect; right: the exact effect of the
    choice on a 7B-class model's total (solid bar) and, where it differs, on its active parameters (hatched).

    Introduced in ``09_modern_architectures``. ``families`` maps a family's label to
    :func:`helpers.lessons.design.design_features` of one of its configs; ``effects`` are
    :func:`helpers.lessons.design.design_effects`. The effect axis is logarithmic in the size of the change (so a bias
    and an expert can share it): green adds, red removes, a 0 is written out.
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(12.0, (0.38 if len(families) > 8 else 0.42) * len(effects) + 1.4),
                                      gridspec_kw={"width_ratios": (1.0, 1.25), "wspace": 0.03})
    names = list(families)
    ys = list(range(len(effects)))[::-1]
    for y, effect in zip(ys, effects):
        for x, family in enumerate(names):
            has = families[family].get(effect.feature)
            face = "#4C72B0" if has else ("white" if has is False else "#EEEEEE")
            left.add_patch(Rectangle((x - 0.42, y - 0.38), 0.84, 0.76, facecolor=face, edgecolor="#BBBBBB",
                                     linewidth=0.6))
            if has is None:
                left.text(x, y, "–", ha="center", va="center", fontsize=9, color="#777777")
    left.set_xlim(-0.6, len(names) - 0.4)
    left.set_ylim(-0.6, len(effects) - 0.4)
    left.set_xticks(range(len(names)), names, fontsize=8.5)
    left.xaxis.tick_top()
    if len(names) > 8:  # slanted, so that long names do not run into each other
        plt.setp(left.get_xticklabels(), rotation=35, ha="left", rotation_mode="anchor")
    left.set_yticks(ys, [e.label for e in effects], fontsize=9)
    left.grid(False)
    for side in ("right", "bottom", "left", "top"):
        left.spines[side].set_visible(False)
    left.tick_params(length=0)
    floor = 1e4
    for y, effect in zip(ys, effects):
        both = effect.delta_active != effect.delta  # two bars: the total above, the active below
        for value, offset, hatch in ((effect.delta, 0.18 if both else 0.0, None), (effect.delta_active, -0.18, "//")):
            if hatch and not both:
                continue
            if value == 0:
                right.text(floor * 1.3, y + offset, "0 parameters" + (" (total)" if both else ""), va="center",
                           fontsize=8.5, color="#555555")
                continue
            colour = "#55A868" if value > 0 else "#C44E52"
            right.barh(y + offset, abs(value) - floor, left=floor, height=0.3 if both else 0.6, color=colour,
                       hatch=hatch, edgecolor="white" if hatch is None else colour, alpha=1.0 if hatch is None else 0.5)
            right.text(abs(value) * 1.15, y + offset, _signed(value) + (" active" if hatch else ""), va="center",
                       fontsize=8.5)
    right.set_xscale("log")
    right.set_xlim(floor, 5e12)
    right.set_ylim(-0.6, len(effects) - 0.4)
    right.set_yticks([])
    right.set_xlabel("size of the change in parameters (log scale): green adds, red removes")
    right.grid(axis="x", alpha=0.3)
    for side in ("right", "top", "left"):
        right.spines[side].set_visible(False)
    if title:
        fig.suptitle(title, fontsize=11, y=1.07 if len(names) > 8 else 1.0)  # above slanted names
    return left, right
