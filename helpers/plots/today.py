"""Pictures introduced in ``11_todays_models``: the decode cache of today's attentions against the sequence length,
drawn from the engine's own bytes (:func:`helpers.memory.kv_cache_bytes`), and layers side by side, box by box, drawn
from the engine's rows."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from ..config import ModelConfig
from ..memory import kv_cache_bytes
from ..params import Param
from .diagrams import block_stack, blocks_from

__all__: list[str] = ["kv_cache_series", "kv_cache_curves", "layer_columns"]

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
