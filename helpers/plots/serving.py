"""Pictures introduced in ``12_finetune_quantize_serve``: where the bytes of a fine-tuning run go, part by part
(:class:`helpers.finetune.Finetune`), and how many sequences a vLLM deployment holds against its context length
(:class:`helpers.serve.Serving`), both drawn from the engine's own figures."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import matplotlib.pyplot as plt

from ..config import ConfigError
from ..finetune import Finetune
from ..flops import max_seq_len
from ..serve import Serving

__all__: list[str] = ["finetune_parts", "finetune_bars", "max_sequences_series", "max_sequences_curves"]

# the parts of a run, in the order the engine's report lists them (helpers.finetune.KEYS), and their labels
PARTS = (("frozen_weight_bytes", "frozen weights"), ("trained_weight_bytes", "trained weights"),
         ("adapter_bytes", "adapters"), ("gradient_bytes", "gradients"), ("optimizer_bytes", "optimizer state"),
         ("activation_bytes", "activations"))
_PART_COLOURS = ("#4C72B0", "#8172B3", "#55A868", "#DD8452", "#C44E52", "#937860")
_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#222222", "#DA8BC3", "#937860")
_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (9, 3)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)))


def finetune_parts(run: Finetune) -> dict[str, int]:
    """A run's bytes by part (frozen weights, trained weights, adapters, gradients, optimizer state, activations),
    as the engine's :class:`~helpers.finetune.Finetune` gives them; they add up to its ``total_bytes``.

    Introduced in ``12_finetune_quantize_serve``.
    """
    parts = {label: getattr(run, key) for key, label in PARTS}
    assert sum(parts.values()) == run.total_bytes
    return parts


def finetune_bars(runs: Mapping[str, Finetune], title: str, limit: int | None = None, limit_label: str = "",
                  ax: plt.Axes | None = None, legend: bool = True) -> plt.Axes:
    """One horizontal bar per run, stacked by part (:func:`finetune_parts`), in GB (10⁹ bytes); ``limit`` draws a
    GPU's memory as a vertical line.

    Introduced in ``12_finetune_quantize_serve``. A part a run does not hold (LoRA's trained weights) is a zero-width
    segment; each bar ends with its total. ``legend=False`` leaves the parts' legend to another panel.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 1.2 + 0.9 * len(runs)))
    labels = list(runs)
    parts = {label: finetune_parts(run) for label, run in runs.items()}
    left = [0.0] * len(labels)
    for (_, name), colour in zip(PARTS, _PART_COLOURS):
        widths = [parts[label][name] / 1e9 for label in labels]
        ax.barh(labels, widths, left=left, color=colour, label=name, edgecolor="white", linewidth=0.6)
        left = [a + b for a, b in zip(left, widths)]
    for y, label in enumerate(labels):
        total = runs[label].total_bytes / 1e9
        ax.text(total, y, f"  {total:,.1f} GB", va="center", fontsize=10)
    if limit is not None:
        ax.axvline(limit / 1e9, color="#222222", linestyle="--", linewidth=1.5)
        ax.text(limit / 1e9, -0.45, f" {limit_label}", va="top", fontsize=10)
    ax.invert_yaxis()
    ax.set_xlabel("bytes the run holds, GB (10⁹ bytes)")
    ax.set_xlim(0, max(r.total_bytes for r in runs.values()) / 1e9 * 1.18)
    ax.set_title(title)
    if legend:
        ax.legend(loc="lower right", fontsize=9, ncol=2)
    return ax


def max_sequences_series(deployments: Mapping[str, Callable[[int], Serving]], lengths: Sequence[int]
                         ) -> dict[str, list[int | None]]:
    """``max_sequences`` of each deployment at each ``--max-model-len`` of ``lengths``: ``deployments`` maps a label
    to a function of the length that returns the engine's :class:`~helpers.serve.Serving` (``serve(..., max_model_len=S)``).

    Introduced in ``12_finetune_quantize_serve``. A length beyond the model's context is None: beyond its position
    table (``serve`` refuses it) or its ``max_position_embeddings`` (what ``serve`` takes by default; a rotary model
    would run past it, untrained).
    """
    series: dict[str, list[int | None]] = {}
    for label, deploy in deployments.items():
        values: list[int | None] = []
        for S in lengths:
            try:
                plan = deploy(S)
            except ConfigError:
                values.append(None)
                continue
            context = max_seq_len(plan.config) or plan.config.sizes.get("P")
            values.append(None if context is not None and S > context else plan.max_sequences)
        series[label] = values
    return series


def max_sequences_curves(deployments: Mapping[str, Callable[[int], Serving]], lengths: Sequence[int], title: str,
                         ax: plt.Axes | None = None) -> plt.Axes:
    """Sequences held at once against ``--max-model-len`` (log axes), one line per deployment
    (:func:`max_sequences_series`), stopping at each model's context.

    Introduced in ``12_finetune_quantize_serve``. The KV pool is fixed by the memory; a full-attention model's line
    falls as 1/S, a windowed model's more slowly.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 4.8))
    for i, (label, values) in enumerate(max_sequences_series(deployments, lengths).items()):
        points = [(S, v) for S, v in zip(lengths, values) if v]
        ax.plot([S for S, _ in points], [v for _, v in points], label=label, color=_COLOURS[i % len(_COLOURS)],
                linestyle=_STYLES[i % len(_STYLES)], linewidth=2, marker="o", markersize=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("--max-model-len (tokens)")
    ax.set_ylabel("max_sequences (sequences held at once)")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=9)
    return ax
