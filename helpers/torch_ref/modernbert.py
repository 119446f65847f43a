"""ModernBERT as plain torch modules: BERT's encoder without biases, a fused Wqkv, GeGLU, rotary positions with two
bases, and local layers that see |i − j| ≤ W // 2 (the mask added after the S × S matmul, as eager attention does)."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _attend, _heads, _mask, _merge, _rotate, rotary_angles

__all__ = ["ModernBertEmbeddings", "ModernBertAttention", "ModernBertMLP", "ModernBertEncoderLayer", "ModernBertModel"]

# ModernBertConfig's default bases (global_rope_theta, local_rope_theta), those of both published models
GLOBAL_THETA, LOCAL_THETA = 160_000.0, 10_000.0


def _layer_norm(c: ModelConfig) -> nn.LayerNorm:
    """A LayerNorm of H (eps 1e-5), with its β only where ``norm_bias`` is on."""
    return nn.LayerNorm(c["H"], eps=1e-5, bias=c.flags["norm_bias"])


class ModernBertEmbeddings(nn.Module):
    """The token table (V × H, no position table: positions are rotary), then a LayerNorm.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["V"], c["H"], padding_idx=c.pad_token_id)
        self.norm = _layer_norm(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.norm(self.tok_embeddings(input_ids))


class ModernBertAttention(nn.Module):
    """One fused projection ``Wqkv`` (3H × H: queries, keys, values), A heads of d_k, the output ``Wo``; a local layer
    (``half``: the half-window, W // 2) masks the scores beyond it, both ways, after computing all S × S of them.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig, half: int | None = None) -> None:
        super().__init__()
        bias = c.flags["attention_bias"]
        self.heads, self.half = c["A"], half
        self.Wqkv = nn.Linear(c["H"], 3 * c["H"], bias=bias)
        self.Wo = nn.Linear(c["H"], c["H"], bias=bias)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q, k, v = (_heads(t, self.heads) for t in self.Wqkv(x).chunk(3, dim=-1))
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        if self.half is None:
            return self.Wo(_merge(_attend(q, k, v, causal=False)))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        behind = _mask(q.shape[-2], q.device, self.half + 1)  # j ≤ i and i − j ≤ half
        scores = scores.masked_fill(~(behind | behind.T), float("-inf"))
        return self.Wo(_merge(torch.matmul(scores.softmax(dim=-1), v)))


class ModernBertMLP(nn.Module):
    """GeGLU: ``Wi`` (2I × H) gives the GELU half and the gate half, ``Wo`` (H × I) brings their product back.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        bias = c.flags["mlp_bias"]
        self.Wi = nn.Linear(c["H"], 2 * c["I"], bias=bias)
        self.Wo = nn.Linear(c["I"], c["H"], bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        value, gate = self.Wi(x).chunk(2, dim=-1)
        return self.Wo(F.gelu(value) * gate)


class ModernBertEncoderLayer(nn.Module):
    """Pre-norm: ``attn_norm`` (none in layer 0, whose input the embedding norm has normalised), ``attn``, then
    ``mlp_norm`` and ``mlp``, each with a residual.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig, i: int) -> None:
        super().__init__()
        self.attn_norm = nn.Identity() if i == 0 else _layer_norm(c)
        local = c.lists.get("local", (0,) * c["L"])[i]
        self.attn = ModernBertAttention(c, c["W"] // 2 if local else None)
        self.mlp_norm = _layer_norm(c)
        self.mlp = ModernBertMLP(c)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class ModernBertModel(nn.Module):
    """``ModernBertModel``: embeddings, L encoder layers (global ones turned by rotary angles of base 160,000, local
    ones of base 10,000), ``final_norm``; no pooler.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.d_k = c["d_k"]
        self.embeddings = ModernBertEmbeddings(c)
        self.layers = nn.ModuleList(ModernBertEncoderLayer(c, i) for i in range(c["L"]))
        self.final_norm = _layer_norm(c)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(input_ids)
        S = input_ids.shape[1]
        angles = {base: rotary_angles(self.d_k, S, input_ids.device, x.dtype, base=base)
                  for base in (GLOBAL_THETA, LOCAL_THETA)}
        for layer in self.layers:
            x = layer(x, *angles[GLOBAL_THETA if layer.attn.half is None else LOCAL_THETA])
        return self.final_norm(x)
