"""SmolLM3 as transformers builds it (``SmolLM3ForCausalLM``): LLaMA's tensors, NoPE on every 4th layer, tied head.

Works behind the helpers of ``07_decoder_llms`` (notebook 11, on today's models, is to teach it). Every tensor is
LLaMA's (GQA with 4 key/value heads by default, SwiGLU, two RMSNorms per layer, the head tied to the token table),
so the layout, formulas and FLOPs are LLaMA's. What is new changes no tensor: every ``no_rope_layer_interval``-th
layer (4 by default: layers 3, 7, 11 …) attends without rotary positions ("NoPE", Kazemnejad et al. 2023,
arXiv:2305.19466; SmolLM3 blog, Hugging Face 2025), as ``no_rope_layers`` lists (1: rotary, 0: none). The
rotation is elementwise, so NoPE saves no FLOP either. The cache follows ``layer_types``; without it, the NoPE
layers are the windowed ones when ``use_sliding_window`` and ``sliding_window`` are set (``SmolLM3Config``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, Flag, Size
from . import llama
from .base import Family
from .heads import decoder_classes
from .llama import FULL, SLIDING


def rope_layers(raw: Mapping[str, Any], L: int) -> list[int]:
    """``no_rope_layers`` as ``SmolLM3Config`` reads it: 1 where a layer rotates, 0 where it has no position (NoPE);
    from ``no_rope_layer_interval`` (layer ``i`` NoPE when ``(i + 1) % interval == 0``) when absent or null.
    Refused in one line: an interval of 0 (transformers divides by it), a list shorter than the depth.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    given = raw.get("no_rope_layers")
    if given is not None:
        if not isinstance(given, list) or not all(isinstance(x, int) for x in given):
            raise ConfigError("no_rope_layers", f"must be a list of 0 and 1, one per layer, got {json.dumps(given)}")
        if len(given) < L:
            raise ConfigError("no_rope_layers", f"lists {len(given)} layers, num_hidden_layers = {L} (transformers' "
                                                "attention reads one entry per layer)")
        return [int(bool(x)) for x in given[:L]]
    interval = raw.get("no_rope_layer_interval", 4)
    if not isinstance(interval, int) or isinstance(interval, bool):
        raise ConfigError("no_rope_layer_interval", f"must be an integer, got {json.dumps(interval)}")
    if interval == 0 and L:
        raise ConfigError("no_rope_layer_interval", "0: transformers computes (layer + 1) % interval and fails")
    return [int((i + 1) % interval != 0) for i in range(L)]


def _types(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None) -> list[str]:
    """SmolLM3Config's own ``layer_types``: the NoPE layers windowed when ``use_sliding_window`` and a window are set."""
    rope = rope_layers(raw, sizes["L"])
    windowed = raw.get("use_sliding_window") is True and window is not None
    return [SLIDING if windowed and not r else FULL for r in rope]


# a mask per layer type; the NoPE layers turn nothing (their queries and keys stay d_k wide)
_read_cache, _runs = llama.hooks(types=_types, stored_head=False, masks=True, rope=rope_layers)


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The layers with rotary positions (``{"rope": ...}``, 1 or 0 per layer) and the cache's layers.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    ``head_dim: null`` is refused where a layer reads it (the attention reads ``config.head_dim`` as it is).
    """
    if "head_dim" in raw and raw["head_dim"] is None and sizes["L"]:
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    rope = rope_layers(raw, sizes["L"])
    return {**_read_cache(raw, sizes, flags), "rope": tuple(rope)}


SMOLLM3 = Family(
    model_type="smollm3",
    architecture="SmolLM3ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 128256),
        Size("hidden_size", "H", 2048),
        Size("num_hidden_layers", "L", 36, minimum=0),
        Size("num_attention_heads", "A", 16),
        Size("num_key_value_heads", "A_kv", 4, nullable=True),  # null: A (multi-head attention)
        Size("head_dim", "d_k", None),  # not a SmolLM3Config field, but read: H // A without it
        Size("intermediate_size", "I", 11008),
        Size("max_position_embeddings", "P", 32768),
        Size("sliding_window", "W", None, minimum=-2**63, nullable=True),  # used where layer_types says so
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", True), Flag("attention_bias", False), Flag("mlp_bias", False),
           Flag("use_sliding_window", False)),
    derive=llama.LLAMA.derive,
    read=read,
    runs=_runs,
    heads_divide_hidden="never",  # no check in SmolLM3Config: the projections are A·d_k wide
    pad_token_id=128004,
    layout=llama.LLAMA.layout,  # LLaMA's tensors, formulas and FLOPs: NoPE changes no tensor and no matmul
    formulas=llama.LLAMA.formulas,
    flops=llama.flops,
    kv_cache=llama.kv_cache,
    positions=lambda c: None,  # rotary (and NoPE): no position table
    torch_ref="SmolLM3ForCausalLM",
    classes=decoder_classes("SmolLM3", "model.", qa_prefix="transformer."),
)
