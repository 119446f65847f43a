"""Pictures introduced in ``11_todays_models``: the decode cache of today's attentions against the sequence length,
drawn from the engine's own bytes (:func:`helpers.memory.kv_cache_bytes`); layers side by side, box by box, drawn
from the engine's rows; each layer's kind of attention and feed-forward along the stack; an image cut into patches
and tokens; a card's figure reached from the model transformers builds, step by step."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import Patch, Rectangle

from ..config import ModelConfig
from ..memory import kv_cache_bytes
from ..params import VISION, Param, param_table
from .diagrams import block_stack, blocks_from

__all__: list[str] = ["kv_cache_series", "kv_cache_curves", "layer_columns", "layer_kinds", "layer_strips",
                      "patch_grids", "count_bridge"]

_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#222222", "#DA8BC3", "#937860")
_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (9, 3)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)))


def kv_cache_series(models: Mapping[str, ModelConfig], lengths: Sequence[int], dtype: str = "bf16"
                    ) -> dict[str, list[int]]:
    """Bytes of one sequence's decode cache after each of ``lengths`` tokens, per model: the engine's
    :func:`~helpers.memory.kv_cache_bytes` with ``batch = 1``.

    Introduced in ``11_todays_models``. Every byte transformers' cache holds, whatever its kind: full layers grow with
    S, windowed layers stop at ``W − 1`` tokens, chunked layers at ``chunk − 1``, latent attention caches its latent,
    and linear attention holds a state that does not grow. Raises ``ValueError`` for an encoder (no cache).
    """
    series = {}
    for label, config in models.items():
        values = [kv_cache_bytes(config, 1, S, dtype) for S in lengths]
        if None in values:
            raise ValueError(f"{label}: {config.name} keeps no decode cache (an encoder)")
        series[label] = [int(v) for v in values if v is not None]
    return series


def kv_cache_curves(models: Mapping[str, ModelConfig], lengths: Sequence[int], title: str, dtype: str = "bf16",
                    axes: Sequence[plt.Axes] | None = None) -> tuple[plt.Axes, plt.Axes]:
    """Two panels against the sequence length S (log axes): left, the bytes one sequence's cache holds (GiB); right,
    those bytes per token of the sequence (KiB).

    Introduced in ``11_todays_models``. ``models`` maps a label (the model and its kind of attention) to its config;
    the curves are :func:`kv_cache_series`. A cache that grows with S is a rising line on the left and a flat one on
    the right; a cache that stops growing (windows, a recurrent state) flattens on the left and falls on the right.
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(12.5, 4.6))
    left, right = axes
    series = kv_cache_series(models, lengths, dtype)
    for i, (label, values) in enumerate(series.items()):
        style = {"color": _COLOURS[i % len(_COLOURS)], "linestyle": _STYLES[i % len(_STYLES)], "linewidth": 2}
        left.plot(lengths, [v / 2**30 for v in values], label=label, **style)
        right.plot(lengths, [v / S / 2**10 for v, S in zip(values, lengths)], label=label, **style)
    for ax, ylabel in ((left, f"cache of one sequence, GiB ({dtype})"), (right, "cache per token of the sequence, KiB")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length S (tokens)")
        ax.set_ylabel(ylabel)
        ax.xaxis.set_major_formatter(lambda x, _: f"{x / 1024:g}K" if x >= 1024 else f"{x:g}")
    left.legend(fontsize=8, loc="upper left")
    left.figure.suptitle(title, fontsize=11)
    return left, right


def layer_columns(columns: Mapping[str, tuple[Sequence[Param], Mapping[str, str]]], title: str,
                  residuals: Sequence[tuple[int, int]] = ((0, 1), (2, 3)), ax: plt.Axes | None = None) -> plt.Axes:
    """Layers side by side, each a column of boxes from bottom to top in the order data flows through them.

    Introduced in ``11_todays_models``. ``columns`` maps a column's caption to one layer's rows (names relative to
    the layer) and its boxes, {box label: name prefix}, listed bottom to top; each box counts the rows whose name
    starts with its prefix (:func:`helpers.plots.diagrams.blocks_from`), so a box that matches no row raises
    ``ValueError``. ``residuals`` pairs ``(i, j)``: the input of box ``i`` added to the output of box ``j``, the
    same in every column (where the norms sit is what the columns show).
    """
    width, gap = 4.2, 1.8
    ax = ax or plt.subplots(figsize=(5.5 * len(columns), 5.2))[1]
    for n, (caption, (params, boxes)) in enumerate(columns.items()):
        x = n * (width + gap)
        block_stack(blocks_from(params, boxes), ax=ax, residuals=residuals, x=x, width=width)
        ax.text(x + width / 2, -0.55, caption, ha="center", va="top", fontsize=10, fontweight="bold")
    ax.set_ylim(-1.2, ax.get_ylim()[1])
    ax.set_title(title, fontsize=11)
    return ax


# each layer's kind, as :func:`layer_kinds` names it: how far its attention reaches and whether it rotates, and
# what its feed-forward is
FULL_ROPE, FULL_NOPE, WINDOWED, CHUNKED, LINEAR = "full, RoPE", "full, NoPE", "windowed, RoPE", "chunked, RoPE", "linear"
DENSE, MIXTURE = "dense", "mixture of experts"
KIND_COLOURS = {FULL_ROPE: "#4C72B0", FULL_NOPE: "#222222", WINDOWED: "#8FB3DE", CHUNKED: "#DD8452",
                LINEAR: "#8172B3", DENSE: "#C8E6C9", MIXTURE: "#55A868"}


def _attention_spans(config: ModelConfig) -> list[str]:
    """Each layer's attention span, from the per-layer lists the engine read (or, for Gemma 3, from ``layer_types``
    or its 5 : 1 ``sliding_window_pattern``, checked against the engine's counts of windowed and full layers)."""
    L, lists = config["L"], config.lists
    for key, marked, other in (("types", LINEAR, "full"), ("chunks", CHUNKED, "full"), ("windows", WINDOWED, "full"),
                               ("local", WINDOWED, "full")):
        if key in lists:  # Qwen3-Next's types: 1 linear, 2 full; the others: non-zero where the span is limited
            return [(other if v == 2 else marked) if key == "types" else (marked if v else other) for v in lists[key]]
    full, windowed, chunked = lists.get("cache", (L, 0, 0))
    if not windowed and not chunked:
        return ["full"] * L
    raw = {k.removeprefix("text_config."): v for k, v in config.raw.items()}
    types = raw.get("layer_types")
    if types is None:  # Gemma3TextConfig: windowed unless (i + 1) is a multiple of the pattern (6 by default)
        pattern = raw.get("sliding_window_pattern", 6)
        types = ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(L)]
    spans = [{"full_attention": "full", "sliding_attention": WINDOWED, "chunked_attention": CHUNKED}[t] for t in types]
    if (spans.count("full"), spans.count(WINDOWED), spans.count(CHUNKED)) != (full, windowed, chunked):
        raise ValueError(f"{config.name}: the layer types do not give the engine's {full} full, {windowed} windowed "
                         f"and {chunked} chunked layers")
    return spans


