"""ALBERT as plain torch modules: ELECTRA's factorised embeddings, G groups of K layers shared across the L runs."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .bert import BertSelfAttention, ElectraEmbeddings
from .blocks import _run

__all__ = ["AlbertAttention", "AlbertLayer", "AlbertLayerGroup", "AlbertTransformer", "AlbertModel"]


class AlbertAttention(BertSelfAttention):
    """BERT's Q, K, V (H×H each, with bias), then the output ``dense`` (H×H) and the post-attention LayerNorm, in one
    module.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.dense = nn.Linear(c["H"], c["H"])
        self.LayerNorm = nn.LayerNorm(c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(super().forward(x)) + x)


class AlbertLayer(nn.Module):
    """``full_layer_layer_norm``, attention, ``ffn`` H → I, ``ffn_output`` I → H.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.full_layer_layer_norm = nn.LayerNorm(c["H"])
        self.attention = AlbertAttention(c)
        self.ffn = nn.Linear(c["H"], c["I"])
        self.ffn_output = nn.Linear(c["I"], c["H"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.attention(x)
        return self.full_layer_layer_norm(self.ffn_output(F.gelu(self.ffn(x))) + x)


class AlbertLayerGroup(nn.Module):
    """One group holding its K layers (``albert_layers.0`` ... ``albert_layers.{K-1}``; ``inner_group_num``).
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.albert_layers = nn.ModuleList([AlbertLayer(c) for _ in range(c["K"])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _run(self.albert_layers, x)


class AlbertTransformer(nn.Module):
    """``embedding_hidden_mapping_in`` d_e → H, then L runs, run i through group ``int(i / (L / G))`` (one: shared).
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers, self.groups = c["L"], c["G"]
        self.embedding_hidden_mapping_in = nn.Linear(c["d_e"], c["H"])
        self.albert_layer_groups = nn.ModuleList([AlbertLayerGroup(c) for _ in range(c["G"])])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embedding_hidden_mapping_in(x)
        for i in range(self.layers):  # the same parameters, L times (each group's, L / G times)
            x = self.albert_layer_groups[int(i / (self.layers / self.groups))](x)
        return x


class AlbertModel(nn.Module):
    """``AlbertModel``: d_e-wide embeddings, the shared encoder, the pooler (dense H×H + tanh on [CLS]).
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = ElectraEmbeddings(c)
        self.encoder = AlbertTransformer(c)
        self.pooler = nn.Linear(c["H"], c["H"])

    def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.encoder(self.embeddings(input_ids))
        return hidden, torch.tanh(self.pooler(hidden[:, 0]))
