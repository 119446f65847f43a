"""DeepSeek-V3 as transformers builds it (``DeepseekV3ForCausalLM``): latent attention (MLA), shared and routed experts.

Used in ``09_modern_architectures``. Symbols (config key → symbol, DeepSeek-V3's value):

* attention (MLA, ``DeepseekV3Attention``): ``num_attention_heads`` A (128) heads, each with a query/key of
  d_k = d_nope + d_rope (transformers' ``qk_head_dim``: ``qk_nope_head_dim`` d_nope 128 + ``qk_rope_head_dim``
  d_rope 64 = 192) and a value of ``v_head_dim`` d_v (128). The query goes through a low-rank bottleneck of
  ``q_lora_rank`` r_q (1536): ``q_a_proj`` (r_q × H), the RMSNorm ``q_a_layernorm`` (r_q), ``q_b_proj``
  (A·d_k × r_q); with ``q_lora_rank: null`` a plain ``q_proj`` (A·d_k × H) instead. Keys and values come from a
  latent of ``kv_lora_rank`` r_kv (512): ``kv_a_proj_with_mqa`` (r_kv + d_rope) × H makes the latent and one
  rotary key shared by every head, ``kv_a_layernorm`` (r_kv) normalises the latent, ``kv_b_proj``
  (A·(d_nope + d_v) × r_kv) re-projects it into each head's key part and value, ``o_proj`` is H × A·d_v.
  ``attention_bias`` puts a bias on ``q_a_proj``, ``kv_a_proj_with_mqa`` and ``o_proj`` only. The heads need not
  divide H (the projections are A·d_k and A·d_v wide); ``num_key_value_heads`` A_kv must equal A (each head's
  key and value are re-projected from the latent; transformers' forward fails otherwise).
* feed-forward: the first ``first_k_dense_replace`` L_f (3) layers keep a dense SwiGLU of ``intermediate_size``
  I (18432); the other L − L_f (58) are sparse (``DeepseekV3MoE``): ``n_routed_experts`` E (256) experts of
  width ``moe_intermediate_size`` I_e (2048), fused as transformers stores them (``mlp.experts.gate_up_proj``
  E × 2I_e × H, ``mlp.experts.down_proj`` E × H × I_e), the router ``mlp.gate.weight`` (E × H), and
  ``n_shared_experts`` n_s (1) shared experts run on every token, one SwiGLU of width n_s·I_e
  (``mlp.shared_experts.{gate,up,down}_proj``). The router picks ``num_experts_per_tok`` k (8) experts per token
  among the ``topk_group`` k_g (4) best of ``n_group`` g (8) groups of E/g experts.

What is counted is what ``model.parameters()`` holds. Not counted, on purpose:

* ``mlp.gate.e_score_correction_bias`` (E per sparse layer, 14,848 values in DeepSeek-V3): a *buffer*
  (``nn.Buffer``), saved in the checkpoint and added to the router's scores, but no parameter (no gradient);
* the multi-token-prediction module (``num_nextn_predict_layers``, alias ``num_mtp_layers``; layer 61 of the
  checkpoint, "11.5B" in the paper): ``DeepseekV3ForCausalLM`` does not build it (it skips ``model.layers.61.*``
  when loading; ``generate(..., use_mtp=True)`` loads it as a separate model), so the key is read by nobody here;
* ``quantization_config`` (DeepSeek-V3 ships fp8 e4m3 weights with one fp32 ``weight_scale_inv`` per 128 × 128
  block): how the checkpoint stores the weights, not which weights the architecture has. The count is of the
  model ``DeepseekV3ForCausalLM(config)`` builds, the same with or without the key; a quantised load adds those
  scale tensors beside the weights.

Refused (one line naming the key): ``moe_layer_freq`` other than 1 (DeepSeek's own code makes only every
``moe_layer_freq``-th layer sparse; transformers ignores the key and makes every layer from L_f on sparse),
A_kv ≠ A, an odd d_rope (rotary pairs), L_f > L, k > E, k_g > g, g not dividing E, groups of fewer than 2
experts (the router scores a group by its best two), k more than the k_g kept groups hold, ranks and head sizes
of 0. ``scoring_func``, ``topk_method``, ``routed_scaling_factor``, ``rope_scaling`` change no parameter and no
matmul and are not read.

The cache (transformers 5.23): each layer keeps the normalised latent as its keys (r_kv wide) and the rotated
shared key as its values (d_rope wide), one head: L·(r_kv + d_rope) values per token, where full multi-head keys
and values, as attention uses them after ``kv_b_proj``, would be L·A·(d_k + d_v) (``Family.kv_cache_full``).
The forward FLOPs are per routed token: each token through k routed experts and the shared experts, the
router on every token.
"""

