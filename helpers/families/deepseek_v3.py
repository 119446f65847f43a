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

Counted as transformers builds them, though DeepSeek's own code differs or the forward pass fails: ``moe_layer_freq``
(DeepSeek's code makes only every ``moe_layer_freq``-th layer sparse; transformers ignores the key and makes every
layer from L_f on sparse, and so does the count), ``first_k_dense_replace`` beyond the depth (every layer dense:
L_f is then L), A_kv ≠ A (no tensor changes). The commands that run the model (``flops``, ``memory``, ``budget``)
refuse, in one line naming the key, what transformers' forward pass fails on: ``A // A_kv ≠ 1``, an odd d_rope,
and, where a layer is sparse, k > E, k_g > g, g not dividing E, groups of fewer than 2 experts (the router scores
a group by its best two). k more than the k_g kept groups hold runs (the other experts score −∞, ``topk`` still
picks k). Counted, and run: ranks r_q and r_kv of 0 (the bottleneck's and the latent's tensors 0 wide), d_nope = 0
(heads all rotary), k = 0 (the router scores, no expert runs). Refused everywhere: an odd d_rope wider than 4
(transformers' ``validate_rope``). ``scoring_func``, ``topk_method``, ``routed_scaling_factor``, ``rope_scaling`` change no parameter and no matmul
and are not read; ``sliding_window``, ``attention_chunk_size`` and ``layer_types`` change only the cache.

The cache (transformers 5.23): each layer keeps the normalised latent as its keys (r_kv wide) and the rotated
shared key as its values (d_rope wide), one head: L·(r_kv + d_rope) values per token, where full multi-head keys
and values, as attention uses them after ``kv_b_proj``, would be L·A·(d_k + d_v) (``Family.kv_cache_full``).
The forward FLOPs are per routed token: each token through k routed experts and the shared experts, the
router on every token.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout,
    Param,
)
from . import llama
from .base import Family, mixed_stack, too_many_experts
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


def swiglu(prefix: str, H: int, width: int, symbol: str, bias: bool = False) -> list[Param]:
    """``gate_proj``, ``up_proj`` (width × H) and ``down_proj`` (H × width) of a ``DeepseekV3MLP``, each followed by
    its bias when ``bias`` (DeepSeek-V2's ``mlp_bias``, on its dense layers' SwiGLU and its shared experts').

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    params = []
    for proj, shape, formula, out in (("gate_proj", (width, H), f"{symbol}*H", (width, symbol)),
                                      ("up_proj", (width, H), f"{symbol}*H", (width, symbol)),
                                      ("down_proj", (H, width), f"H*{symbol}", (H, "H"))):
        params.append(Param.matrix(f"{prefix}.{proj}.weight", shape, FEED_FORWARD, formula))
        if bias:
            params.append(Param.bias(f"{prefix}.{proj}.bias", (out[0],), FEED_FORWARD, out[1]))
    return params


def moe(c: ModelConfig) -> list[Param]:
    """A sparse layer's ``DeepseekV3MoE`` (and GLM-4.5's, DeepSeek-V2's): the routed experts (fused), the router, the
    shared experts (with biases under DeepSeek-V2's ``mlp_bias``).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H, I_e, E = c["H"], c["I_e"], c["E"]
    return [Param.experts("mlp.experts.gate_up_proj", (E, 2 * I_e, H), FEED_FORWARD, "2*E*I_e*H"),
            Param.experts("mlp.experts.down_proj", (E, H, I_e), FEED_FORWARD, "E*H*I_e"),
            Param.matrix("mlp.gate.weight", (E, H), FEED_FORWARD, "E*H"),
            *swiglu("mlp.shared_experts", H, c["n_s"] * I_e, "n_s*I_e", c.flags.get("mlp_bias", False))]


def dense_then_sparse(c: ModelConfig, dense: list[Param], sparse: list[Param]) -> Layout:
    """LLaMA's token table, final norm and head around L_f ``dense`` layers, then L − L_f ``sparse`` ones
    (``first_k_dense_replace``): DeepSeek-V3's, DeepSeek-V2's and GLM-4.5's stack.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    L, L_f = c["L"], c["L_f"]
    head, _, tail = llama.decoder_layout(c, dense).blocks  # LLaMA's token table, final norm and lm_head
    layers = [Block("model.layers.{i}.", tuple(params), run)
              for params, run in ((dense, range(0, L_f)), (sparse, range(L_f, L))) if len(run)]
    return Layout((head, *layers, tail))


def _layout(c: ModelConfig) -> Layout:
    """Token table, L_f dense layers, L − L_f sparse layers, the final norm and the head (untied unless tied)."""
    H = c["H"]
    norms = [Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
             Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    dense = _attention(c) + swiglu("mlp", H, c["I"], "I", c.flags.get("mlp_bias", False)) + norms
    return dense_then_sparse(c, dense, _attention(c) + moe(c) + norms)


def per_layer(c: ModelConfig, dense: str, sparse: str) -> str:
    """``dense`` in each of the L_f first layers, ``sparse`` in each of the L − L_f others.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return mixed_stack(c["L"], c["L_f"], dense, sparse, "L_f", "(L - L_f)")


def feed_forward(c: ModelConfig) -> str:
    """The feed-forward parameters of the dense and sparse layers: every routed expert counted, the router, the shared
    experts (their biases, and the dense SwiGLU's, under DeepSeek-V2's ``mlp_bias``).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if c.flags.get("mlp_bias", False):
        return per_layer(c, "3*H*I + 2*I + H", "3*E*H*I_e + E*H + 3*n_s*H*I_e + 2*n_s*I_e + H")
    return per_layer(c, "3*H*I", "3*E*H*I_e + E*H + 3*n_s*H*I_e")


def feed_forward_flops(c: ModelConfig) -> str:
    """Forward FLOPs of the feed-forward: each sparse layer's k routed experts per token, its shared experts and router.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return per_layer(c, "6*B*S*H*I", "6*B*S*k*H*I_e + 2*B*S*E*H + 6*B*S*n_s*H*I_e")


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
        FEED_FORWARD: feed_forward(c),
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
        FEED_FORWARD: feed_forward_flops(c),
        LAYER_NORM: "0",
        LM_HEAD: "2*B*S*V*H",
    }


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """d_k = d_nope + d_rope; A_kv = A unless given; L_f, the dense layers, at most L (``first_k_dense_replace`` beyond
    the depth: every layer dense); an odd d_rope wider than 4 is refused, as transformers' ``validate_rope`` does."""
    A = sizes["A"]
    sizes.setdefault("A_kv", A)  # num_key_value_heads: null
    if sizes["d_rope"] % 2 and sizes["d_rope"] > 4:
        raise ConfigError(keys["d_rope"], f"must be even (rotary embeddings turn pairs of dimensions), got {sizes['d_rope']}")
    sizes["d_k"] = sizes["d_nope"] + sizes["d_rope"]  # transformers' qk_head_dim
    sizes["L_f"] = min(sizes["L_f"], sizes["L"])


