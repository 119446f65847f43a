"""The embedding tables, and comparing one component of the parameter table with torch.

Introduced in ``01_embeddings``. :func:`under` is used again in ``02_multi_head_attention`` and
``03_feed_forward`` for their torch checks of single components.
"""

from __future__ import annotations

from typing import Iterable

from .config import ModelConfig
from .params import EMBEDDINGS, Param, evaluate, group_formulas


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