from __future__ import annotations

from typing import Mapping

from ..config import ConfigError, Flag, ModelConfig, Size, _divides
from ..params import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout,
    Param,
)
from . import llama
from .base import Family, mixed_stack
from .heads import decoder_classes, expand_experts


def _attention(c: ModelConfig) -> list[Param]:
    """MLA's tensors as ``DeepseekV3Attention`` registers them, relative to the layer."""
    H, A, d_k, d_nope, d_rope, d_v, r_kv = c["H"], c["A"], c["d_k"], c["d_nope"], c["d_rope"], c["d_v"], c["r_kv"]
    bias = c.flags["attention_bias"]
    rows: list[Param] = []
    if "r_q" in c.sizes:  # the query through its low-rank bottleneck
        r_q = c["r_q"]
        rows.append(Param.matrix("self_attn.q_a_proj.weight", (r_q, H), ATTENTION, "r_q*H"))
        if bias:
            rows.append(Param.bias("self_attn.q_a_proj.bias", (r_q,), ATTENTION, "r_q"))
        rows += [Param.norm("self_attn.q_a_layernorm.weight", (r_q,), LAYER_NORM, "r_q"),
                 Param.matrix("self_attn.q_b_proj.weight", (A * d_k, r_q), ATTENTION, "A*d_k*r_q")]
    else:  # q_lora_rank: null
        rows.append(Param.matrix("self_attn.q_proj.weight", (A * d_k, H), ATTENTION, "A*d_k*H"))
    rows.append(Param.matrix("self_attn.kv_a_proj_with_mqa.weight", (r_kv + d_rope, H), ATTENTION, "(r_kv + d_rope)*H"))
    if bias:
        rows.append(Param.bias("self_attn.kv_a_proj_with_mqa.bias", (r_kv + d_rope,), ATTENTION, "r_kv + d_rope"))
    rows += [Param.norm("self_attn.kv_a_layernorm.weight", (r_kv,), LAYER_NORM, "r_kv"),
             Param.matrix("self_attn.kv_b_proj.weight", (A * (d_nope + d_v), r_kv), ATTENTION, "A*(d_nope + d_v)*r_kv"),
             Param.matrix("self_attn.o_proj.weight", (H, A * d_v), ATTENTION, "H*A*d_v")]
    if bias:
        rows.append(Param.bias("self_attn.o_proj.bias", (H,), ATTENTION, "H"))
    return rows


def _swiglu(prefix: str, H: int, width: int, symbol: str) -> list[Param]:
    """``gate_proj``, ``up_proj`` (width × H) and ``down_proj`` (H × width) of a ``DeepseekV3MLP``."""
    return [Param.matrix(f"{prefix}.gate_proj.weight", (width, H), FEED_FORWARD, f"{symbol}*H"),
            Param.matrix(f"{prefix}.up_proj.weight", (width, H), FEED_FORWARD, f"{symbol}*H"),
            Param.matrix(f"{prefix}.down_proj.weight", (H, width), FEED_FORWARD, f"H*{symbol}")]


