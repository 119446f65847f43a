"""BERT-shaped configurations of growing width, and how the components' shares shift with it.

Introduced in ``06_full_bert``. Every configuration goes through :func:`helpers.config.parse_config`
and every count through :func:`helpers.count.count_model`, so the shares are exact ratios of counted
tensors.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from ..config import ModelConfig, parse_config
from ..count import count_model

HEAD_SIZE = 64  # d_k of every BERT and GPT-2 size: A = H / 64


def scaled_bert(H: int, L: int = 12, V: int = 30522, P: int = 512, T: int = 2) -> ModelConfig:
    """A BertModel config of width ``H`` with BERT's proportions: I = 4H, A = H/64 heads of d_k = 64.

    Introduced in ``05_pooler_and_heads``.
    """
    if H % HEAD_SIZE:
        raise ValueError(f"H = {H} is not a multiple of the head size {HEAD_SIZE}")
    raw = {"model_type": "bert", "vocab_size": V, "hidden_size": H, "num_hidden_layers": L,
           "num_attention_heads": H // HEAD_SIZE, "intermediate_size": 4 * H,
           "max_position_embeddings": P, "type_vocab_size": T}
    return parse_config(raw, name=f"bert-H{H}-L{L}")


def shares_by_width(widths: Sequence[int], L: int = 12, V: int = 30522) -> dict[str, list[Fraction]]:
    """Each component's exact share of the total, one entry per width in ``widths``.

    Introduced in ``06_full_bert``.
    """
    counts = [count_model(scaled_bert(H, L=L, V=V)) for H in widths]
    groups = list(counts[0].components)
    return {g: [Fraction(r.components[g], r.total) for r in counts] for g in groups}
