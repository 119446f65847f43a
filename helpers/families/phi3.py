"""Phi-3 as transformers builds it (``Phi3ForCausalLM``): LLaMA's layer with fused projections.

Introduced in ``07_decoder_llms``. Each layer holds one ``qkv_proj`` of ``(A + 2·A_kv)·d_k × H`` (queries, keys
and values stacked, split after the matmul) and one ``gate_up_proj`` of ``2I × H`` (gate and up, chunked), so
Phi-3 has the same parameters and FLOPs as a LLaMA of the same sizes in fewer, larger tensors (4 matrices a
layer instead of 7). transformers registers ``o_proj`` before ``qkv_proj``. No bias anywhere (``attention_bias``
in a Phi-3 file is not read by Phi3Config). ``partial_rotary_factor`` and ``rope_scaling`` (LongRoPE's
short/long factors) change the rotation only, no tensor. The token table has a padding row
(``pad_token_id``, 32000 by default). ``sliding_window`` (2047 in Phi-3-mini-4k) windows every layer: the
cache keeps the last ``W − 1`` tokens, as Mistral's. Refused in one line: ``head_dim: null``, which transformers'
attention fails on. Counted whatever else Phi3Config builds (heads that do not divide H: d_k = H // A; key/value
heads that do not divide the query heads; ``layer_types``; ``attention_chunk_size``: the cache only);
``flops``/``memory`` refuse what transformers cannot run (key/value heads not dividing the query heads, an odd
head), ``memory`` alone a window below 1.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout, Param
from . import llama
from .base import Family
from .heads import decoder_classes


def layout(c: ModelConfig) -> Layout:
    """Phi-3's tensors: token table, L layers (o_proj, qkv_proj, gate_up_proj, down_proj, two RMSNorms), norm, head.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H, I, A, A_kv, d_k = c["H"], c["I"], c["A"], c["A_kv"], c["d_k"]
    layer = [
        Param.matrix("self_attn.o_proj.weight", (H, A * d_k), ATTENTION, "H*A*d_k"),
        Param.matrix("self_attn.qkv_proj.weight", ((A + 2 * A_kv) * d_k, H), ATTENTION, "(A + 2*A_kv)*d_k*H"),
        Param.matrix("mlp.gate_up_proj.weight", (2 * I, H), FEED_FORWARD, "2*I*H"),
        Param.matrix("mlp.down_proj.weight", (H, I), FEED_FORWARD, "H*I"),
        Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H"),
    ]
    return llama.decoder_layout(c, layer)


def formulas(c: ModelConfig) -> dict[str, str]:
    """Phi-3's parameter formulas per component (LLaMA's without biases: the fused tensors hold the same values).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: "L*(2*A*d_k*H + 2*A_kv*d_k*H)",
        FEED_FORWARD: "L*(3*H*I)",
        LAYER_NORM: "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


_read_cache, _runs = llama.hooks(stored_head=False)  # sliding_window None unless given (2047 in Phi-3-mini-4k)


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """Phi-3's own refusal, ``head_dim: null`` (transformers' attention fails on it), and the cache's layers.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if "head_dim" in raw and raw["head_dim"] is None and sizes["L"]:  # no layer (L = 0): no attention to fail
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    return _read_cache(raw, sizes, flags)


PHI3 = Family(
    model_type="phi3",
    architecture="Phi3ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 32064),
        Size("hidden_size", "H", 3072),
        Size("num_hidden_layers", "L", 32, minimum=0),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", None),  # None: A (multi-head attention)
        Size("head_dim", "d_k", None),  # not a Phi3Config field, but read: None means H // A
        Size("intermediate_size", "I", 8192),
        Size("max_position_embeddings", "P", 4096),
        Size("sliding_window", "W", None, minimum=-2**63),  # None: no window, the cache keeps every token
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False),),
    derive=llama.LLAMA.derive,
    read=read,
    runs=_runs,
    heads_divide_hidden="never",  # head_dim = H // A without it: the projections are A·d_k wide
    pad_token_id=32000,
    layout=layout,
    formulas=formulas,
    flops=llama.flops,
    kv_cache=llama.kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Phi3ForCausalLM",
    classes=decoder_classes("Phi3", "model."),
)
