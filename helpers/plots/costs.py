"""Pictures introduced in ``08_flops_and_memory``: where the FLOPs of a layer go, and where the bytes go."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from ..params import ATTENTION, Param
from .charts import COLOURS

__all__: list[str] = ["layer_flop_bars", "activation_bars"]

_NO_PARAMETERS = "#8C8C8C"  # the S×S matmuls: attention's, but without a single parameter


def _short(name: str) -> str:
    """``encoder.layer.0.attention.self.query.weight`` -> ``attention.self.query``: the module inside its layer."""
    parts = name.split(".")[:-1]
    digits = [i for i, part in enumerate(parts) if part.isdigit()]
    return ".".join(parts[digits[0] + 1:]) if digits else ".".join(parts)


def layer_flop_bars(params: Sequence[Param], tokens: int, scores: Mapping[str, int], ax: plt.Axes | None = None,
                    title: str | None = None, label: Mapping[str, str] | None = None) -> plt.Axes:
    """One layer's forward FLOPs, one bar per matrix multiply in the order the layer runs them, to scale.

    ``params`` are one layer's rows of the parameter table: each 2-D weight of ``count`` values, applied to
    ``tokens`` tokens (B·S), costs ``2·tokens·count`` FLOPs; its bar is labelled with its name and stored shape,
    and ends with its exact FLOPs and share of the layer. Vectors
    (biases, norm gains) cost no matmul and get no bar. ``scores`` holds the attention matmuls that have no
    parameters (label -> FLOPs, e.g. QKᵀ and softmax·V), drawn grey and hatched before the attention's output
    projection (the last attention weight of the table). ``label`` renames modules (default: the module's name
    inside its layer). Colours follow the component. Introduced in ``08_flops_and_memory``.
    """
    ax = ax or plt.subplots()[1]
    weights = [p for p in params if len(p.shape) == 2]
    if not weights:
        raise ValueError("no weight matrix among the rows given")
    attention = [i for i, p in enumerate(weights) if p.component == ATTENTION]
    cut = attention[-1] if attention else len(weights)
    bars: list[tuple[str, int, str, bool]] = []  # label, FLOPs, colour, parameter-free
    free = [(f"{name}\nno parameters", value, _NO_PARAMETERS, True) for name, value in scores.items()]
    for i, p in enumerate(weights):
        if i == cut:
            bars += free
        shape = "×".join(f"{n:,}" for n in p.shape)
        name = (label or {}).get(_short(p.name), _short(p.name))
        bars.append((f"{name}\n[{shape}]", 2 * tokens * p.count, COLOURS.get(p.component, "#999999"), False))
    if cut == len(weights):
        bars += free
    whole = sum(b[1] for b in bars)
    largest = max(b[1] for b in bars)
    ys = list(range(len(bars)))[::-1]  # first matmul on top
    for y, (_, value, colour, hatched) in zip(ys, bars):
        ax.barh(y, value, color=colour, edgecolor="white", hatch="//" if hatched else None, height=0.7)
        ax.text(value + 0.02 * largest, y, f"{value:,} ({100 * value / whole:.1f}%)", va="center", fontsize=8.5)
    ax.set_yticks(ys, [b[0] for b in bars], fontsize=8.5)
    ax.set_xlim(0, 1.9 * largest)
    ax.set_xticks([])
    ax.grid(False)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(title or f"one layer, {tokens:,} tokens: {whole:,} forward FLOPs", fontsize=10)
    return ax


def activation_bars(strategies: Mapping[str, Mapping[str, int]], title: str, ax: plt.Axes | None = None
                    ) -> plt.Axes:
    """Stored activations under each recomputation strategy: one horizontal stacked bar per strategy (GiB).

    ``strategies`` maps a strategy to its parts (name -> bytes); a part whose name contains "S×S" is drawn grey
    and hatched (the attention matrices, quadratic in S). Each bar ends with its total.
    Introduced in ``08_flops_and_memory``.
    """
    ax = ax or plt.subplots()[1]
    palette = ("#4C72B0", _NO_PARAMETERS, "#55A868", "#DD8452")
    parts: list[str] = []
    for segments in strategies.values():
        parts += [p for p in segments if p not in parts]
    names = list(strategies)
    ys = list(range(len(names)))[::-1]
    lefts = [0.0] * len(names)
    for i, part in enumerate(parts):
        values = [strategies[n].get(part, 0) / 2**30 for n in names]
        quadratic = "S×S" in part
        ax.barh(ys, values, left=lefts, height=0.6, label=part, edgecolor="white",
                color=_NO_PARAMETERS if quadratic else palette[i % len(palette)], hatch="//" if quadratic else None)
        lefts = [a + b for a, b in zip(lefts, values)]
    for y, whole in zip(ys, lefts):
        ax.text(whole, y, f"  {whole:,.2f} GiB", va="center", fontsize=9)
    ax.set_yticks(ys, names, fontsize=9)
    ax.set_xlim(0, max(lefts) * 1.25)
    ax.set_xlabel("GiB (2³⁰ bytes)")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title, fontsize=10)
    return ax
