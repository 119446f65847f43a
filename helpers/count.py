"""Counting a whole model: totals, per-component counts checked against their formulas, and output.

Introduced in ``00_overview``; this is what ``python -m helpers count`` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable

from .config import ModelConfig
from .params import (
    CHECKPOINT, EXPERT, EXPERT_BIAS, TRANSFORMERS, Layout, Param, checkpoint_layout, evaluate, component_formulas, matmul_count,
    param_layout, render, total,
)
from .report import fmt_int, fmt_share, table


@dataclass(frozen=True)
class Count:
    """A model's tensors with its per-component and total counts.

    The counts come from the compact :attr:`layout` (each layer of a stack counted once and multiplied);
    :attr:`params` lists every tensor, built on first use.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """

    config: ModelConfig
    layout: Layout

    @cached_property
    def params(self) -> tuple[Param, ...]:
        """Every tensor under its checkpoint name (as :func:`helpers.params.param_table`)."""
        return tuple(self.layout.expand())

    @property
    def total(self) -> int:
        return self.layout.total

    @property
    def components(self) -> dict[str, int]:
        """Count per component, in the order of :attr:`formulas` (embeddings first)."""
        counts = self.layout.component_counts()
        return {component: counts[component] for component in self.formulas if component in counts}

    @property
    def formulas(self) -> dict[str, str]:
        return component_formulas(self.config)

    def _idle(self) -> dict[str, int]:
        """Per component, the routed experts' weights one token does not use (E − k of E per MoE layer)."""
        idle: dict[str, int] = {}
        for p, repeat in self.layout.rows():
            if p.kind in (EXPERT, EXPERT_BIAS):  # an expert's weights or its bias row
                used = matmul_count(p) * evaluate(p.tokens, self.config, B=1, S=1)
                idle[p.component] = idle.get(p.component, 0) + repeat * max(p.count - used, 0)  # k > E: all used
        return idle

    @property
    def active_components(self) -> dict[str, int]:
        """Per component, the parameters one token uses: all of them, less the routed experts it skips."""
        idle = self._idle()
        return {component: n - idle.get(component, 0) for component, n in self.components.items()}

    @property
    def active(self) -> int:
        """The parameters one token uses (a mixture of experts: the total less the experts not routed to;
        a dense model: the total). Mixtral 8x7B: 12,879,925,248 of 46,702,792,704."""
        return self.total - sum(self._idle().values(), 0)


def count_model(config: ModelConfig) -> Count:
    """Count every tensor of a model and check each component against its formula.

    Introduced in ``00_overview``. Raises ``AssertionError`` if a formula and the table disagree
    (an engine bug, never a user error).
    """
    result = Count(config, param_layout(config))
    components = result.layout.component_counts()
    formulas = result.formulas
    # a component with no tensor (a depth of 0: no attention, no feed-forward) must have a formula worth 0
    assert set(components) <= set(formulas), (list(formulas), list(components))
    for component, formula in formulas.items():
        assert evaluate(formula, config) == components.get(component, 0), (component, formula)
    return result


def named_params(result: Count, names: str = TRANSFORMERS) -> tuple[Param, ...]:
    """Every tensor, named as transformers names them (``"transformers"``) or as the checkpoints on disk do
    (``"checkpoint"``: a mixture's experts one by one, :func:`~helpers.params.checkpoint_layout`).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    Both namings hold the same values: their totals are equal.
    """
    if names == TRANSFORMERS:
        return result.params
    if names != CHECKPOINT:
        raise ValueError(f"names must be {TRANSFORMERS!r} or {CHECKPOINT!r}, got {names!r}")
    return tuple(checkpoint_layout(result.config).expand())


