"""The embedding tables: their share of the model as the vocabulary grows.

Introduced in ``01_embeddings``.
"""

from __future__ import annotations

from .config import ModelConfig
from .params import EMBEDDINGS, evaluate, group_formulas


def embedding_share(config: ModelConfig, V: int | None = None) -> float:
    """Share of the whole model held by the embedding tables, ``(V + P + T)·H`` over the total.

    ``V`` replaces the configuration's vocabulary size (to draw the share against V); every other
    size stays. Computed from the engine's component formulas. Introduced in ``01_embeddings``.
    """
    sizes = {} if V is None else {"V": V}
    formulas = group_formulas(config)
    whole = sum(evaluate(formula, config, **sizes) for formula in formulas.values())
    return evaluate(formulas[EMBEDDINGS], config, **sizes) / whole
