"""Gemma 2 as plain torch modules: LLaMA's layer with each sub-layer sandwiched between two RMSNorms. (Gemma itself
builds as LLaMA: the same tensors, names and matmuls.)"""

from __future__ import annotations

from .blocks import AFTER_ATTENTION, AFTER_MLP, BEFORE_ATTENTION, BEFORE_MLP
from .llama import LlamaDecoderLayer, LlamaForCausalLM, LlamaModel

__all__ = ["Gemma2DecoderLayer", "Gemma2Model", "Gemma2ForCausalLM"]


class Gemma2DecoderLayer(LlamaDecoderLayer):
    """LLaMA's layer with each sub-layer sandwiched between two RMSNorms: 4H of norms per layer.

No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    (Gemma stores each gain as an offset from 1; the count is the same.)
    """

    norms = {"input_layernorm": BEFORE_ATTENTION, "post_attention_layernorm": AFTER_ATTENTION,
             "pre_feedforward_layernorm": BEFORE_MLP, "post_feedforward_layernorm": AFTER_MLP}


class Gemma2Model(LlamaModel):
    """``model.``: embed_tokens V×H, L sandwiched layers, final RMSNorm (eager attention: the window masks, no FLOP
    saved).
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    layer_class = Gemma2DecoderLayer


class Gemma2ForCausalLM(LlamaForCausalLM):
    """Gemma 2 with its LM head, tied to the token table unless the config unties it.
    No notebook calls it; it works behind the helpers of ``09_modern_architectures``."""

    model_class = Gemma2Model