def layer_kinds(config: ModelConfig) -> dict[str, list[str]]:
    """Each layer's kind, in order: ``{"attention": [...], "feed-forward": [...]}``.

    Introduced in ``11_todays_models``. The attention's span and positions come from what the engine read from the
    config (``layer_types``, the windows, the chunks, ``no_rope_layers``): ``"full, RoPE"``, ``"full, NoPE"``,
    ``"windowed, RoPE"``, ``"chunked, RoPE"`` or ``"linear"`` (a recurrent state, no keys kept). The feed-forward is
    ``"mixture of experts"`` where the engine's table holds experts in that layer, else ``"dense"`` (a vision tower's
    layers are left out).
    """
    rope = config.lists.get("rope", (1,) * config["L"])
    attention = [span if span in (LINEAR, WINDOWED, CHUNKED) or r else FULL_NOPE
                 for span, r in zip(_attention_spans(config), rope)]
    attention = [FULL_ROPE if a == "full" else a for a in attention]
    experts = {p.layer for p in param_table(config) if p.component != VISION and ".experts." in p.name}
    return {"attention": attention, "feed-forward": [MIXTURE if i in experts else DENSE for i in range(config["L"])]}


def layer_strips(rows: Mapping[str, Sequence[str]], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """One strip per row, one cell per layer coloured by its kind (bottom layer on the left), with a legend.

    Introduced in ``11_todays_models``. ``rows`` maps a caption ("Scout: attention") to one kind per layer, as
    :func:`layer_kinds` gives them; each strip is labelled with how many layers of each kind it holds.
    """
    longest = max(len(kinds) for kinds in rows.values())
    ax = ax or plt.subplots(figsize=(12.5, 0.75 * len(rows) + 1.3))[1]
    seen: list[str] = []
    for y, (caption, kinds) in enumerate(list(rows.items())[::-1]):
        for i, kind in enumerate(kinds):
            ax.add_patch(Rectangle((i, y + 0.12), 0.92, 0.76, facecolor=KIND_COLOURS.get(kind, "#999999"),
                                   edgecolor="none"))
            if kind not in seen:
                seen.append(kind)
        counts = " · ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
        ax.text(-0.8, y + 0.5, caption, ha="right", va="center", fontsize=10)
        ax.text(len(kinds) + 0.6, y + 0.5, counts, ha="left", va="center", fontsize=9)
    ax.set_xlim(-0.5, longest + 0.5)
    ax.set_ylim(0, len(rows))
    ax.set_yticks([])
    ax.set_xlabel("layer (0 = nearest the input)")
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.legend(handles=[Patch(facecolor=KIND_COLOURS.get(k, "#999999"), label=k) for k in seen], loc="upper center",
              bbox_to_anchor=(0.5, -0.32 if len(rows) < 3 else -0.18), ncol=len(seen), fontsize=9, frameon=False)
    ax.set_title(title, fontsize=11)
    return ax


def patch_grids(towers: Mapping[str, tuple[int, int, int]], title: str, axes: Sequence[plt.Axes] | None = None
                ) -> list[plt.Axes]:
    """One panel per vision tower: a square image of ``side`` pixels cut into ``patch × patch`` patches (thin lines),
    and the blocks of ``merge × merge`` patches that become one token of the language model (thick lines).

    Introduced in ``11_todays_models``. ``towers`` maps a caption to ``(side, patch, merge)``: Gemma 3 pools 4 × 4
    patches into a token, Llama 4's pixel shuffle and Qwen2.5-VL's merger fold 2 × 2. One patch and one token are
    shaded, and each panel says how many of each the image makes.
    """
    if axes is None:
        _, axes = plt.subplots(1, len(towers), figsize=(4.2 * len(towers), 4.6))
    axes = list(axes) if len(towers) > 1 else [axes[0] if isinstance(axes, (list, tuple)) else axes]
    for ax, (caption, (side, patch, merge)) in zip(axes, towers.items()):
        n = side // patch
        if n * patch != side or n % merge:
            raise ValueError(f"{caption}: {side} pixels are not whole patches of {patch} in blocks of {merge}")
        ax.add_patch(Rectangle((0, 0), side, side, facecolor="#F4F4F4", edgecolor="#222222", linewidth=1.2))
        for i in range(1, n):
            thick = i % merge == 0
            for line in (ax.axvline, ax.axhline):
                line(i * patch, color="#4C72B0" if thick else "#BBBBBB", linewidth=1.1 if thick else 0.3)
        ax.add_patch(Rectangle((0, side - merge * patch), merge * patch, merge * patch, facecolor="#DD8452", alpha=0.5))
        ax.add_patch(Rectangle((0, side - patch), patch, patch, facecolor="#C44E52"))
        tokens = n // merge
        ax.set_title(f"{caption}\n{side} px, {patch}-px patches: {n} × {n} = {n * n:,} patches\n"
                     f"{merge} × {merge} patches a token: {tokens} × {tokens} = {tokens * tokens:,} tokens", fontsize=9.5)
        ax.set_xlim(-2, side + 2)
        ax.set_ylim(-2, side + 2)
        ax.set_aspect("equal")
        ax.axis("off")
    axes[0].figure.suptitle(title, fontsize=11)
    return axes


_STATED = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|M|billion|million)$")


