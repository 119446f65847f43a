"""OLMo 2 as plain torch modules: LLaMA's matrices, RMSNorms after the sub-layers, QK-norm over the projections."""

from __future__ import annotations

import torch

from ..config import ModelConfig
from .blocks import AFTER_ATTENTION, AFTER_MLP, RMSNorm, _heads
from .llama import LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaModel

__all__ = ["Olmo2Attention", "Olmo2DecoderLayer", "Olmo2Model", "Olmo2ForCausalLM"]


class Olmo2Attention(LlamaAttention):
    """OLMo 2's attention: LLaMA's, queries and keys normalised over the whole projection (A·d_k, A_kv·d_k).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c)
        self.q_norm = RMSNorm(c["A"] * c["d_k"])
        self.k_norm = RMSNorm(c["A_kv"] * c["d_k"])

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The query and key projections normalised whole, then split into heads."""
        return (_heads(self.q_norm(self.q_proj(x)), self.heads), _heads(self.k_norm(self.k_proj(x)), self.kv_heads),
                _heads(self.v_proj(x), self.kv_heads))


class Olmo2DecoderLayer(LlamaDecoderLayer):
    """An OLMo 2 layer: no norm before a sub-layer, one after each (``post_attention``, ``post_feedforward``).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    attention_class = Olmo2Attention
    norms = {"post_attention_layernorm": AFTER_ATTENTION, "post_feedforward_layernorm": AFTER_MLP}


class Olmo2Model(LlamaModel):
    """``model.`` of ``Olmo2ForCausalLM``: token table, L OLMo 2 layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = Olmo2DecoderLayer


class Olmo2ForCausalLM(LlamaForCausalLM):
    """``Olmo2ForCausalLM``: LLaMA's matrices, norms after the sub-layers, QK-norm over the projections.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Olmo2Model
