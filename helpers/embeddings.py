"""The embedding tables, and looking at one module of the parameter table on its own.

Introduced in ``01_embeddings``. :func:`under` and :func:`compact_table` are used again in
``02_multi_head_attention`` and ``03_feed_forward`` (torch checks of single components, slide tables).
"""

from __future__ import annotations

from typing import Iterable

from .config import ModelConfig
from .params import EMBEDDINGS, Param, evaluate, group_formulas, render
from .report import fmt_int, table


def under(params: Iterable[Param], prefix: str) -> list[Param]:
    """The rows whose checkpoint name starts with ``prefix``, renamed relative to it.

    ``under(param_table(c), "embeddings.")`` names its rows ``word_embeddings.weight`` ...: the names
    a component built alone (``build_component(BertEmbeddings, c)``) gives its parameters, so the
    two can be compared with ``torch_ref.matches``. Introduced in ``01_embeddings``.
    """
    return [Param(p.name[len(prefix):], p.shape, p.group, p.formula) for p in params if p.name.startswith(prefix)]


def embedding_share(config: ModelConfig, V: int | None = None) -> float:
    """Share of the whole model held by the embedding tables, ``(V + P + T)·H`` over the total.

    ``V`` replaces the configuration's vocabulary size (to draw the share against V); every other
    size stays. Computed from the engine's component formulas. Introduced in ``01_embeddings``.
    """
    sizes = {} if V is None else {"V": V}
    formulas = group_formulas(config)
    whole = sum(evaluate(formula, config, **sizes) for formula in formulas.values())
    return evaluate(formulas[EMBEDDINGS], config, **sizes) / whole


def compact_table(params: Iterable[Param]) -> str:
    """Tensors keyed by name, with shape, formula and count: narrow enough for a slide.

    :func:`helpers.tensor_table` without its component and share columns. Pass rows through
    :func:`under` to print names relative to a module. Introduced in ``01_embeddings``.
    """
    rows = [(p.name, "[" + ", ".join(map(str, p.shape)) + "]", render(p.formula), fmt_int(p.count)) for p in params]
    return table(("tensor", "shape", "formula", "parameters"), rows, right=(3,))
