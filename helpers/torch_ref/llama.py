"""LLaMA (and Mistral, Gemma: the same tensors) as plain torch modules: the decoder skeleton of :mod:`.blocks` with
LLaMA's grouped-query attention and SwiGLU; and the KV cache such a model keeps."""

from __future__ import annotations

import torch

from ..config import ModelConfig
from .blocks import Attention, CausalLM, DecoderLayer, DecoderModel, SwiGLU, _rotate, rotary_angles

__all__ = ["LlamaAttention", "LlamaMLP", "LlamaDecoderLayer", "LlamaModel", "LlamaForCausalLM", "llama_key_values"]


class LlamaAttention(Attention):
    """Grouped-query attention: A query heads, A_kv key/value heads of d_k, no position table; biases on all four
    projections only with ``attention_bias``.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""


class LlamaMLP(SwiGLU):
    """SwiGLU: down(silu(gate(x)) * up(x)), three matrices of H×I (biases only with ``mlp_bias``).
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__(c["H"], c["I"], bias=c.flags.get("mlp_bias", False))


class LlamaDecoderLayer(DecoderLayer):
    """Pre-RMSNorm LLaMA layer (no biases): 2A·d_k·H + 2A_kv·d_k·H attention + 3H·I SwiGLU + 2H norms.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    attention_class, mlp_class = LlamaAttention, LlamaMLP


class LlamaModel(DecoderModel):
    """``model.``: embed_tokens V×H, L decoder layers, final RMSNorm H; rotary positions add no parameter.
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    layer_class = LlamaDecoderLayer


class LlamaForCausalLM(CausalLM):
    """LLaMA with its output head (``lm_head``, untied unless the config ties it).
    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``."""

    model_class = LlamaModel


def llama_key_values(model: LlamaForCausalLM, input_ids: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The keys and values each layer of a reference LLaMA keeps for generation: its KV cache.

    Introduced in ``08_flops_and_memory``. Runs the model's layers on ``input_ids`` and returns, per
    layer, the rotated keys and the values as attention uses them before the query groups share
    them: ``[B, A_kv, S, d_k]`` each (what transformers stores in ``past_key_values``).
    """
    inner = model.model
    x = inner.embed_tokens(input_ids)
    cos, sin = rotary_angles(inner.d_k, input_ids.shape[1], input_ids.device, x.dtype)
    cache = []
    for i, layer in enumerate(inner.layers):
        angles = inner.angles(i, cos, sin)
        _, k, v = layer.self_attn.project(layer.input_layernorm(x))
        cache.append((_rotate(k, *angles), v))
        x = layer(x, *angles)
    return cache