_read, _window_runs = llama.hooks(stored_head=None, rotary=None)  # DeepseekV3Config has no window keys; as written, the cache follows them


def rotary_problem(sizes: Mapping[str, int]) -> str | None:
    """Why the rotary step cannot turn d_rope dimensions (odd, or 0), None where it can.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if sizes["d_rope"] % 2 or not sizes["d_rope"]:
        return f"must be even and positive (rotary embeddings turn pairs of dimensions), got {sizes['d_rope']}"
    return None


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool],
         router: Callable[[Mapping[str, Any], Mapping[str, int]], tuple[str, str] | None] | None = None,
         rotary: Callable[[Mapping[str, int]], str | None] = rotary_problem) -> dict[str, tuple[str, str]]:
    """What transformers builds but cannot run: key/value heads with ``A // A_kv ≠ 1`` (its ``repeat_kv`` repeats the
    A re-projected heads A // A_kv times), a d_rope the rotary step cannot turn (``rotary``: odd or 0, or DeepSeek-V2's
    :func:`~helpers.families.deepseek_v2.rotary_problem`), keys and values re-projected
    0 wide (DeepSeek-V2: d_nope = d_v = 0), and a router that cannot route
    where a layer is sparse: ``router(raw, sizes)`` (DeepSeek-V2's), by default :func:`router_problem` (k > E,
    k_g > g, g not dividing E, groups of fewer than 2 experts). More experts per token than the kept groups hold
    runs: the masked scores are −∞ and ``topk`` still picks k experts.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    problems = dict(_window_runs(raw, sizes, flags))
    problems.pop("forward", None)  # LLaMA's check of the heads is not this model's
    A, A_kv = sizes["A"], sizes["A_kv"]
    found: tuple[str, str] | None = None
    if A // A_kv != 1 and sizes["L"]:
        found = ("num_key_value_heads", f"{A_kv} against num_attention_heads = {A}: transformers repeats each of the "
                                        f"{A} heads' keys num_attention_heads // num_key_value_heads = {A // A_kv} times "
                                        "and its forward pass fails unless that is 1")
    elif sizes["L"] and (why := rotary(sizes)) is not None:  # DeepSeek-V2's: :func:`~.deepseek_v2.rotary_problem`
        found = ("qk_rope_head_dim", why)
    elif sizes["d_nope"] + sizes["d_v"] == 0 and sizes["L"]:  # DeepSeek-V2 accepts a d_v of 0
        found = ("v_head_dim", "0, with qk_nope_head_dim = 0: kv_b_proj re-projects the latent into heads 0 wide, "
                               "which transformers' forward pass cannot split")
    elif sizes["L_f"] < sizes["L"]:  # a sparse layer routes
        found = router(raw, sizes) if router is not None else router_problem(sizes)
    if found is not None:
        problems["forward"] = found
    return problems


