"""Pictures introduced in ``13_will_it_fit``: a training step's memory over time (:mod:`helpers.simulate`), each
phase's peak part by part and what autograd saves in one layer (:mod:`helpers.peak`), the engine's answers against
the GPU's measurements, and the peak against the sequence length beside a GPU's memory, all drawn from the engine's
own figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from ..peak import BACKWARD, FORWARD, STEP, Peak, Step, build_tape

if TYPE_CHECKING:
    from ..simulate import Simulated

__all__: list[str] = ["step_timeline", "phase_bars", "Saved", "saved_in_layer", "saved_by_kind", "layer_saved_bars",
                      "measured_ratios", "peak_curves"]

GiB = 2**30  # memory as torch prints it
MiB = 2**20
PHASES = (FORWARD, BACKWARD, STEP)
_PHASE_COLOURS = {FORWARD: "#4C72B0", BACKWARD: "#DD8452", STEP: "#55A868"}
# the parts of a phase's peak (helpers.peak's names), each with one colour in every picture
_PART_COLOURS = {
    "weights": "#4C72B0", "adapters": "#55A868", "gradients": "#DD8452", "optimizer state": "#C44E52",
    "buffers": "#8C8C8C", "inputs": "#CCB974", "activations and temporaries": "#937860",
    "optimizer temporaries": "#8172B3", "cuBLAS workspaces": "#222222", "cuBLAS workspace": "#222222",
    "KV cache": "#DA8BC3", "cache and activations": "#E8B4D8",
    "cache copy (one layer's keys, one token longer)": "#8172B3", "ids, mask and logits": "#937860",
}
_OTHER = ("#64B5CD", "#8C613C", "#B47CC7", "#4C4C4C")
_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#222222", "#DA8BC3", "#937860")

# what a layer saves for the backward pass, by kind (the order of the pictures and tables)
NORMS = "norms: fp32 input, 1/rms"
PEFT = "peft: a copy of each adapted layer's input"
LORA_A = "LoRA: A's outputs (r wide)"
LINEAR = "linear layers' inputs"
COPIES = "autocast's 16-bit weight copies"
KERNEL = "attention: q, k, v, output, log-sum-exp"
SCORES = "eager attention: S × S probabilities"
MLP = "feed-forward: gate, up, activation"
DROPOUT = "dropout masks"
OTHER = "other"
KINDS = (NORMS, PEFT, LORA_A, LINEAR, COPIES, KERNEL, SCORES, MLP, DROPOUT, OTHER)
_KIND_COLOURS = dict(zip(KINDS, ("#C44E52", "#55A868", "#8C613C", "#4C72B0", "#8172B3", "#DD8452", "#DA8BC3",
                                 "#937860", "#CCB974", "#8C8C8C")))


def step_timeline(runs: Mapping[str, "Simulated"], title: str, measured: Mapping[str, int] | None = None
                  ) -> list[plt.Axes]:
    """One panel per simulated run (:func:`helpers.simulate.simulate_finetune`): the bytes live after every allocation
    of its two steps, the cuBLAS workspaces added (what ``torch.cuda.memory_allocated()`` would read), each phase
    shaded, each phase's peak in the measured (second) step marked; ``measured`` draws a GPU's
    ``max_memory_allocated()`` for a run as a dashed line.

    Introduced in ``13_will_it_fit``. The first step is drawn lighter: AdamW makes its moments there, so its optimizer
    step differs from every later one; the second is the step the GPU's figure and the engine describe.
    """
    measured = measured or {}
    fig, axes = plt.subplots(len(runs), 1, figsize=(12, 2.3 * len(runs) + 0.5), squeeze=False)
    for ax, (label, sim) in zip(axes[:, 0], runs.items()):
        points = [(phase, live + sim.workspace) for phase, live in sim.timeline if phase != "build"]
        spans: list[tuple[str, int, int]] = []
        for i, (phase, _) in enumerate(points):
            if not spans or spans[-1][0] != phase:
                spans.append((phase, i, i))
            spans[-1] = (spans[-1][0], spans[-1][1], i)
        ax.plot(range(len(points)), [v / GiB for _, v in points], color="#222222", linewidth=1.2)
        top = max(v for _, v in points)
        for phase, start, end in spans:
            base, _, step = phase.partition(" (")
            ax.axvspan(start - 0.5, end + 0.5, color=_PHASE_COLOURS[base], alpha=0.12 if step else 0.3, linewidth=0)
        handles = []
        for phase in PHASES:
            inside = [(i, v) for i, (p, v) in enumerate(points) if p == phase]
            i, v = max(inside, key=lambda iv: iv[1])
            ax.plot([i], [v / GiB], marker="o", color=_PHASE_COLOURS[phase], markersize=8, markeredgecolor="#222222",
                    zorder=3)
            handles.append(plt.Line2D([], [], marker="o", linestyle="", color=_PHASE_COLOURS[phase],
                                      markeredgecolor="#222222", label=f"{phase}: peak {v / GiB:.2f} GiB"))
        if label in measured:
            ax.axhline(measured[label] / GiB, color="#C44E52", linestyle="--", linewidth=1.3)
            handles.append(plt.Line2D([], [], color="#C44E52", linestyle="--",
                                      label=f"the GPU: max_memory_allocated() {measured[label] / GiB:.2f} GiB"))
        first_step = next(i for i, (p, _) in enumerate(points) if p == FORWARD)
        for x, text in ((0, "step 1"), (first_step, "step 2 (measured)")):
            ax.text(x + len(points) / 150, top / GiB * 1.12, text, ha="left", va="top", fontsize=10)
        ax.set_xlim(-0.5, len(points) - 0.5)
        ax.set_ylim(0, top / GiB * 1.16)
        ax.set_ylabel("live, GiB")
        ax.set_title(label, fontsize=11, loc="left")
        ax.legend(handles=handles, loc="lower right", fontsize=9, ncol=2)
        ax.grid(True, axis="y", alpha=0.3)
        ax.grid(False, axis="x")
    axes[-1, 0].set_xlabel("allocations, in the order torch makes them")
    phases = [Patch(color=_PHASE_COLOURS[p], alpha=0.4, label=p) for p in PHASES]
    fig.legend(handles=phases, loc="upper right", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(title, x=0.01, ha="left", fontsize=12)
    fig.tight_layout()
    return list(axes[:, 0])


def _part_colour(part: str, seen: dict[str, str]) -> str:
    if part in _PART_COLOURS:
        return _PART_COLOURS[part]
    return seen.setdefault(part, _OTHER[len(seen) % len(_OTHER)])


def phase_bars(peaks: Mapping[str, Peak], title: str, limits: Mapping[str, int] | None = None) -> list[plt.Axes]:
    """One panel per run: a horizontal bar for each phase of its :class:`~helpers.peak.Peak` (a training step's
    forward, backward and optimizer step, or ``generate``'s prefill and decode), stacked by part,
    its total at its end, the phase that peaks in bold; ``limits`` draws GPUs' memory as vertical lines. Memory in GiB,
    as torch prints it.

    Introduced in ``13_will_it_fit``. The parts are the engine's own (``Peak.phases``): what persists between steps
    (weights, gradients, optimizer state ...), then what the phase adds (activations and temporaries, the optimizer's
    temporaries, cuBLAS's workspaces).
    """
    limits = limits or {}
    rows = max(len(p.phases) for p in peaks.values())
    fig, axes = plt.subplots(len(peaks), 1, figsize=(12, (0.36 * rows + 0.68) * len(peaks) + 0.85), squeeze=False,
                             sharex=True)
    seen: dict[str, str] = {}
    parts = list(dict.fromkeys(part for p in peaks.values() for phase in p.phases.values() for part in phase))
    widest = max(max(p.phase_totals().values()) for p in peaks.values())
    right = max([widest, *limits.values()]) / GiB * 1.16
    for ax, (label, peak) in zip(axes[:, 0], peaks.items()):
        names = list(peak.phases)
        for y, name in enumerate(names):
            left = 0.0
            for part in parts:
                width = peak.phases[name].get(part, 0) / GiB
                ax.barh(y, width, left=left, color=_part_colour(part, seen), edgecolor="white", linewidth=0.5)
                left += width
            ax.text(left, y, f"  {left:,.2f} GiB", va="center", fontsize=10,
                    fontweight="bold" if name == peak.peak_phase else "normal")
        ax.set_yticks(range(len(names)), names)
        for tick, name in zip(ax.get_yticklabels(), names):
            tick.set_fontweight("bold" if name == peak.peak_phase else "normal")
        for i, (gpu, memory) in enumerate(limits.items()):
            ax.axvline(memory / GiB, color="#222222", linestyle=_dashes(i), linewidth=1.2)
            ax.text(memory / GiB, -0.6, f" {gpu}", va="bottom", fontsize=9)
        ax.invert_yaxis()
        ax.set_xlim(0, right)
        ax.set_title(label, fontsize=11, loc="left")
        ax.grid(True, axis="x", alpha=0.3)
        ax.grid(False, axis="y")
    axes[-1, 0].set_xlabel("bytes live at the phase's peak, GiB")
    handles = [Patch(color=_part_colour(part, seen), label=part) for part in parts]
    fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), fontsize=9, frameon=False,
               bbox_to_anchor=(0.5, -0.01))
    fig.suptitle(title, x=0.01, ha="left", fontsize=12)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * ((len(handles) - 1) // 4), 1, 1))
    return list(axes[:, 0])


def _dashes(i: int) -> str | tuple:
    return ("--", ":", "-.", (0, (5, 1, 1, 1)))[i % 4]


@dataclass(frozen=True)
class Saved:
    """One tensor autograd keeps for the backward pass: the operator that saved it first, what kind it is, its
    dtype and its bytes as the allocator books them.
    No notebook calls it; it works behind the helpers of ``13_will_it_fit``."""

    op: str
    kind: str
    dtype: str
    nbytes: int


def _kind(nodes: Sequence[object], i: int, tensor: object, scores: int) -> str:
    """What a saved tensor is, read from the node ``nodes[i]`` (:class:`helpers.peak.Node`) that saved it."""
    node = nodes[i]
    op = node.op  # type: ignore[attr-defined]
    if tensor.storage.part == "autocast weight copies":  # type: ignore[attr-defined]
        return COPIES
    following = nodes[i + 1].op if i + 1 < len(nodes) else ""  # type: ignore[attr-defined]
    if op in ("rsqrt", "native_layer_norm") or (op == "pow" and following == "mean") or (op == "mul" and any(
            t.name.startswith("rsqrt(") for t in node.inputs)):  # type: ignore[attr-defined]
        return NORMS
    if op in ("flash_attention", "efficient_attention"):
        return KERNEL
    if op in ("bmm", "softmax", "native_dropout") and tensor.numel == scores:  # type: ignore[attr-defined]
        return SCORES
    if op in ("bmm", "softmax"):
        return KERNEL
    if op == "linear":
        weight = node.inputs[1].name.removesuffix(" (16-bit copy)")  # type: ignore[attr-defined]
        if weight.endswith(".lora_A"):
            return PEFT
        if weight.endswith(".lora_B"):
            return LORA_A
        return LINEAR
    if op in ("silu", "mul", "gelu", "gelu_pytorch_tanh", "relu", "pow", "tanh"):
        return MLP
    if op in ("dropout", "native_dropout"):
        return DROPOUT
    return OTHER


def saved_in_layer(step: Step, layer: int = 1) -> list[Saved]:
    """The tensors one layer of ``step``'s model keeps for the backward pass (no checkpointing), from the engine's
    tape (:func:`helpers.peak.build_tape`): each storage once, counted in the layer whose operator saves it first
    (so the layer's input, made by the layer below, is this layer's; the rotary tables every layer shares are the
    first layer's).

    Introduced in ``13_will_it_fit``. Their bytes add up to what one more layer adds to the forward pass's peak.
    """
    tape, _, model = build_tape(step)
    scores = model.B * model["A"] * model.S * model.S
    first: dict[int, tuple[int, object]] = {}
    for i, node in enumerate(tape.nodes):
        for t in node.saved:
            if t.storage is not None and id(t.storage) not in first:
                first[id(t.storage)] = (i, t)
    return [Saved(tape.nodes[i].op, _kind(tape.nodes, i, t, scores), t.dtype, t.storage.nbytes)  # type: ignore[attr-defined]
            for i, t in first.values() if tape.nodes[i].layer == layer]


def saved_by_kind(step: Step, layer: int = 1) -> dict[str, tuple[int, int]]:
    """:func:`saved_in_layer` by kind: ``{kind: (tensors, bytes)}``, in a fixed order, kinds with no tensor left out.

    Introduced in ``13_will_it_fit``.
    """
    out: dict[str, tuple[int, int]] = {}
    for s in saved_in_layer(step, layer):
        n, b = out.get(s.kind, (0, 0))
        out[s.kind] = (n + 1, b + s.nbytes)
    return {kind: out[kind] for kind in KINDS if kind in out}


def layer_saved_bars(steps: Mapping[str, Step], title: str, layer: int = 1, ax: plt.Axes | None = None) -> plt.Axes:
    """One horizontal bar per setting: the bytes one layer saves for the backward pass (:func:`saved_by_kind`),
    stacked by kind, in MiB, each bar's total at its end.

    Introduced in ``13_will_it_fit``.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 2.0 + 0.55 * len(steps)))
    labels = list(steps)
    kinds = {label: saved_by_kind(step, layer) for label, step in steps.items()}
    used = [k for k in KINDS if any(k in v for v in kinds.values())]
    left = [0.0] * len(labels)
    for kind in used:
        widths = [kinds[label].get(kind, (0, 0))[1] / MiB for label in labels]
        ax.barh(labels, widths, left=left, color=_KIND_COLOURS[kind], label=kind, edgecolor="white", linewidth=0.5)
        left = [a + b for a, b in zip(left, widths)]
    for y, total in enumerate(left):
        ax.text(total, y, f"  {total:,.0f} MiB", va="center", fontsize=10)
    ax.invert_yaxis()
    ax.set_xlim(0, max(left) * 1.15)
    ax.set_xlabel("bytes one layer keeps for the backward pass, MiB")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=9, ncol=3, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    return ax


def measured_ratios(rows: Mapping[str, tuple[int, int, int]], title: str, ax: plt.Axes | None = None) -> plt.Axes:
    """For each measured case (``{case: (GPU's peak, the old estimate, the engine's peak)}``): each estimate divided by
    what the GPU measured, on a log axis, the ±3% band shaded.

    Introduced in ``13_will_it_fit``.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 0.18 * len(rows) + 1.25))
    cases = list(rows)
    before = [rows[c][1] / rows[c][0] for c in cases]
    now = [rows[c][2] / rows[c][0] for c in cases]
    ax.axvspan(0.97, 1.03, color="#55A868", alpha=0.18, linewidth=0)
    ax.axvline(1, color="#222222", linewidth=1)
    ax.scatter(before, cases, marker="x", color="#C44E52", s=42, zorder=3,
               label="before: weights, gradients, AdamW state + activations (helpers.finetune, helpers.memory)")
    ax.scatter(now, cases, marker="o", color="#4C72B0", s=30, zorder=3,
               label="now: the step played as torch runs it (helpers.peak)")
    for y, (b, n) in enumerate(zip(before, now)):
        ax.plot([b, n], [y, y], color="#8C8C8C", linewidth=0.8, zorder=2)
    ax.set_xscale("log", base=2)
    ax.set_xticks([0.5, 0.75, 1, 1.5, 2], ["0.5×", "0.75×", "1×", "1.5×", "2×"])
    ax.set_xlim(0.45, 2.3)
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7.5)
    ax.set_ylim(len(cases) - 0.5, -0.5)
    ax.set_xlabel("estimate ÷ what the GPU measured (torch.cuda.max_memory_allocated())")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.09), fontsize=9, ncol=2, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    return ax


def peak_curves(series: Mapping[str, Sequence[int]], lengths: Sequence[int], limits: Mapping[str, int], title: str,
                xlabel: str = "sequence length S (tokens)", ax: plt.Axes | None = None) -> plt.Axes:
    """Peak bytes against the sequence length (log axes), one line per setting, and each GPU's memory as CUDA reports
    it (``limits``, bytes) as a horizontal line: a point under a line fits that GPU, before the allocator's reserve
    and the CUDA context (:func:`helpers.peak.fits`).

    Introduced in ``13_will_it_fit``.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 4.6))
    for i, (label, values) in enumerate(series.items()):
        ax.plot(lengths, [v / GiB for v in values], label=label, color=_COLOURS[i % len(_COLOURS)], marker="o",
                linewidth=2, markersize=4)
    for i, (gpu, memory) in enumerate(limits.items()):
        ax.axhline(memory / GiB, color="#222222", linestyle=_dashes(i), linewidth=1.2)
        ax.text(lengths[0], memory / GiB * 1.03, f"{gpu}: {memory / GiB:.2f} GiB", va="bottom", fontsize=9)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(list(lengths), [f"{S:,}" for S in lengths])
    low = min([*(v for values in series.values() for v in values), *limits.values()]) / GiB
    high = max([*(v for values in series.values() for v in values), *limits.values()]) / GiB
    ticks = [t for t in (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
             if low / 1.3 <= t <= high * 1.3]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel("peak, GiB")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=9, bbox_to_anchor=(0, 0.93))
    ax.grid(True, which="major", alpha=0.3)
    return ax