def count_bridge(steps: Sequence[tuple[str, int]], stated: str, title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """A card's figure reached step by step: the first step is a count, each next one adds (or takes away) a part,
    and the last bar is where they arrive, against the band of counts that round to ``stated``.

    Introduced in ``11_todays_models``. ``steps`` are ``(label, parameters)``: the model transformers builds, then
    what a convention adds or leaves out (an MTP layer, a vision tower, the vocabulary tables); ``stated`` is the
    card's figure as printed ("355B"), whose rounding band (354.5B to 355.5B) is shaded.
    """
    match = _STATED.match(stated.strip())
    if not match:
        raise ValueError(f"stated: {stated!r} is not a figure like '355B' or '109B'")
    unit = 10**9 if match.group(2) in ("B", "billion") else 10**6
    decimals = len(match.group(1).partition(".")[2])
    centre, half = float(match.group(1)) * unit, 0.5 * unit / 10**decimals
    ax = ax or plt.subplots(figsize=(11, 0.55 * len(steps) + 1.6))[1]
    running, rows = 0, []
    for i, (label, n) in enumerate(steps):
        start, running = (0, n) if i == 0 else (running, running + n)
        rows.append((label, start, running, n))
    rows.append(("arrives at", 0, running, running))
    points = [r[2] for r in rows] + [r[1] for r in rows[1:-1]] + [centre - half, centre + half]
    low, high = min(points), max(points)
    left = low - 0.6 * (high - low)  # the axis starts near the counts: the first and last bars are cut on the left
    for y, (label, start, end, n) in enumerate(rows[::-1]):
        first, last = y == len(rows) - 1, y == 0
        colour = "#4C72B0" if first or last else ("#55A868" if n >= 0 else "#C44E52")
        lo, hi = (left, end) if first or last else sorted((start, end))
        ax.barh(y, hi - lo, left=lo, color=colour, height=0.6)
        sign = "" if first or last else ("+" if n >= 0 else "−")
        ax.text(max(start, end), y, f"  {sign}{abs(n):,}", va="center", fontsize=9)
        ax.text(left, y + 0.42, f" {label}", va="bottom", fontsize=9)
    ax.axvspan(centre - half, centre + half, color="#DDDDDD", zorder=0)
    ax.text(centre, -0.75, f"rounds to {stated}", ha="center", va="center", fontsize=9)
    ax.set_yticks([])
    ax.set_xlim(left, high + 0.45 * (high - left))
    ax.set_ylim(-1.05, len(rows) - 0.25)
    ax.xaxis.set_major_formatter(lambda x, _: f"{x / unit:g}{match.group(2)[0]}")
    ax.set_xlabel("parameters (the axis does not start at 0)")
    ax.set_title(title, fontsize=11)
    return ax
