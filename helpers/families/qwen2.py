"""Qwen2 as transformers builds it (``Qwen2ForCausalLM``): LLaMA's layout with biases on q, k and v only.

Introduced in ``07_decoder_llms``. Every Qwen2 layer adds ``A·d_k + 2·A_kv·d_k`` bias values to LLaMA's
(``q_proj``, ``k_proj`` and ``v_proj`` always carry a bias, ``o_proj`` never; the config has no switch for
it). The FLOPs are LLaMA's (a bias is an addition, no matmul). What the sliding-window keys change is the
mask and the cache, never a tensor: ``use_sliding_window`` turns the window on (off: transformers sets
``sliding_window`` to None), ``max_window_layers`` keeps the first layers global (layer ``i`` is windowed
when ``i >= max_window_layers``), and an explicit ``layer_types`` list says it layer by layer instead.
A windowed layer's cache keeps the last ``sliding_window − 1`` tokens (``DynamicSlidingWindowLayer``), a
global layer's every token. Qwen3 (:mod:`helpers.families.qwen3`) reads its config the same way.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..config import ConfigError, Flag, ModelConfig, Size
from ..params import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout, Param
from . import llama
from .base import Family
from .heads import decoder_classes

FULL, SLIDING = "full_attention", "sliding_attention"


def read_windows(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> None:
    """``L_w``, the layers with a sliding-window cache, as Qwen2Config's ``__post_init__`` derives them.

    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    ``W`` (``sliding_window``) is kept only where some layer uses it.
    Refused in one line naming the key: a ``layer_types`` list that is not one of ``full_attention`` /
    ``sliding_attention`` per layer, windowed layers without a window (transformers' cache fails on them), a
    window of 1 (its cache slice ``[-W + 1:]`` becomes ``[0:]`` and keeps every token), and ``head_dim: null``
    (transformers' attention reads ``config.head_dim`` as it is and fails on None).
    """
    if "head_dim" in raw and raw["head_dim"] is None:
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    window = sizes.get("W") if flags["use_sliding_window"] else None  # off: transformers sets it to None
    layer_types = raw.get("layer_types")
    if layer_types is None:
        windowed = 0 if window is None else max(0, sizes["L"] - max(sizes["M"], 0))
    else:
        if not isinstance(layer_types, list) or any(t not in (FULL, SLIDING) for t in layer_types):
            raise ConfigError("layer_types", f"must be a list of {json.dumps(FULL)} or {json.dumps(SLIDING)}, one per "
                                             f"layer; other attention types are not modelled")
        if len(layer_types) != sizes["L"]:
            raise ConfigError("layer_types", f"lists {len(layer_types)} layers, num_hidden_layers = {sizes['L']}")
        windowed = layer_types.count(SLIDING)
        if windowed and window is None:
            raise ConfigError("layer_types", "names sliding_attention layers without a window (use_sliding_window "
                                             "false or sliding_window null): transformers' cache fails on them")
    if windowed and window == 1:
        raise ConfigError("sliding_window", "1 is not modelled: transformers' cache slice [-W + 1:] becomes [0:] and "
                                            "keeps every token instead of none")
    sizes["L_w"] = windowed
    if not windowed:
        sizes.pop("W", None)


def kv_cache(c: ModelConfig) -> str:
    """Global layers cache every token, windowed layers the last W − 1: transformers' DynamicCache.

    No notebook calls it; it works behind the helpers of ``08_flops_and_memory``.
    """
    if not c["L_w"]:
        return "2*L*A_kv*d_k*S*B"
    if c["L_w"] == c["L"]:
        return "2*L*A_kv*d_k*min(S, W - 1)*B"
    return "2*A_kv*d_k*((L - L_w)*S + L_w*min(S, W - 1))*B"


def layout(c: ModelConfig, qk_norm: bool = False, bias: tuple[bool, bool] = (True, False)) -> Layout:
    """Qwen's tensors: LLaMA's, with ``bias`` = (on q/k/v, on o) and, for Qwen3, an RMSNorm of d_k on q and k.

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    H, I, A, A_kv, d_k = c["H"], c["I"], c["A"], c["A_kv"], c["d_k"]
    qkv_bias, o_bias = bias
    layer = []
    for proj, out, sym in (("q_proj", A * d_k, "A"), ("k_proj", A_kv * d_k, "A_kv"), ("v_proj", A_kv * d_k, "A_kv")):
        layer.append(Param.matrix(f"self_attn.{proj}.weight", (out, H), ATTENTION, f"{sym}*d_k*H"))
        if qkv_bias:
            layer.append(Param.bias(f"self_attn.{proj}.bias", (out,), ATTENTION, f"{sym}*d_k"))
    layer.append(Param.matrix("self_attn.o_proj.weight", (H, A * d_k), ATTENTION, "H*A*d_k"))
    if o_bias:
        layer.append(Param.bias("self_attn.o_proj.bias", (H,), ATTENTION, "H"))
    if qk_norm:  # one gain of d_k, shared by every head (after the projection, before the rotation)
        layer += [Param.norm("self_attn.q_norm.weight", (d_k,), LAYER_NORM, "d_k"),
                  Param.norm("self_attn.k_norm.weight", (d_k,), LAYER_NORM, "d_k")]
    layer += [Param.matrix("mlp.gate_proj.weight", (I, H), FEED_FORWARD, "I*H"),
              Param.matrix("mlp.up_proj.weight", (I, H), FEED_FORWARD, "I*H"),
              Param.matrix("mlp.down_proj.weight", (H, I), FEED_FORWARD, "H*I"),
              Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
              Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    return llama.decoder_layout(c, layer)


def formulas(c: ModelConfig) -> dict[str, str]:
    """Qwen2's parameter formulas per component: LLaMA's, plus the q, k, v biases.

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: "L*(2*A*d_k*H + 2*A_kv*d_k*H + A*d_k + 2*A_kv*d_k)",
        FEED_FORWARD: "L*(3*H*I)",
        LAYER_NORM: "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


# the sizes Qwen2 and Qwen3 read alike (Qwen3 adds head_dim = 128 and attention_bias)
SIZES = (
    Size("vocab_size", "V", 151936),
    Size("hidden_size", "H", 4096),
    Size("num_hidden_layers", "L", 32),
    Size("num_attention_heads", "A", 32),
    Size("num_key_value_heads", "A_kv", 32, nullable=True),  # null: A (multi-head attention)
    Size("intermediate_size", "I", 22016),
    Size("max_position_embeddings", "P", 32768),
    Size("sliding_window", "W", 4096, nullable=True),  # used only with use_sliding_window
    Size("max_window_layers", "M", 28, minimum=0),  # the first M layers stay global
)
FLAGS = (Flag("tie_word_embeddings", False), Flag("use_sliding_window", False))

QWEN2 = Family(
    model_type="qwen2",
    architecture="Qwen2ForCausalLM",
    sizes=(*SIZES[:5], Size("head_dim", "d_k", None), *SIZES[5:]),  # head_dim: not a Qwen2Config field, but read
    flags=FLAGS,
    derive=llama.LLAMA.derive,
    read=read_windows,
    heads_divide_hidden="unless head_dim",
    pad_token_id=None,
    layout=layout,
    formulas=formulas,
    flops=lambda c: dict(llama.FLOPS),
    kv_cache=kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Qwen2ForCausalLM",
    classes=decoder_classes("Qwen2", "model.", qa_prefix="transformer."),
)