def _moe(c: ModelConfig) -> list[Param]:
    """A sparse layer's ``DeepseekV3MoE``: the routed experts (fused), the router, the shared experts."""
    H, I_e, E = c["H"], c["I_e"], c["E"]
    return [Param.experts("mlp.experts.gate_up_proj", (E, 2 * I_e, H), FEED_FORWARD, "2*E*I_e*H"),
            Param.experts("mlp.experts.down_proj", (E, H, I_e), FEED_FORWARD, "E*H*I_e"),
            Param.matrix("mlp.gate.weight", (E, H), FEED_FORWARD, "E*H"),
            *_swiglu("mlp.shared_experts", H, c["n_s"] * I_e, "n_s*I_e")]


def _layout(c: ModelConfig) -> Layout:
    """Token table, L_f dense layers, L − L_f sparse layers, the final norm and the head (untied unless tied)."""
    H, L, L_f = c["H"], c["L"], c["L_f"]
    norms = [Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
             Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    dense = _attention(c) + _swiglu("mlp", H, c["I"], "I") + norms
    sparse = _attention(c) + _moe(c) + norms
    head, _, tail = llama.decoder_layout(c, dense).blocks  # LLaMA's token table, final norm and lm_head
    layers = [Block("model.layers.{i}.", tuple(params), run)
              for params, run in ((dense, range(0, L_f)), (sparse, range(L_f, L))) if len(run)]
    return Layout((head, *layers, tail))


def _per_layer(c: ModelConfig, dense: str, sparse: str) -> str:
    """``dense`` in each of the L_f first layers, ``sparse`` in each of the L − L_f others."""
    return mixed_stack(c["L"], c["L_f"], dense, sparse, "L_f", "(L - L_f)")


def _attention_matrices(c: ModelConfig) -> str:
    """The weights of one layer's attention matrices: the query path, the latent, its re-projection, the output."""
    query = "H*r_q + A*d_k*r_q" if "r_q" in c.sizes else "A*d_k*H"
    return f"{query} + (r_kv + d_rope)*H + A*(d_nope + d_v)*r_kv + A*d_v*H"


def _formulas(c: ModelConfig) -> dict[str, str]:
    """Parameters per component: MLA's matrices (and biases), the feed-forward of the dense and sparse layers
    (every routed expert counted, the router, the shared experts), the norms (q_a and kv_a norms among them)."""
    lora = "r_q" in c.sizes
    attention = _attention_matrices(c)
    if c.flags["attention_bias"]:
        attention += (" + r_q" if lora else "") + " + r_kv + d_rope + H"
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: _per_layer(c, "3*H*I", "3*E*H*I_e + E*H + 3*n_s*H*I_e"),
        LAYER_NORM: f"L*(2*H + {'r_q + ' if lora else ''}r_kv) + H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


def _flops(c: ModelConfig) -> dict[str, str]:
    """Forward FLOPs: every attention matrix on every token, the S×S matmuls over d_k (scores) and d_v (values),
    each sparse layer's k routed experts per token plus its shared experts and router, the LM head."""
    return {
        EMBEDDINGS: "0",
        ATTENTION_PROJECTIONS: f"2*L*B*S*({_attention_matrices(c)})",
        ATTENTION_SCORES: "2*L*B*S**2*A*(d_k + d_v)",  # QKᵀ over d_k, then the weights times V over d_v
        FEED_FORWARD: _per_layer(c, "6*B*S*H*I", "6*B*S*k*H*I_e + 2*B*S*E*H + 6*B*S*n_s*H*I_e"),
        LAYER_NORM: "0",
        LM_HEAD: "2*B*S*V*H",
    }


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """d_k = d_nope + d_rope; A_kv = A; and the checks transformers' build or forward pass would fail on."""
    A = sizes["A"]
    sizes.setdefault("A_kv", A)  # num_key_value_heads: null
    if sizes["A_kv"] != A:
        raise ConfigError(keys["A_kv"], f"{sizes['A_kv']} differs from {keys['A']} = {A}: latent attention "
                                        "re-projects every head's key and value from the latent (transformers' "
                                        "forward needs the two equal)")
    if sizes["d_rope"] % 2:
        raise ConfigError(keys["d_rope"], f"must be even (rotary embeddings turn pairs of dimensions), got {sizes['d_rope']}")
    sizes["d_k"] = sizes["d_nope"] + sizes["d_rope"]  # transformers' qk_head_dim
    L, L_f, E, k, g, k_g = sizes["L"], sizes["L_f"], sizes["E"], sizes["k"], sizes["g"], sizes["k_g"]
    if L_f > L:
        raise ConfigError(keys["L_f"], f"{L_f} dense layers, but only {keys['L']} = {L} layers")
    if L_f == L:  # no sparse layer: the router's sizes are never used
        return
    if k > E:
        raise ConfigError(keys["k"], f"{k} experts per token, but only {keys['E']} = {E} experts")
    if k_g > g:
        raise ConfigError(keys["k_g"], f"{k_g} groups kept, but only {keys['g']} = {g} groups")
    _divides(keys["g"], keys["E"], g, E, "the router splits the experts into equal groups")
    if E // g < 2:
        raise ConfigError(keys["g"], f"groups of {E // g} expert ({keys['E']} = {E} in {g} groups): the router scores "
                                     "a group by its best two experts")
    if k > k_g * (E // g):
        raise ConfigError(keys["k"], f"{k} experts per token, but the {keys['k_g']} = {k_g} groups kept hold only "
                                     f"{k_g * (E // g)} experts")


DEEPSEEK_V3 = Family(
    model_type="deepseek_v3",
    architecture="DeepseekV3ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 129280),
        Size("hidden_size", "H", 7168),
        Size("num_hidden_layers", "L", 61),
        Size("num_attention_heads", "A", 128),
        Size("num_key_value_heads", "A_kv", 128, nullable=True),  # null: A (DeepseekV3Config's __post_init__)
        Size("q_lora_rank", "r_q", 1536, nullable=True),  # null: a plain q_proj, no bottleneck
        Size("kv_lora_rank", "r_kv", 512),
        Size("qk_nope_head_dim", "d_nope", 128),
        Size("qk_rope_head_dim", "d_rope", 64),
        Size("v_head_dim", "d_v", 128),
        Size("intermediate_size", "I", 18432),  # the dense layers' SwiGLU
        Size("moe_intermediate_size", "I_e", 2048),  # each routed expert's SwiGLU, and n_s of them shared
        Size("max_position_embeddings", "P", 4096),
        Size("n_routed_experts", "E", 256, aliases=("num_local_experts",)),
        Size("num_experts_per_tok", "k", 8),
        Size("n_shared_experts", "n_s", 1, minimum=0),  # 0: no shared experts (their tensors are 0 wide)
        Size("first_k_dense_replace", "L_f", 3, minimum=0),
        Size("n_group", "g", 8),
        Size("topk_group", "k_g", 4),
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("norm_topk_prob", True)),
    refused={"moe_layer_freq": (1, "DeepSeek's own code makes only every moe_layer_freq-th layer sparse, transformers "
                                   "makes every layer from first_k_dense_replace on sparse: the two models differ")},
    derive=_derive,
    heads_divide_hidden="never",  # the projections are A·d_k and A·d_v wide, whatever H is
    pad_token_id=None,
    layout=_layout,
    formulas=_formulas,
    flops=_flops,
    kv_cache=lambda c: "L*(r_kv + d_rope)*S*B",  # the latent (keys) and the shared rotary key (values), one head
    kv_cache_full=lambda c: "L*A*(d_k + d_v)*S*B",  # every head's key and value, as attention uses them
    positions=lambda c: None,  # rotary: no position table
    torch_ref="DeepseekV3ForCausalLM",
    classes=decoder_classes("DeepseekV3", "model."),  # no question-answering class in transformers 5.23
    checkpoint_names=expand_experts("gate_proj", "up_proj", "down_proj", width="I_e"),  # mlp.experts.{e}.gate_proj ...
)
