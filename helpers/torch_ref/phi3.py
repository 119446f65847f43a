"""Phi-3 as plain torch modules: LLaMA's layer with one fused ``qkv_proj`` and one fused ``gate_up_proj``."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _heads
from .llama import LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaModel

__all__ = ["Phi3Attention", "Phi3MLP", "Phi3DecoderLayer", "Phi3Model", "Phi3ForCausalLM"]


class Phi3Attention(LlamaAttention):
    """Phi-3's attention: ``o_proj`` (registered first), then one fused ``qkv_proj`` split after the matmul.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        nn.Module.__init__(self)
        H, A, A_kv, d_k = c["H"], c["A"], c["A_kv"], c["d_k"]
        self.heads, self.kv_heads = A, A_kv
        self.sizes = [A * d_k, A_kv * d_k, A_kv * d_k]
        self.o_proj = nn.Linear(A * d_k, H, bias=False)
        self.qkv_proj = nn.Linear(H, sum(self.sizes), bias=False)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One matmul, split into the query heads and the key and value heads."""
        q, k, v = self.qkv_proj(x).split(self.sizes, dim=-1)
        return _heads(q, self.heads), _heads(k, self.kv_heads), _heads(v, self.kv_heads)


class Phi3MLP(nn.Module):
    """Phi-3's SwiGLU: one fused ``gate_up_proj`` (H -> 2I, chunked into gate and up), then ``down_proj``.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(c["H"], 2 * c["I"], bias=False)
        self.down_proj = nn.Linear(c["I"], c["H"], bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class Phi3DecoderLayer(LlamaDecoderLayer):
    """A Phi-3 layer: LLaMA's, with the fused qkv_proj and gate_up_proj.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    attention_class, mlp_class = Phi3Attention, Phi3MLP


class Phi3Model(LlamaModel):
    """``model.`` of ``Phi3ForCausalLM``: token table, L Phi3 layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    layer_class = Phi3DecoderLayer


class Phi3ForCausalLM(LlamaForCausalLM):
    """``Phi3ForCausalLM``: LLaMA with fused qkv_proj and gate_up_proj.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    model_class = Phi3Model