def router_problem(sizes: Mapping[str, int], best: int = 2) -> tuple[str, str] | None:
    """What stops the group-limited router of a sparse layer, as ``(key, why)``: k > E, k_g > g, g not dividing E,
    groups of fewer than ``best`` experts (DeepSeek-V3 and GLM-4.5 score a group by its best two; DeepSeek-V2 by its
    best one, ``best=1``); None: it routes.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    E, g, k_g = sizes["E"], sizes["g"], sizes["k_g"]
    if (found := too_many_experts(sizes, "n_routed_experts")) is not None:
        return found
    if k_g > g:
        return ("topk_group", f"{k_g} groups kept, but only n_group = {g} groups")
    if E % g:
        return ("n_group", f"the router splits the experts into equal groups: n_routed_experts = {E} is not "
                           f"divisible by n_group = {g}")
    if E // g < best:
        return ("n_group", f"groups of {E // g} expert (n_routed_experts = {E} in {g} groups): the router scores a "
                           f"group by its best {'two experts' if best == 2 else 'expert'}")
    return None


def _kv_cache(c: ModelConfig) -> str:
    """The latent (keys) and the shared rotary key (values), one head, per layer and token; windowed or chunked layers
    keep the last W − 1 or W_c − 1 tokens, as transformers' DynamicCache does with any key/value pair."""
    full, windowed, chunked = c.lists["cache"]
    if not windowed and not chunked:
        return "L*(r_kv + d_rope)*S*B"
    per_head = llama.kv_cache(c)  # 2*A_kv*d_k*(...)*B or 2*L*A_kv*d_k*min(...)*B: the same tokens, other widths
    return per_head.replace("2*A_kv*d_k*", "(r_kv + d_rope)*").replace("2*L*A_kv*d_k*", "L*(r_kv + d_rope)*")


DEEPSEEK_V3 = Family(
    model_type="deepseek_v3",
    architecture="DeepseekV3ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 129280),
        Size("hidden_size", "H", 7168),
        Size("num_hidden_layers", "L", 61, minimum=0),
        Size("num_attention_heads", "A", 128),
        Size("num_key_value_heads", "A_kv", 128, nullable=True),  # null: A (DeepseekV3Config's __post_init__)
        Size("q_lora_rank", "r_q", 1536, minimum=0, nullable=True),  # null: a plain q_proj; 0: a bottleneck 0 wide
        Size("kv_lora_rank", "r_kv", 512, minimum=0),  # 0: a latent 0 wide
        Size("qk_nope_head_dim", "d_nope", 128, minimum=0),  # 0: heads all rotary
        Size("qk_rope_head_dim", "d_rope", 64),
        Size("v_head_dim", "d_v", 128),
        Size("intermediate_size", "I", 18432),  # the dense layers' SwiGLU
        Size("moe_intermediate_size", "I_e", 2048),  # each routed expert's SwiGLU, and n_s of them shared
        Size("max_position_embeddings", "P", 4096),
        Size("n_routed_experts", "E", 256, aliases=("num_local_experts",)),
        Size("num_experts_per_tok", "k", 8, minimum=0),  # 0: the router runs, no expert does
        Size("n_shared_experts", "n_s", 1, minimum=0),  # 0: no shared experts (their tensors are 0 wide)
        Size("first_k_dense_replace", "L_f", 3, minimum=0),
        Size("n_group", "g", 8),
        Size("topk_group", "k_g", 4),
        llama.WINDOW,
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False),
           Flag("norm_topk_prob", True, nullable=True)),  # a ``bool | None`` field: null reads as true's role, no tensor
    derive=_derive,
    read=_read,
    runs=runs,
    heads_divide_hidden="never",  # the projections are A·d_k and A·d_v wide, whatever H is
    pad_token_id=None,
    layout=_layout,
    formulas=_formulas,
    flops=_flops,
    kv_cache=_kv_cache,  # the latent (keys) and the shared rotary key (values), one head
    kv_cache_full=lambda c: "L*A*(d_k + d_v)*S*B",  # every head's key and value, as attention uses them
    positions=lambda c: None,  # rotary: no position table
    torch_ref="DeepseekV3ForCausalLM",
    classes=decoder_classes("DeepseekV3", "model."),  # no question-answering class in transformers 5.23
    checkpoint_names=expand_experts("gate_proj", "up_proj", "down_proj", width="I_e"),  # mlp.experts.{e}.gate_proj ...
)