def naming_header(result: Count, names: str = TRANSFORMERS) -> str | None:
    """The line above ``--tensors`` saying which names it lists, for a family whose checkpoints name some tensors
    otherwise (a mixture of experts); None for the others, whose names are transformers' and the files' alike.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if result.config.family.checkpoint_names is None:
        return None
    if names == CHECKPOINT:
        return ("tensors as the checkpoints on disk name them: one tensor per expert (transformers fuses them when "
                "it loads; --names transformers lists them fused)")
    return (f"tensors as transformers names them ({result.config.architecture}.named_parameters(): the experts fused, "
            "E × out × in; --names checkpoint lists them one by one, as the checkpoints on disk do)")


def count_json(result: Count, names: str = TRANSFORMERS) -> dict[str, Any]:
    """The ``python -m helpers count --json`` document: model, class, total, components and every tensor.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``class`` is the transformers class counted (``--class``), ``num_labels`` its
    labels where it has a label head (else null), ``names`` the naming of ``parameters`` (``--names``).
    """
    return {
        "model": result.config.name,
        "class": result.config.architecture,
        "num_labels": result.config.num_labels,
        "names": names,
        "total": result.total,
        "active": result.active,
        "components": result.components,
        "parameters": [
            {"name": p.name, "shape": list(p.shape), "count": p.count, "component": p.component}
            for p in named_params(result, names)
        ],
    }


def describe(config: ModelConfig) -> str:
    """One line naming the model, the class counted and its sizes: ``V=30522 H=768 ...``.

    Introduced in ``00_overview``. A class with a label head says how many: ``(BertForSequenceClassification,
    num_labels C=3: V=30522 ...)``.
    """
    labels = config.num_labels
    sizes = " ".join(f"{k}={v}" for k, v in config.sizes.items() if labels is None or k != "C")
    flags = " ".join(f"{k}={str(v).lower()}" for k, v in config.flags.items())
    head = config.architecture + (f", num_labels C={labels}" if labels is not None else "")
    return f"{config.name} ({head}: {sizes}{' ' + flags if flags else ''})"


def count_report(result: Count) -> str:
    """The per-component table: component, formula, count, share, and the total.

    Introduced in ``00_overview``.
    """
    whole = result.total
    if result.active != whole:  # a mixture of experts: also the parameters one token uses
        active = result.active_components
        rows = [
            (component, render(result.formulas[component]), fmt_int(n), fmt_share(n, whole), fmt_int(active[component]))
            for component, n in result.components.items()
        ]
        rows.append(("total", "", fmt_int(whole), fmt_share(whole, whole), fmt_int(result.active)))
        return table(("component", "formula", "parameters", "share", "active per token"), rows, right=(2, 3, 4))
    rows = [
        (component, render(result.formulas[component]), fmt_int(n), fmt_share(n, whole))
        for component, n in result.components.items()
    ]
    rows.append(("total", "", fmt_int(whole), fmt_share(whole, whole)))
    return table(("component", "formula", "parameters", "share"), rows, right=(2, 3))


def tensor_table(params: tuple[Param, ...] | list[Param], whole: int | None = None) -> str:
    """Every tensor keyed by its checkpoint path, with shape, formula, count and share.

    Introduced in ``04_layer_norm``.
    """
    whole = total(params) if whole is None else whole
    rows = [
        (p.name, "[" + ", ".join(map(str, p.shape)) + "]", p.component, render(p.formula), fmt_int(p.count), fmt_share(p.count, whole))
        for p in params
    ]
    return table(("name", "shape", "component", "formula", "parameters", "share"), rows, right=(4, 5))


def compact_table(params: Iterable[Param]) -> str:
    """Tensors keyed by name, with shape, formula and count: narrow enough for a slide.

    :func:`tensor_table` without its component and share columns. Pass rows through
    :func:`under` to print names relative to a module. Introduced in ``01_embeddings``. Used again in 02, 03 and 05.
    """
    rows = [(p.name, "[" + ", ".join(map(str, p.shape)) + "]", render(p.formula), fmt_int(p.count)) for p in params]
    return table(("tensor", "shape", "formula", "parameters"), rows, right=(3,))
