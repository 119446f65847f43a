"""Qwen2 as transformers builds it (``Qwen2ForCausalLM``): LLaMA's layout with biases on q, k and v only.

Introduced in ``07_decoder_llms``. Every Qwen2 layer adds ``A·d_k + 2·A_kv·d_k`` bias values to LLaMA's
(``q_proj``, ``k_proj`` and ``v_proj`` always carry a bias, ``o_proj`` never; the config has no switch for
it). The FLOPs are LLaMA's (a bias is an addition, no matmul). What the sliding-window keys change is the
mask and the cache, never a tensor: ``use_sliding_window`` turns the window on (off: transformers sets
``sliding_window`` to None), ``max_window_layers`` keeps the first layers global (layer ``i`` is windowed
when ``i >= max_window_layers``), and an explicit ``layer_types`` list says it layer by layer instead.
A windowed layer's cache keeps the last ``sliding_window − 1`` tokens (``DynamicSlidingWindowLayer``), a
global layer's every token. Qwen3 (:mod:`helpers.families.qwen3`) reads its config the same way.
Refused in one line: ``head_dim: null`` and what Qwen2Config refuses (a ``layer_types`` list of the wrong length).
Counted whatever else it builds (heads that do not divide H: d_k = H // A; key/value heads that do not divide the
query heads; depth 0). ``flops``/``memory`` refuse what transformers cannot run: key/value heads not dividing the
query heads, and, because Qwen2Model builds one mask per layer type (full and sliding only), windowed layers without
a window or any other layer type (``chunked_attention``...); ``memory`` alone a window below 1.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout, Param
from . import llama
from .base import Family
from .heads import decoder_classes
from .llama import FULL, SLIDING

def _max_window_layers(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None) -> list[str]:
    """Qwen2Config's own ``layer_types``: layer ``i`` windowed when there is a window and ``i >= max_window_layers``."""
    return [SLIDING if window is not None and i >= sizes["M"] else FULL for i in range(sizes["L"])]


_read_cache, _runs = llama.hooks(default=4096, switch="use_sliding_window", types=_max_window_layers, keep_l_w=True,
                                 stored_head=False, masks=True)
# Qwen3's runs (helpers.families.qwen3): Qwen2's, with head_dim checked as Qwen3Config stores it (an odd one refused)
_, runs_qwen3 = llama.hooks(default=4096, switch="use_sliding_window", types=_max_window_layers, keep_l_w=True,
                            masks=True)


def read_windows(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """``L_w``, the layers with a sliding-window cache, as Qwen2Config's ``__post_init__`` derives them.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    ``W`` (``sliding_window``) is kept only where some layer uses it; :func:`helpers.families.llama.cache_layers`
    says what the cache keeps. Refused in one line naming the key: ``head_dim: null`` (transformers' attention
    reads ``config.head_dim`` as it is and fails on None).
    """
    if "head_dim" in raw and raw["head_dim"] is None and sizes["L"]:  # no layer (L = 0): no attention to fail
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    return _read_cache(raw, sizes, flags)


def kv_cache(c: ModelConfig) -> str:
    """Global layers cache every token, windowed layers the last W − 1: transformers' DynamicCache.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    return llama.kv_cache(c)


def layout(c: ModelConfig, qk_norm: bool = False, bias: tuple[bool, bool] = (True, False)) -> Layout:
    """Qwen's tensors: LLaMA's, with ``bias`` = (on q/k/v, on o) and, for Qwen3, an RMSNorm of d_k on q and k.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    H, I, d_k = c["H"], c["I"], c["d_k"]
    layer = llama.attention_projections(c, *bias)
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

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
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
    Size("num_hidden_layers", "L", 32, minimum=0),
    Size("num_attention_heads", "A", 32),
    Size("num_key_value_heads", "A_kv", 32, nullable=True),  # null: A (multi-head attention)
    Size("intermediate_size", "I", 22016),
    Size("max_position_embeddings", "P", 32768),
    Size("sliding_window", "W", 4096, minimum=-2**63, nullable=True),  # used only with use_sliding_window
    Size("max_window_layers", "M", 28, minimum=-2**63),  # the first M layers stay global
    llama.CHUNK,
)
FLAGS = (Flag("tie_word_embeddings", False), Flag("use_sliding_window", False))

QWEN2 = Family(
    model_type="qwen2",
    architecture="Qwen2ForCausalLM",
    sizes=(*SIZES[:5], Size("head_dim", "d_k", None), *SIZES[5:]),  # head_dim: not a Qwen2Config field, but read
    flags=FLAGS,
    derive=llama.LLAMA.derive,
    read=read_windows,
    runs=_runs,
    heads_divide_hidden="never",  # head_dim = H // A without it: the projections are A·d_k wide
    pad_token_id=None,
    layout=layout,
    formulas=formulas,
    flops=llama.flops,
    kv_cache=kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Qwen2ForCausalLM",
    classes=decoder_classes("Qwen2", "model.", qa_prefix="transformer."),
)
