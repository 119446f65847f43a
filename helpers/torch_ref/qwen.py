"""Qwen2 and Qwen3 as plain torch modules: LLaMA's layer with other attention tensors (q/k/v biases; per-head
q/k RMSNorms)."""

from __future__ import annotations

import torch

from ..config import ModelConfig
from .blocks import RMSNorm
from .llama import LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaModel

__all__ = ["Qwen2Attention", "Qwen3Attention", "Qwen2DecoderLayer", "Qwen3DecoderLayer", "Qwen2Model",
           "Qwen2ForCausalLM", "Qwen3Model", "Qwen3ForCausalLM"]


class Qwen2Attention(LlamaAttention):
    """Qwen2's attention: LLaMA's, with a bias on q, k and v (always) and none on o.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    @staticmethod
    def biases(c: ModelConfig) -> tuple[bool, bool]:
        """(on q, k and v; on o): always, never."""
        return True, False


class Qwen3Attention(LlamaAttention):
    """Qwen3's attention: LLaMA's (a bias on all four only with ``attention_bias``), each head's query and key
    normalised by an RMSNorm of d_k (one gain shared by the heads) before the rotation.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.q_norm = RMSNorm(c["d_k"])
        self.k_norm = RMSNorm(c["d_k"])

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """LLaMA's heads, each query and key head normalised."""
        q, k, v = super().project(x)
        return self.q_norm(q), self.k_norm(k), v


class Qwen2DecoderLayer(LlamaDecoderLayer):
    """A Qwen2 layer: LLaMA's, its attention with q/k/v biases.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    attention_class = Qwen2Attention


class Qwen3DecoderLayer(LlamaDecoderLayer):
    """A Qwen3 layer: LLaMA's, its attention with per-head q/k RMSNorms.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    attention_class = Qwen3Attention


class Qwen2Model(LlamaModel):
    """``model.`` of ``Qwen2ForCausalLM``: token table, L Qwen2 layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    layer_class = Qwen2DecoderLayer


class Qwen2ForCausalLM(LlamaForCausalLM):
    """``Qwen2ForCausalLM``: LLaMA with q/k/v biases.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    model_class = Qwen2Model


class Qwen3Model(LlamaModel):
    """``model.`` of ``Qwen3ForCausalLM``: token table, L Qwen3 layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    layer_class = Qwen3DecoderLayer


class Qwen3ForCausalLM(LlamaForCausalLM):
    """``Qwen3ForCausalLM``: LLaMA with per-head q/k RMSNorms and an explicit head_dim.
    No notebook calls it; it works behind the helpers of ``00_overview``."""

    model_class = Qwen3Model
