"""Gemma 3 (text) as plain torch modules: Gemma 2's sandwiched layers with Qwen3's per-head QK-norm."""

from __future__ import annotations

from .gemma import Gemma2DecoderLayer
from .llama import LlamaForCausalLM, LlamaModel
from .qwen import Qwen3Attention

__all__ = ["Gemma3DecoderLayer", "Gemma3TextModel", "Gemma3ForCausalLM"]


class Gemma3DecoderLayer(Gemma2DecoderLayer):
    """A Gemma 3 layer: Gemma 2's four norms, its attention with per-head q/k RMSNorms (Qwen3's).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    attention_class = Qwen3Attention


class Gemma3TextModel(LlamaModel):
    """``model.`` of ``Gemma3ForCausalLM``: token table, L Gemma 3 layers, final RMSNorm.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    layer_class = Gemma3DecoderLayer


class Gemma3ForCausalLM(LlamaForCausalLM):
    """``Gemma3ForCausalLM``: Gemma 2's sandwiched layers with QK-norm, tied head (eager: the window masks only).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Gemma3TextModel
