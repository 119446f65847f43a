"""Pictures introduced in ``10_budgets``: training state per GPU by ZeRO stage, the decode ceiling, the rules of thumb."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt

__all__: list[str] = ["zero_stage_bars", "decode_ceiling_plot", "rule_ratio_bars"]

_PART_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#8172B3", "#C44E52", "#8C8C8C")


def zero_stage_bars(stages: Mapping[str, Mapping[str, int]], limits: Mapping[str, int], title: str,
                    ax: plt.Axes | None = None) -> plt.Axes:
    """Stacked bars of training-state bytes per GPU (in GiB, 2³⁰ bytes), one bar per ZeRO stage, one segment per part.

    Introduced in ``10_budgets``. ``stages`` maps a bar label to {part: bytes} (as
    :func:`helpers.budget.sharded_state` gives them); ``limits`` draws a dashed line per GPU memory size
    (the bytes the driver reports). Totals are written on top of the bars.
    """
    ax = ax or plt.subplots()[1]
    parts: list[str] = []
    for segments in stages.values():
        parts += [p for p in segments if p not in parts]
    names = list(stages)
    bottoms = [0.0] * len(names)
    for i, part in enumerate(parts):
        values = [stages[n].get(part, 0) / 2**30 for n in names]
        ax.bar(names, values, bottom=bottoms, color=_PART_COLOURS[i % len(_PART_COLOURS)], width=0.6,
               label=part, edgecolor="white")
        bottoms = [b + v for b, v in zip(bottoms, values)]
    for x, whole in enumerate(bottoms):
        ax.text(x, whole, f"{whole:,.1f} GiB", ha="center", va="bottom", fontsize=9)
    for label, size in limits.items():
        ax.axhline(size / 2**30, color="#444444", linestyle="--", linewidth=1)
        ax.text(len(names) - 0.5, size / 2**30, f" {label} ", ha="right", va="bottom", fontsize=8, color="#444444")
    ax.set_ylim(0, max([*bottoms, *(v / 2**30 for v in limits.values())]) * 1.15)
    ax.set_ylabel("GiB per GPU (2³⁰ bytes)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.set_title(title)
    return ax


def decode_ceiling_plot(batches: Sequence[int], ceilings: Mapping[str, Sequence[float]], crossover: int,
                        title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """Decode tokens/s ceilings against the batch size (log-log), with the batch where the KV cache outweighs the weights.

    Introduced in ``10_budgets``. ``ceilings`` maps a curve's label to its tokens/s per batch size (upper
    bounds from :class:`helpers.budget.Decode`); a dotted vertical line marks ``crossover``.
    """
    ax = ax or plt.subplots()[1]
    styles = ("-", "--", ":", "-.")
    for i, (label, values) in enumerate(ceilings.items()):
        ax.plot(batches, values, styles[i % len(styles)], color=_PART_COLOURS[i % len(_PART_COLOURS)],
                linewidth=2, label=label)
    ax.axvline(crossover, color="#C44E52", linestyle=":", linewidth=1.5)
    ax.text(crossover, 0.03, f" KV cache > weights from B = {crossover}", color="#C44E52", fontsize=9, va="bottom",
            transform=ax.get_xaxis_transform())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch B (sequences decoded together)")
    ax.set_ylabel("tokens/s, upper bound")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.set_title(title)
    return ax


def rule_ratio_bars(ratios: Mapping[str, float], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """Horizontal bars of each rule's FLOPs per token over the exact count, a line at 1 (the count).

    Introduced in ``10_budgets``.
    """
    ax = ax or plt.subplots()[1]
    names = list(ratios)[::-1]
    values = [ratios[n] for n in names]
    colours = ["#55A868" if abs(v - 1) < 1e-12 else ("#DD8452" if v > 1 else "#4C72B0") for v in values]
    ax.barh(names, values, color=colours)
    for y, v in enumerate(values):
        ax.text(v, y, f"  {v:.3f}", va="center", fontsize=9)
    ax.axvline(1.0, color="#444444", linewidth=1)
    ax.set_xlim(0, max(values) * 1.2)
    ax.set_xlabel("FLOPs per token ÷ exact count")
    ax.set_title(title)
    return ax
