"""LLaMA as transformers builds it (``LlamaForCausalLM``: RMSNorm, SwiGLU, rotary positions, GQA).

Introduced in ``07_decoder_llms``. The layout, formulas and FLOPs here serve every family that keeps
LLaMA's tensors and changes only its config dialect or its cache (Mistral).
"""

from __future__ import annotations

from typing import Mapping

from ..config import Flag, ModelConfig, Size, _divides
from ..params import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout,
    Param,
)
from .base import Family
from .heads import decoder_classes


def decoder_layout(c: ModelConfig, layer: list[Param]) -> Layout:
    """What every LLaMA-style decoder holds around its layers: ``model.embed_tokens`` (V×H, also the LM head when
    tied), the stack of L identical ``layer``s under ``model.layers.{i}.``, the final ``model.norm`` and an untied
    ``lm_head``. Shared by the families that keep LLaMA's names (Qwen2, Phi-3, Mixtral ...).

    No notebook calls it; it works behind the helpers of ``07_decoder_llms``.
    """
    V, H, tied = c["V"], c["H"], c.flags["tie_word_embeddings"]
    tail = [Param.norm("model.norm.weight", (H,), LAYER_NORM, "H")]
    if not tied:
        tail.append(Param.matrix("lm_head.weight", (V, H), LM_HEAD, "V*H"))
    return Layout((
        Block.once(Param.table("model.embed_tokens.weight", (V, H), EMBEDDINGS, "V*H", tokens="B*S" if tied else "")),
        Block.stack("model.layers.{i}.", layer, c["L"]),
        Block.once(*tail),
    ))


def _layout(c: ModelConfig) -> Layout:
    """LLaMA's tensors: token table, L decoder layers, final RMSNorm, untied head unless tied."""
    H, I, A, A_kv, d_k = c["H"], c["I"], c["A"], c["A_kv"], c["d_k"]
    attention_bias, mlp_bias = c.flags.get("attention_bias", False), c.flags.get("mlp_bias", False)
    layer = []
    for proj, out, sym in (("q_proj", A * d_k, "A"), ("k_proj", A_kv * d_k, "A_kv"), ("v_proj", A_kv * d_k, "A_kv")):
        layer.append(Param.matrix(f"self_attn.{proj}.weight", (out, H), ATTENTION, f"{sym}*d_k*H"))
        if attention_bias:
            layer.append(Param.bias(f"self_attn.{proj}.bias", (out,), ATTENTION, f"{sym}*d_k"))
    layer.append(Param.matrix("self_attn.o_proj.weight", (H, A * d_k), ATTENTION, "H*A*d_k"))
    if attention_bias:
        layer.append(Param.bias("self_attn.o_proj.bias", (H,), ATTENTION, "H"))
    for proj, shape, formula, bias, bias_formula in (
        ("gate_proj", (I, H), "I*H", I, "I"),
        ("up_proj", (I, H), "I*H", I, "I"),
        ("down_proj", (H, I), "H*I", H, "H"),
    ):
        layer.append(Param.matrix(f"mlp.{proj}.weight", shape, FEED_FORWARD, formula))
        if mlp_bias:
            layer.append(Param.bias(f"mlp.{proj}.bias", (bias,), FEED_FORWARD, bias_formula))
    layer += [Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
              Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    return decoder_layout(c, layer)


def _formulas(c: ModelConfig) -> dict[str, str]:
    """LLaMA's parameter formulas per component."""
    attention = "2*A*d_k*H + 2*A_kv*d_k*H"
    if c.flags.get("attention_bias", False):
        attention += " + A*d_k + 2*A_kv*d_k + H"
    feed_forward = "3*H*I" + (" + 2*I + H" if c.flags.get("mlp_bias", False) else "")
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: f"L*({feed_forward})",
        LAYER_NORM: "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


FLOPS = {
    EMBEDDINGS: "0",
    ATTENTION_PROJECTIONS: "4*L*B*S*H*d_k*(A + A_kv)",
    ATTENTION_SCORES: "4*L*B*S**2*A*d_k",  # eager attention: the full S×S, the causal mask applied after
    FEED_FORWARD: "6*L*B*S*H*I",
    LAYER_NORM: "0",
    LM_HEAD: "2*B*S*V*H",
}


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """A_kv = A unless given (multi-head attention); the query heads must share the key/value heads evenly."""
    sizes.setdefault("A_kv", sizes["A"])
    _divides(keys["A_kv"], keys["A"], sizes["A_kv"], sizes["A"],
             "grouped-query attention shares each key/value head among a whole number of query heads")


LLAMA = Family(
    model_type="llama",
    architecture="LlamaForCausalLM",
    sizes=(
        Size("vocab_size", "V", 32000),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", None),  # None: A (multi-head attention)
        Size("head_dim", "d_k", None),  # None: H // A
        Size("intermediate_size", "I", 11008),
        Size("max_position_embeddings", "P", 2048),
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("mlp_bias", False)),
    derive=_derive,
    pad_token_id=None,
    layout=_layout,
    formulas=_formulas,
    flops=lambda c: dict(FLOPS),
    kv_cache=lambda c: "2*L*A_kv*d_k*S*B",
    positions=lambda c: None,  # rotary: no position table
    torch_ref="LlamaForCausalLM",
    classes=decoder_classes("Llama", "model.", qa_prefix="transformer."),
)
