"""Pictures introduced in ``12_finetune_quantize_serve``: where the bytes of a fine-tuning run go, part by part
(:class:`helpers.finetune.Finetune`), one GPU's memory and its paged KV-cache pool, and how many sequences a vLLM
deployment holds against its context length (:class:`helpers.serve.Serving`), all drawn from the engine's own figures."""

from __future__ import annotations

import random
from typing import Callable, Mapping, Sequence

import matplotlib.pyplot as plt

from ..config import ConfigError
from ..finetune import Finetune
from ..flops import max_seq_len
from ..serve import Serving

__all__: list[str] = ["finetune_parts", "finetune_bars", "paged_pool", "max_sequences_series", "max_sequences_curves"]
GIB = 2**30

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
    """One horizontal bar per run, stacked by part (:func:`finetune_parts`), in GiB (2³⁰ bytes); ``limit`` draws a
    GPU's memory (bytes) as a vertical line.

    Introduced in ``12_finetune_quantize_serve``. A part a run does not hold (LoRA's trained weights) is a zero-width
    segment; each bar ends with its total. ``legend=False`` leaves the parts' legend to another panel.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 1.2 + 0.9 * len(runs)))
    labels = list(runs)
    parts = {label: finetune_parts(run) for label, run in runs.items()}
    left = [0.0] * len(labels)
    for (_, name), colour in zip(PARTS, _PART_COLOURS):
        widths = [parts[label][name] / GIB for label in labels]
        ax.barh(labels, widths, left=left, color=colour, label=name, edgecolor="white", linewidth=0.6)
        left = [a + b for a, b in zip(left, widths)]
    for y, label in enumerate(labels):
        total = runs[label].total_bytes / GIB
        ax.annotate(f"{total:,.2f} GiB", (total, y), xytext=(5, 0), textcoords="offset points", va="center",
                    fontsize=10, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
    if limit is not None:
        ax.axvline(limit / GIB, color="#222222", linestyle="--", linewidth=1.5)
        ax.text(limit / GIB, -0.45, f" {limit_label}", va="top", fontsize=10)
    ax.invert_yaxis()
    ax.set_xlabel("bytes the run holds, GiB (2³⁰ bytes)")
    ax.set_xlim(0, max(r.total_bytes for r in runs.values()) / GIB * 1.18)
    ax.set_title(title)
    if legend:
        ax.legend(loc="lower right", fontsize=9, ncol=2)
    return ax


def paged_pool(plan: Serving, title: str, columns: int = 256, shown: int = 0) -> plt.Figure:
    """One GPU of a vLLM deployment (:func:`helpers.serve.serve`): its memory as one bar (the weight shard, the stated
    reserve, the pool of KV blocks, what is left under one block, and what ``U`` leaves out of the memory CUDA
    reports), then the pool itself, one cell a block, ``columns`` to a row.

    Introduced in ``12_finetune_quantize_serve``. The pool holds ``max_sequences`` sequences of ``max_model_len``
    tokens, ``blocks_per_sequence`` blocks each; the cells are handed out as the sequences grow together (each of them
    takes its next block in turn, so a sequence's blocks are scattered through the pool, found through its block
    table); sequence ``shown`` is drawn in colour, the others in grey, free blocks white. The counts are the engine's;
    which cell a sequence owns is one possible order.
    """
    if not plan.fits or not plan.num_blocks or plan.cache is None:
        raise ValueError(f"{plan.config.name}: the weights leave no KV pool to draw")
    fig, (bar, grid) = plt.subplots(2, 1, figsize=(12, 5.4), gridspec_kw={"height_ratios": [1, 3.2]})
    pool, budget = plan.num_blocks * plan.block_bytes, plan.budget
    parts = [("weight shard", plan.weights, "#4C72B0"), ("reserve", plan.reserve, "#937860"),
             (f"KV pool: {plan.num_blocks:,} blocks", pool, "#55A868"),
             ("", plan.available - pool, "#55A868"), ("1 − U", plan.gpu.cuda_memory - budget, "#DDDDDD")]
    left, total = 0.0, plan.gpu.cuda_memory / GIB
    for label, size, colour in parts:
        width = size / GIB
        bar.barh([0], [width], left=left, color=colour, edgecolor="white", linewidth=0.8,
                 hatch="//" if label == "1 − U" else None)
        if label and width > 0.08 * total:
            bar.text(left + width / 2, 0, f"{label}\n{width:,.2f} GiB", ha="center", va="center", fontsize=9,
                     color="#222222" if colour == "#DDDDDD" else "white")
        elif label:  # too narrow for its label: above the bar
            bar.text(left + width / 2, 0.45, f"{label} {width:,.2f} GiB", ha="center", va="bottom", fontsize=9)
        left += width
    bar.set_xlim(0, total)
    bar.set_ylim(-0.5, 1.0)
    bar.set_yticks([])
    bar.set_xlabel(f"one GPU's memory as CUDA reports it, GiB ({plan.gpu.key}; U = {float(plan.utilization):g})")
    bar.set_title(title)
    sequences, per = plan.max_sequences or 0, plan.blocks_per_sequence
    rows = -(-plan.num_blocks // columns)
    owner: list[int] = []  # the sequence each block of the pool goes to, in the order the blocks are handed out
    turns = random.Random(0)  # the order in which the sequences ask, each round: one possible order, always the same
    for _ in range(per):
        order = list(range(sequences))
        turns.shuffle(order)
        owner += order
    cells = [[1.0] * columns for _ in range(rows)]  # 1: free (white), 0.6: another sequence's (grey)
    for block in range(len(owner)):
        cells[block // columns][block % columns] = 0.6
    for block in range(plan.num_blocks, rows * columns):  # past the pool's last block: not drawn
        cells[block // columns][block % columns] = float("nan")
    grid.imshow(cells, cmap="gray", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    mine = [block for block, sequence in enumerate(owner) if sequence == shown]
    grid.scatter([b % columns for b in mine], [b // columns for b in mine], s=7, color="#C44E52", marker="s",
                 label=f"sequence {shown}: its {len(mine):,} blocks, listed in its block table")
    grid.set_xticks([])
    grid.set_yticks([])
    free = plan.num_blocks - sequences * per
    grid.set_xlabel(f"the pool: {plan.num_blocks:,} blocks of {plan.block_size} tokens ({plan.block_bytes:,} bytes); "
                    f"{sequences:,} sequences × {per:,} blocks; {free:,} free")
    grid.legend(loc="upper right", fontsize=9, framealpha=0.9)
    fig.tight_layout()
    return fig


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
