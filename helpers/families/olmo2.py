"""OLMo 2 as transformers builds it (``Olmo2ForCausalLM``): norms after each sub-layer, QK-norm over the projection.

Works behind the helpers of ``07_decoder_llms`` (notebook 11, on today's models, is to teach it). LLaMA's
projections and SwiGLU, with the norms moved: each layer normalises the *output* of attention
(``post_attention_layernorm``) and of the MLP (``post_feedforward_layernorm``) before the residual addition, and
has no norm before either sub-layer ("2 OLMo 2 Furious", Team OLMo 2024, arXiv:2501.00656: "reordered norm" and
QK-norm, for training stability).
Attention normalises queries and keys with one RMSNorm over the whole projection (``q_norm`` of A·d_k, ``k_norm``
of A_kv·d_k), not per head as Qwen3 does (d_k): 2H + A·d_k + A_kv·d_k norm parameters per layer. The norms are
elementwise (no FLOP): the FLOPs are LLaMA's. ``head_dim`` is no field of ``Olmo2Config``: without it the heads
are H // A wide, whatever H is; ``pad_token_id`` is 1 by default.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import FEED_FORWARD, LAYER_NORM, Layout, Param
from . import llama, qwen3
from .base import Family
from .heads import decoder_classes

_read_cache, _runs = llama.hooks(stored_head=False)  # no window keys in Olmo2Config: the cache follows them as written


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's layers (:func:`helpers.families.llama.read_cache`); ``head_dim: null`` refused where a layer reads it.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    if "head_dim" in raw and raw["head_dim"] is None and sizes["L"]:  # the attention reads config.head_dim as is
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    return _read_cache(raw, sizes, flags)


def layout(c: ModelConfig) -> Layout:
    """OLMo 2's tensors: q/k/v/o, ``q_norm`` (A·d_k) and ``k_norm`` (A_kv·d_k), SwiGLU, two norms after the sub-layers.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    H, I, A, A_kv, d_k = c["H"], c["I"], c["A"], c["A_kv"], c["d_k"]
    bias = c.flags["attention_bias"]
    layer = llama.attention_projections(c, bias)
    layer += [Param.norm("self_attn.q_norm.weight", (A * d_k,), LAYER_NORM, "A*d_k"),  # the whole projection
              Param.norm("self_attn.k_norm.weight", (A_kv * d_k,), LAYER_NORM, "A_kv*d_k"),
              Param.matrix("mlp.gate_proj.weight", (I, H), FEED_FORWARD, "I*H"),
              Param.matrix("mlp.up_proj.weight", (I, H), FEED_FORWARD, "I*H"),
              Param.matrix("mlp.down_proj.weight", (H, I), FEED_FORWARD, "H*I"),
              Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H"),
              Param.norm("post_feedforward_layernorm.weight", (H,), LAYER_NORM, "H")]
    return llama.decoder_layout(c, layer)


def formulas(c: ModelConfig) -> dict[str, str]:
    """OLMo 2's parameter formulas per component: Qwen3's, its QK-norms over the whole projections (A·d_k and
    A_kv·d_k) filed with the other norms.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    return qwen3.formulas(c, norms="L*(2*H + A*d_k + A_kv*d_k) + H")


OLMO2 = Family(
    model_type="olmo2",
    architecture="Olmo2ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 50304),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32, minimum=0),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", None, nullable=True),  # None or null: A (multi-head attention)
        Size("head_dim", "d_k", None),  # not an Olmo2Config field, but read: H // A without it
        Size("intermediate_size", "I", 11008),
        Size("max_position_embeddings", "P", 2048),
        llama.WINDOW,
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False)),
    derive=llama.LLAMA.derive,
    read=read,
    runs=_runs,
    heads_divide_hidden="never",  # no check in Olmo2Config: the projections are A·d_k wide
    pad_token_id=1,
    layout=layout,
    formulas=formulas,
    flops=llama.flops,  # the norms are elementwise: LLaMA's matmuls
    kv_cache=llama.kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Olmo2ForCausalLM",
    classes=decoder_classes("Olmo2", "model.", token_head=None),
)
