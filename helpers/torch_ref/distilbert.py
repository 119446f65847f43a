"""DistilBERT as plain torch modules: BERT's encoder with six layers' names of its own and no segment table."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .bert import BertEmbeddings
from .blocks import _run, _self_attention

__all__ = ["DistilBertEmbeddings", "DistilBertSelfAttention", "DistilBertFFN", "DistilBertBlock",
           "DistilBertTransformer", "DistilBertModel"]


class DistilBertEmbeddings(BertEmbeddings):
    """Token (V×H) + position (P×H) tables, summed, then LayerNorm: no segment table.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    segments = False


class DistilBertSelfAttention(nn.Module):
    """Q, K, V and output projections (H×H each, with bias): ``q_lin``, ``k_lin``, ``v_lin``, ``out_lin``.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A"]
        self.q_lin = nn.Linear(c["H"], c["H"])
        self.k_lin = nn.Linear(c["H"], c["H"])
        self.v_lin = nn.Linear(c["H"], c["H"])
        self.out_lin = nn.Linear(c["H"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_lin(_self_attention(x, self.heads, (self.q_lin, self.k_lin, self.v_lin), causal=False))


class DistilBertFFN(nn.Module):
    """``lin1`` H → I, GELU, ``lin2`` I → H.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.lin1 = nn.Linear(c["H"], c["I"])
        self.lin2 = nn.Linear(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin2(F.gelu(self.lin1(x)))


class DistilBertBlock(nn.Module):
    """transformers' ``TransformerBlock``: attention, ``sa_layer_norm``, feed-forward, ``output_layer_norm``.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.attention = DistilBertSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(c["H"])
        self.ffn = DistilBertFFN(c)
        self.output_layer_norm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.sa_layer_norm(self.attention(x) + x)
        return self.output_layer_norm(self.ffn(x) + x)


class DistilBertTransformer(nn.Module):
    """The L layers, ``transformer.layer.0`` ...
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList(DistilBertBlock(c) for _ in range(c["L"]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _run(self.layer, x)


class DistilBertModel(nn.Module):
    """``DistilBertModel``: embeddings and L layers, no pooler.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = DistilBertEmbeddings(c)
        self.transformer = DistilBertTransformer(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.transformer(self.embeddings(input_ids))
