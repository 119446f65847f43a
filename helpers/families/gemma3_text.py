"""Gemma 3's text model as transformers builds it (``Gemma3ForCausalLM``, ``model_type`` ``gemma3_text``).

Works behind the helpers of ``07_decoder_llms`` (notebook 11, on today's models, is to teach it). Gemma 2's
tensors (head_dim of its own, four RMSNorms per layer: before and after attention and the MLP, tied head, a
padding row) with a QK-norm: an RMSNorm of d_k on each head's queries and keys (``q_norm``, ``k_norm``, one gain
shared by the heads, 2·d_k per layer), in place of Gemma 2's logit soft-capping (Gemma 3 report, Gemma Team 2025,
arXiv:2503.19786 §2). The layers are 5 local : 1 global: layer ``i`` attends within ``sliding_window`` tokens unless
``(i + 1)`` is a multiple of ``sliding_window_pattern`` (6), or as ``layer_types`` lists them; local layers rotate
with a base of 10,000, global ones with 1,000,000 (two rotary tables, no parameter). The window changes no
tensor and, with eager attention, no FLOP; it changes the cache: a local layer keeps the last ``W − 1`` tokens.
The vision tower of the multimodal Gemma 3 (``gemma3``) is not this family.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import LAYER_NORM, Block, Layout, Param
from . import gemma2, llama
from .base import Family
from .heads import decoder_classes
from .llama import FULL, SLIDING


def _pattern(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None) -> list[str]:
    """Gemma3TextConfig's own ``layer_types``: windowed unless ``(i + 1) % sliding_window_pattern == 0``."""
    pattern = raw.get("sliding_window_pattern", 6)
    if not isinstance(pattern, int) or isinstance(pattern, bool):
        raise ConfigError("sliding_window_pattern", f"must be an integer, got {json.dumps(pattern)}")
    if pattern == 0 and sizes["L"]:
        raise ConfigError("sliding_window_pattern", "0: transformers computes (layer + 1) % pattern and fails")
    return [SLIDING if (i + 1) % pattern else FULL for i in range(sizes["L"])]


# a mask per layer type: Gemma3TextModel (this class's) builds the sliding one for every input, so a null window fails
# whatever the layers; the multimodal Gemma3Model builds the masks of the layer types it has only
# (create_masks_for_generate), so there a null window fails only where a layer is local (runs_in_composite)
_read_cache, runs_in_composite = llama.hooks(default=4096, types=_pattern, masks=True)
_, runs = llama.hooks(default=4096, types=_pattern, masks=True, every_mask="Gemma3TextModel")


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The local (``L_w``) and global (``L_g``) layers, from ``layer_types`` or the 5:1 pattern.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    Refused in one line: ``use_bidirectional_attention`` (the encoder form of Gemma 3, whose window
    transformers halves: not modelled here) and layer types other than full and sliding (transformers refuses them).
    """
    if raw.get("use_bidirectional_attention"):
        raise ConfigError("use_bidirectional_attention", "true: the bidirectional (encoder) form of Gemma 3 is not "
                                                         "modelled here, only the causal decoder")
    given = llama.read_layer_types(raw, sizes["L"])
    other = sorted({t for t in given or () if t not in (FULL, SLIDING)})
    if other:  # Gemma3RotaryEmbedding builds one table per layer type it has a base for: full and sliding
        raise ConfigError("layer_types", f"{json.dumps(other[0])} layers: Gemma 3 has rotary bases for full and "
                                         "sliding attention only (transformers refuses to build it)")
    return gemma2.windowed_and_global(_read_cache(raw, sizes, flags), sizes)


def layout(c: ModelConfig) -> Layout:
    """Gemma 2's tensors with ``self_attn.q_norm`` and ``self_attn.k_norm`` (d_k each) after ``o_proj``.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    d_k = c["d_k"]
    head, stack, tail = gemma2.layout(c).blocks
    qk = (Param.norm("self_attn.q_norm.weight", (d_k,), LAYER_NORM, "d_k"),
          Param.norm("self_attn.k_norm.weight", (d_k,), LAYER_NORM, "d_k"))
    at = 1 + max(i for i, p in enumerate(stack.params) if p.name.startswith("self_attn."))
    return Layout((head, Block.stack(stack.prefix, stack.params[:at] + qk + stack.params[at:], c["L"]), tail))


def formulas(c: ModelConfig) -> dict[str, str]:
    """Gemma 2's formulas with the QK-norms: ``L·(4H + 2d_k) + H`` of norms.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    return {**gemma2.formulas(c), LAYER_NORM: "L*(4*H + 2*d_k) + H"}


GEMMA3_TEXT = Family(
    model_type="gemma3_text",
    architecture="Gemma3ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 262208),
        Size("hidden_size", "H", 2304),
        Size("num_hidden_layers", "L", 26, minimum=0),
        Size("num_attention_heads", "A", 8),
        Size("num_key_value_heads", "A_kv", 4),  # an int field: null is refused, as transformers refuses it
        Size("head_dim", "d_k", 256),  # not H // A
        Size("intermediate_size", "I", 9216),
        Size("max_position_embeddings", "P", 131072),
        Size("sliding_window", "W", 4096, minimum=-2**63, nullable=True),  # null: the forward pass fails
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", True), Flag("attention_bias", False)),
    derive=llama.LLAMA.derive,
    read=read,
    runs=runs,  # no window (null), or other layer types: the forward pass itself fails
    pad_token_id=0,
    heads_divide_hidden="always",  # Gemma3TextConfig.validate_architecture, even with head_dim
    layout=layout,
    formulas=formulas,
    flops=llama.flops,  # norms, soft-capping, the embedding scale: elementwise
    kv_cache=gemma2.kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Gemma3ForCausalLM",
    classes=decoder_classes("Gemma3Text", "model.", token_head=None),
)
