"""Qwen3-Next as transformers builds it (``Qwen3NextForCausalLM``): linear attention on 3 layers of 4, 512 experts.

Works behind the helpers of ``11_todays_models``. A hybrid decoder (Qwen team 2025, Qwen3-Next; Yang et al. 2025,
*Gated Delta Networks*). Each layer mixes tokens by one of two kinds (``layer_types``; without it, every
``full_attention_interval``-th layer, 4 by default, is full attention and the others linear):

* **Gated DeltaNet** (``linear_attn``, L_l layers): ``in_proj_qkvz`` (H → 2·G_k·d_gk + 2·G_v·d_gv: queries and keys
  of G_k heads of d_gk, values and an output gate z of G_v heads of d_gv), ``in_proj_ba`` (H → 2·G_v: the write
  strength β and the decay's input per value head), a depthwise causal convolution of K_c taps over the
  2·G_k·d_gk + G_v·d_gv query, key and value channels (``conv1d``, no bias), ``dt_bias`` and ``A_log`` (G_v each:
  the decay g = −exp(A_log)·softplus(a + dt_bias)), a gated RMSNorm of d_gv and ``out_proj`` (G_v·d_gv → H). Each
  value head keeps a d_gk × d_gv state S, per token decayed, corrected by the delta rule and read by the query:
  S ← e^g·S + β·k·(v − e^g·Sᵀk)ᵀ, o = Sᵀq. Its FLOPs are counted by that recurrence, 6·d_gk·d_gv per token and value
  head (:data:`helpers.flops.NOTES`); a chunked kernel does a different, larger amount of work: transformers' torch
  fallback (chunks of 64, what FlopCounterMode sees on a prefill) counts 4·64²·d_gk + 2·64²·d_gv + 6·64·d_gk·d_gv per
  chunk and value head over the sequence padded to whole chunks, 1.5× the recurrence at d_gk = d_gv = 128 and
  S = 4,096 (695,784,701,952 against 463,856,467,968 FLOPs per sequence for Qwen3-Next-80B-A3B's 36 linear layers,
  ``tests/test_family_qwen3_next.py``). The convolution is counted as the torch path runs it with a cache: the
  input (left-padded to K_c when shorter) padded by K_c − 1 on both sides, max(S, K_c) + K_c − 1 outputs per
  channel (a causal kernel computes S). The cache keeps, per linear layer, a convolution state (B, conv channels,
  K_c) at the model's dtype and the recurrent state (B, G_v, d_gk, d_gv) in fp32, whatever S is
  (:class:`~helpers.families.base.StateTerm`).
* **gated full attention** (``self_attn``, L_f layers): Qwen3's attention (q/k RMSNorms of d_k, GQA, ``head_dim``
  256 by default, a quarter of it rotary) whose ``q_proj`` is twice as wide, 2·A·d_k: the second half is a
  sigmoid gate on the attention output, per head and dimension. Its keys and values are cached, every token.

The feed-forward is Qwen3-MoE's choice of dense or sparse per layer (``mlp_only_layers``, ``decoder_sparse_step``)
with, in a sparse layer, the router first (``mlp.gate``, E × H), E fused experts of I_e, and a shared expert of
``shared_expert_intermediate_size`` I_s (``mlp.shared_expert``) behind its own sigmoid gate (``shared_expert_gate``,
1 × H), run on every token. Its RMSNorms store their gains as offsets from 1 (the linear layers' gated norm does
not); the count is the same.
Qwen3-Next-80B-A3B: 79,674,391,296 parameters, 3,874,929,408 active per token (the total less the 502 experts of 512
a token skips in each of its 48 layers); the card's "A3B" (3B activated) is 3,252,599,552 without the token table and
the untied head, 3,563,764,480 without the token table alone.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, DELTA_RULE, EMBEDDINGS, FEED_FORWARD, LAYER_NORM,
    LINEAR_ATTENTION, LM_HEAD, Block, Layout, Param,
)
from . import llama, qwen3_moe
from .base import Family, StateTerm, mixed_stack, too_many_experts
from .deepseek_v3 import swiglu
from .heads import decoder_classes, expand_experts
from .llama import FULL

LINEAR = "linear_attention"
CHANNELS = "(2*G_k*d_gk + G_v*d_gv)"  # the convolution's channels: queries, keys and values (not z)


def _types(raw: Mapping[str, Any], L: int) -> list[str]:
    """``layer_types`` as Qwen3NextConfig settles it: the file's (validated), else every ``full_attention_interval``-th
    layer (4 by default) full and the others linear, as its ``bool((i + 1) % interval)`` decides."""
    given = llama.read_layer_types(raw, L)
    if given is not None:
        return given
    interval = raw.get("full_attention_interval", 4)
    if L and (not isinstance(interval, (int, float)) or interval == 0):  # no layer: nothing divides by it
        raise ConfigError("full_attention_interval", f"must be a non-zero number (every how many layers one is full "
                                                     f"attention), got {json.dumps(interval)}")
    return [LINEAR if (i + 1) % interval else FULL for i in range(L)]


def _rotary(raw: Mapping[str, Any]) -> Any:
    """The rotary fraction of a head: ``rope_parameters``' ``partial_rotary_factor``, else the top-level key (null:
    none is set, and the rotary embedding reads 1.0), else 0.25 (Qwen3NextConfig's default)."""
    rope = raw.get("rope_parameters")
    if isinstance(rope, dict) and "partial_rotary_factor" in rope:
        return rope["partial_rotary_factor"]
    factor = raw.get("partial_rotary_factor", 0.25)
    return 1.0 if factor is None else factor


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The layer kinds (``{"types": ...}``: 1 linear attention, 2 full attention, 0 any other type, which builds no
    token mixer), L_l and L_f, the dense layers (``mlp_only_layers``) and L_e, and what transformers refuses to build:
    a convolution of 0 channels, heads of 0 dimensions, an odd head wholly rotary (``validate_rope``); R, the rotary
    dimensions of a head (a quarter of d_k by default, rounded up to pairs).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    types = _types(raw, sizes["L"])
    kinds = tuple(1 if t == LINEAR else 2 if t == FULL else 0 for t in types)
    sizes["L_l"], sizes["L_f"] = kinds.count(1), kinds.count(2)
    dense = qwen3_moe.read_sparse_layers(raw, sizes)
    if sizes["L_l"] and not 2 * sizes["G_k"] * sizes["d_gk"] + sizes["G_v"] * sizes["d_gv"]:
        raise ConfigError("linear_num_value_heads", "the convolution has 0 channels (2·linear_num_key_heads·"
                                                    "linear_key_head_dim + linear_num_value_heads·linear_value_head_dim "
                                                    "= 0): torch refuses a convolution of 0 groups")
    d_k, factor = sizes["d_k"], _rotary(raw)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise ConfigError("partial_rotary_factor", f"must be a number (the fraction of a head that is rotary), got "
                                                   f"{json.dumps(factor)}")
    if d_k == 0 and sizes["L_f"]:
        raise ConfigError("head_dim", "0 dimensions per head: the attention's scaling head_dim ** -0.5 divides by 0")
    if d_k > 4 and d_k % 2 and int(d_k * factor) == d_k:
        raise ConfigError("head_dim", f"{d_k}: rotary embeddings turn pairs of dimensions, an odd head wider than 4, "
                                      "wholly rotary, is refused by transformers (validate_rope)")
    sizes["R"] = 2 * -(-int(d_k * factor) // 2)  # rotary dimensions as transformers turns them: pairs, rounded up
    if sizes["L_f"]:  # a head of 1: queries and keys as wide as the angles (d_qk)
        llama.widen(sizes, llama.rotary_width(d_k, int(d_k * factor)))
    return {"types": kinds, "mlp_only_layers": dense}


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """What transformers builds but cannot run: a layer type other than linear or full attention (the model has a mask
    for those two only), key/value heads not dividing the query heads, value heads not a multiple of the key heads of
    the linear layers, a rotary part wider than the head, more experts per token than experts.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    types = _types(raw, sizes["L"])
    other = sorted({t for t in types if t not in (LINEAR, FULL)})
    problem: tuple[str, str] | None = None
    if other:
        problem = ("layer_types", f"{json.dumps(other[0])} layers: Qwen3NextModel builds masks for linear_attention "
                                  "and full_attention layers only (its forward pass fails)")
    elif sizes["L_f"] and sizes["A"] % sizes["A_kv"]:
        problem = ("num_key_value_heads", f"grouped-query attention shares each key/value head among a whole number of "
                                          f"query heads: num_attention_heads = {sizes['A']} is not divisible by "
                                          f"num_key_value_heads = {sizes['A_kv']}")
    elif sizes["L_l"] and (not sizes["G_k"] or sizes["G_v"] % sizes["G_k"] or not sizes["d_gk"] or not sizes["K_c"]):
        key = "linear_conv_kernel_dim" if not sizes["K_c"] else "linear_key_head_dim" if not sizes["d_gk"] else \
            "linear_num_key_heads"
        problem = (key, f"linear attention with {sizes['G_k']} key heads of {sizes['d_gk']} dimensions, "
                        f"{sizes['G_v']} value heads and a convolution of {sizes['K_c']} taps: each key head serves a "
                        "whole number (at least 1) of value heads, and heads and kernel need a width (its forward pass "
                        "fails)")
    elif sizes["L_f"] and llama.rotary_width(sizes["d_k"], int(sizes["d_k"] * _rotary(raw))) is None:
        given = "partial_rotary_factor" in raw or "partial_rotary_factor" in (raw.get("rope_parameters") or {})
        problem = ("partial_rotary_factor" if given else "head_dim",
                   f"{int(sizes['d_k'] * _rotary(raw))} rotary dimensions in a head of {sizes['d_k']}: rotary "
                   "embeddings turn pairs of dimensions, and the last pair reaches past the head (its forward pass "
                   "fails)")
    elif sizes["L_e"]:
        problem = too_many_experts(sizes, "num_experts")
    problems = {} if problem is None else {"forward": problem}
    if sizes["L_l"] and not sizes["L_f"] and not other:  # no layer keeps keys: the cache cannot say how long it is
        key = "layer_types" if raw.get("layer_types") is not None else "full_attention_interval" \
            if "full_attention_interval" in raw else "num_hidden_layers"
        problems["cache"] = (key, "no full-attention layer: transformers' cache holds linear-attention states only and "
                                  "cannot tell how many tokens it has seen (get_seq_length), so the model fails with a "
                                  "cache (it runs without one)")
    return problems


def _gated_attention(c: ModelConfig) -> list[Param]:
    """LLaMA's projections with ``q_proj`` twice as wide (queries and their output gate), then Qwen3's q/k norms."""
    A, d_k = c["A"], c["d_k"]
    rows = []
    for p in llama.attention_projections(c, c.flags["attention_bias"]):
        if p.name.startswith("self_attn.q_proj."):  # queries and their gate, 2·A·d_k wide
            p = replace(p, shape=(2 * A * d_k, *p.shape[1:]), formula=f"2*{p.formula}")
        rows.append(p)
    return rows + [Param.norm("self_attn.q_norm.weight", (d_k,), LAYER_NORM, "d_k"),
                   Param.norm("self_attn.k_norm.weight", (d_k,), LAYER_NORM, "d_k")]


def _linear_attention(c: ModelConfig) -> list[Param]:
    """``Qwen3NextGatedDeltaNet``'s tensors in ``named_parameters()`` order (its own two vectors first)."""
    H, G_k, G_v, d_gk, d_gv, K_c = c["H"], c["G_k"], c["G_v"], c["d_gk"], c["d_gv"], c["K_c"]
    channels = 2 * G_k * d_gk + G_v * d_gv
    return [Param.bias("linear_attn.dt_bias", (G_v,), LINEAR_ATTENTION, "G_v"),
            Param.bias("linear_attn.A_log", (G_v,), LINEAR_ATTENTION, "G_v"),
            Param.convolution("linear_attn.conv1d.weight", (channels, 1, K_c), LINEAR_ATTENTION, f"{CHANNELS}*K_c",
                              tokens="B*(max(S, K_c) + K_c - 1)"),
            Param.matrix("linear_attn.in_proj_qkvz.weight", (channels + G_v * d_gv, H), LINEAR_ATTENTION,
                         "(2*G_k*d_gk + 2*G_v*d_gv)*H"),
            Param.matrix("linear_attn.in_proj_ba.weight", (2 * G_v, H), LINEAR_ATTENTION, "2*G_v*H"),
            Param.norm("linear_attn.norm.weight", (d_gv,), LAYER_NORM, "d_gv"),
            Param.matrix("linear_attn.out_proj.weight", (H, G_v * d_gv), LINEAR_ATTENTION, "H*G_v*d_gv")]


def _moe(c: ModelConfig) -> list[Param]:
    """A sparse layer's ``Qwen3NextSparseMoeBlock``: the router, the fused experts, the shared expert and its gate."""
    H = c["H"]
    experts, router = qwen3_moe._experts(c)[:2], qwen3_moe._experts(c)[2:]
    return [*router, *experts, *swiglu("mlp.shared_expert", H, c["I_s"], "I_s"),
            Param.matrix("mlp.shared_expert_gate.weight", (1, H), FEED_FORWARD, "H")]


def layout(c: ModelConfig) -> Layout:
    """Token table, the layers (runs of consecutive layers of the same mixer and feed-forward, each built once), the
    final norm and the head (untied unless tied).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H = c["H"]
    mixers = {0: [], 1: _linear_attention(c), 2: _gated_attention(c)}
    mlps = {False: swiglu("mlp", H, c["I"], "I"), True: _moe(c)}
    norms = [Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
             Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    head, _, tail = llama.decoder_layout(c, norms).blocks  # LLaMA's token table, final norm and lm_head
    runs: list[tuple[tuple[int, bool], range]] = []
    for i, kind in enumerate(c.lists["types"]):
        key = (kind, qwen3_moe.is_sparse(c, i))
        if runs and runs[-1][0] == key:
            runs[-1] = (key, range(runs[-1][1].start, i + 1))
        else:
            runs.append((key, range(i, i + 1)))
    layers = [Block("model.layers.{i}.", (*mixers[kind], *mlps[sparse], *norms), run) for (kind, sparse), run in runs]
    return Layout((head, *layers, tail))


def _attention(c: ModelConfig) -> str:
    """One full-attention layer's parameters: the gated query, keys, values, output (and their biases)."""
    bias = " + 2*A*d_k + 2*A_kv*d_k + H" if c.flags["attention_bias"] else ""
    return f"3*A*d_k*H + 2*A_kv*d_k*H{bias}"


def _feed_forward(c: ModelConfig, dense: str, sparse: str) -> str:
    """``dense`` per dense layer, ``sparse`` per sparse layer (Qwen3-MoE's split)."""
    return mixed_stack(c["L"], c["L"] - c["L_e"], dense, sparse, "(L - L_e)", "L_e")


def formulas(c: ModelConfig) -> dict[str, str]:
    """Parameters per component: the full layers' attention, the linear layers' Gated DeltaNet (norm gains filed with
    the norms), the feed-forward (every expert counted, the shared expert and its gate), the norms.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    result = {EMBEDDINGS: "V*H"}
    if c["L_f"]:
        result[ATTENTION] = f"L_f*({_attention(c)})"
    if c["L_l"]:
        result[LINEAR_ATTENTION] = f"L_l*(H*(2*G_k*d_gk + 3*G_v*d_gv + 2*G_v) + K_c*{CHANNELS} + 2*G_v)"
    if c["L"]:
        result[FEED_FORWARD] = _feed_forward(c, "3*H*I", "E*H + 3*E*H*I_e + 3*H*I_s + H")
    result[LAYER_NORM] = "(2*L + 1)*H" + (" + 2*L_f*d_k" if c["L_f"] else "") + (" + L_l*d_gv" if c["L_l"] else "")
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


def flops(c: ModelConfig) -> dict[str, str]:
    """Forward FLOPs per component: the full layers' projections and S×S scores (eager), the linear layers' projections
    and convolution (as the torch path runs it, padded), the gated delta rule by its recurrence (a chunked kernel does
    more: :data:`helpers.flops.NOTES`), the feed-forward (k experts per token, the router, the shared expert and its
    gate on every token), the head.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    result = {EMBEDDINGS: "0"}
    if c["L_f"]:
        result[ATTENTION_PROJECTIONS] = "2*L_f*B*S*d_k*H*(3*A + 2*A_kv)"
        # eager attention: the full S×S, the causal mask applied after
        result[ATTENTION_SCORES] = llama.scores(c, "L_f") or "4*L_f*B*S**2*A*d_k"
    if c["L_l"]:
        result[LINEAR_ATTENTION] = (f"2*L_l*B*(S*H*(2*G_k*d_gk + 3*G_v*d_gv + 2*G_v) "
                                    f"+ (max(S, K_c) + K_c - 1)*K_c*{CHANNELS})")
        result[DELTA_RULE] = "6*L_l*B*S*G_v*d_gk*d_gv"  # per token and value head: Sᵀk, k·δᵀ, Sᵀq
    if c["L"]:
        result[FEED_FORWARD] = _feed_forward(c, "6*B*S*H*I", "2*B*S*E*H + 6*B*S*k*H*I_e + 6*B*S*H*I_s + 2*B*S*H")
    result[LAYER_NORM] = "0"
    result[LM_HEAD] = "2*B*S*V*H"
    return result


def kv_cache(c: ModelConfig) -> str:
    """Keys and values of the full-attention layers, every token (the linear layers' state: :func:`state`).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    two, pair = llama.key_value(c)
    return f"{two}L_f*{pair}*S*B" if c["L_f"] else "0"


def state(c: ModelConfig) -> tuple[StateTerm, ...]:
    """Per linear-attention layer: the convolution's last K_c inputs at the model's dtype, the recurrent state in fp32.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if not c["L_l"]:
        return ()
    return (StateTerm("convolution state", f"L_l*B*{CHANNELS}*K_c"),
            StateTerm("recurrent state", "L_l*B*G_v*d_gk*d_gv", bits=32))


QWEN3_NEXT = Family(
    model_type="qwen3_next",
    architecture="Qwen3NextForCausalLM",
    sizes=(
        Size("vocab_size", "V", 151936),
        Size("hidden_size", "H", 2048),
        Size("num_hidden_layers", "L", 48, minimum=0),
        Size("num_attention_heads", "A", 16),
        Size("num_key_value_heads", "A_kv", 2),  # int fields: null is refused, as transformers refuses it
        Size("head_dim", "d_k", 256, minimum=0),  # not H // A
        Size("intermediate_size", "I", 5632),  # the dense layers' SwiGLU
        Size("max_position_embeddings", "P", 32768),
        Size("moe_intermediate_size", "I_e", 512, minimum=0),
        Size("shared_expert_intermediate_size", "I_s", 512, minimum=0),
        Size("num_experts", "E", 512, minimum=-2**63),  # 0 or less: every layer dense
        Size("num_experts_per_tok", "k", 10, minimum=0),
        Size("decoder_sparse_step", "s", 1),
        Size("linear_num_key_heads", "G_k", 16, minimum=0),
        Size("linear_num_value_heads", "G_v", 32, minimum=0),
        Size("linear_key_head_dim", "d_gk", 128, minimum=0),
        Size("linear_value_head_dim", "d_gv", 128, minimum=0),
        Size("linear_conv_kernel_dim", "K_c", 4, minimum=0),
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("norm_topk_prob", True)),
    read=read,
    runs=runs,
    heads_divide_hidden="never",  # head_dim sizes the heads: the projections are A·d_k wide
    pad_token_id=None,
    layout=layout,
    formulas=formulas,
    flops=flops,
    kv_cache=kv_cache,
    state=state,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Qwen3NextForCausalLM",
    classes=decoder_classes("Qwen3Next", "model.", qa_prefix="transformer."),
    checkpoint_names=expand_experts("gate_proj", "up_proj", "down_proj", width="I_e"),  # mlp.experts.{e}.gate_proj ...
)
