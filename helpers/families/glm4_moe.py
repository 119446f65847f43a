"""GLM-4.5 as transformers builds it (``Glm4MoeForCausalLM``): dense first layers, then routed and shared experts.

Works behind the helpers of ``11_todays_models``. Zhipu's GLM-4.5 (GLM-4.5 Team 2025) keeps LLaMA's attention
(GQA, RMSNorm before each sub-layer) with what Qwen2 and Qwen3 added: biases on the query, key and value projections
(``attention_bias``; never on ``o_proj``), an optional RMSNorm of d_k on every head's query and key (``use_qk_norm``:
``self_attn.q_norm``, ``k_norm``, 2·d_k per layer, after the projection as Qwen3's), and ``head_dim`` free of H/A
(GLM-4.5: H = 5120, A = 96, d_k = 128: q_proj is 12288 × 5120). Its feed-forward is DeepSeek-V3's
(:mod:`helpers.families.deepseek_v3`): the first ``first_k_dense_replace`` L_f layers keep a dense SwiGLU of
``intermediate_size`` I, the L − L_f others are sparse: ``n_routed_experts`` E experts of width
``moe_intermediate_size`` I_e (fused, ``mlp.experts.gate_up_proj`` E × 2I_e × H and ``down_proj`` E × H × I_e), the
router ``mlp.gate.weight`` (E × H), and ``n_shared_experts`` n_s shared experts run on every token (one SwiGLU of
width n_s·I_e). The router picks ``num_experts_per_tok`` k experts among the ``topk_group`` k_g best of ``n_group`` g
groups (each scored by its best two experts), sigmoid scores times ``routed_scaling_factor``: no tensor.

Rotary positions turn only part of each head: R = int(d_k · ``partial_rotary_factor``) dimensions (0.5 by default:
64 of GLM-4.5's 128; a factor in ``rope_parameters`` wins; a size of the config, ``R``, though no tensor reads it), an
elementwise step, so no FLOP and no parameter.

Not counted, on purpose: ``mlp.gate.e_score_correction_bias`` (E per sparse layer, a buffer, as in DeepSeek-V3) and
the multi-token-prediction layer (``num_nextn_predict_layers``, alias ``num_mtp_layers``): ``Glm4MoeForCausalLM``
builds ``num_hidden_layers`` layers and no more; GLM-4.5's checkpoint adds layer 92 (a whole sparse layer, the
``eh_proj`` (H × 2H) that joins a token's embedding to the last hidden state, two norms ``enorm``, ``hnorm``, and the
norm of the head it shares; the token table and the head themselves are the model's), which transformers skips when
it loads (``_keys_to_ignore_on_load_unexpected``). GLM-4.5's card says 355B total and 32B active: the model
transformers builds holds 352.8B (356.8B with that layer), and a token uses 32.1B of it once the two vocabulary
tables are left out (``tests/test_family_glm4_moe.py`` computes each to the integer). The cache is LLaMA's (A_kv
heads of d_k keys and values).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout
from . import deepseek_v3, llama, qwen2
from .base import Family
from .heads import decoder_classes, expand_experts


def rotary_factor(raw: Mapping[str, Any]) -> float:
    """The share of each head rotary positions turn, as ``Glm4MoeConfig`` settles it: the ``partial_rotary_factor`` of
    ``rope_parameters`` (or ``rope_scaling``), else the top-level key (``null``: the whole head), else 0.5.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    rope = raw.get("rope_parameters") or raw.get("rope_scaling")
    if isinstance(rope, dict) and rope.get("partial_rotary_factor") is not None:
        key, factor = "partial_rotary_factor", rope["partial_rotary_factor"]
    else:
        key, factor = "partial_rotary_factor", raw.get("partial_rotary_factor", 0.5)
    if factor is None:
        return 1.0
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise ConfigError(key, f"must be a number (the share of each head rotary positions turn), got {factor!r}")
    return factor


def layout(c: ModelConfig) -> Layout:
    """Qwen2's attention (q/k/v biases under ``attention_bias``, no o_proj bias) with Qwen3's q/k norms under
    ``use_qk_norm``; a dense SwiGLU in the first L_f layers, DeepSeek-V3's experts in the others.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    _, stack, _ = qwen2.layout(c, qk_norm=c.flags["use_qk_norm"], bias=(c.flags["attention_bias"], False)).blocks
    dense = list(stack.params)
    mlp = [i for i, p in enumerate(dense) if p.name.startswith("mlp.")]
    sparse = dense[:mlp[0]] + deepseek_v3.moe(c) + dense[mlp[-1] + 1:]
    return deepseek_v3.dense_then_sparse(c, dense, sparse)


def formulas(c: ModelConfig) -> dict[str, str]:
    """Parameters per component: the attention's matrices and q/k/v biases, DeepSeek-V3's feed-forward (every routed
    expert counted, the router, the shared experts), the norms (the q/k norms of d_k among them).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    attention = "2*A*d_k*H + 2*A_kv*d_k*H" + (" + A*d_k + 2*A_kv*d_k" if c.flags["attention_bias"] else "")
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: deepseek_v3.feed_forward(c),
        LAYER_NORM: "L*(2*H + 2*d_k) + H" if c.flags["use_qk_norm"] else "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """L_f, the dense layers, at most L (``first_k_dense_replace`` beyond the depth: every layer dense)."""
    sizes["L_f"] = min(sizes["L_f"], sizes["L"])


def _rotary(raw: Mapping[str, Any], d_k: int) -> int | None:
    """The width of queries and keys after the rotary step, its first int(d_k · factor) dimensions turned."""
    return llama.rotary_width(d_k, int(d_k * rotary_factor(raw)))


# Glm4MoeConfig has no window keys (the cache follows them); its own runs checks the heads
_read_cache, _cache_runs = llama.hooks(stored_head=None, rotary=_rotary)


def _read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's layers, R = int(d_k · factor) (the rotary dimensions of a head; transformers turns R rounded up to a
    pair), and ``head_dim: null`` refused (the attention reads it as given and fails on None)."""
    if "head_dim" in raw and raw["head_dim"] is None and sizes["L"]:
        raise ConfigError("head_dim", "must be an integer, got null (leave the key out for hidden_size // "
                                      "num_attention_heads)")
    d_k = sizes.get("d_k", sizes["H"] // sizes["A"])
    sizes["R"] = int(d_k * rotary_factor(raw))  # the rotary dimensions of a head (a factor not a number: refused)
    return _read_cache(raw, sizes, flags)


def _runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """What transformers refuses to build (heads of 0 dimensions: the attention's scale d_k^−½; an odd explicit
    ``head_dim`` wider than 4 wholly rotated: ``validate_rope``), and what it builds but cannot run: key/value heads
    that do not divide the query heads, a rotary part whose last pair reaches past the head (R odd and equal to d_k;
    a head of 1 runs 2 wide: :func:`~helpers.families.llama.rotary_width`), a router that cannot route (DeepSeek-V3's,
    where a layer is sparse)."""
    problems = dict(_cache_runs(raw, sizes, flags))
    problems.pop("forward", None)  # the heads are checked below, with the rotary part as this model turns it
    L, A, A_kv, d_k = sizes["L"], sizes["A"], sizes["A_kv"], sizes["d_k"]
    factor, R = rotary_factor(raw), sizes["R"]
    if d_k == 0 and L:
        key = "head_dim" if raw.get("head_dim") is not None else "num_attention_heads"
        raise ConfigError(key, "0 dimensions per head: transformers' attention scales its scores by head_dim ** -0.5 "
                               "and fails to build")
    given = raw.get("head_dim")
    if isinstance(given, int) and given > 4 and given % 2 and int(given * factor) == given:
        raise ConfigError("head_dim", f"{given}: rotary embeddings turn pairs of dimensions, an odd head wider than 4 "
                                      "wholly rotated is refused by transformers (validate_rope)")
    found: tuple[str, str] | None = None
    if A % A_kv and L:
        found = ("num_key_value_heads", "grouped-query attention shares each key/value head among a whole number of "
                                        f"query heads: num_attention_heads = {A} is not divisible by "
                                        f"num_key_value_heads = {A_kv} (transformers builds the model, its forward "
                                        "pass fails)")
    elif llama.rotary_width(d_k, R) is None and L:
        found = ("head_dim", f"{R} rotary dimensions in a head of {d_k}: rotary embeddings turn pairs of dimensions, and "
                             "the last pair would reach past the head: transformers' forward pass fails")
    elif sizes["L_f"] < L:  # a sparse layer routes
        found = deepseek_v3.router_problem(sizes)
    if found is not None:
        problems["forward"] = found
    return problems


GLM4_MOE = Family(
    model_type="glm4_moe",
    architecture="Glm4MoeForCausalLM",
    sizes=(
        Size("vocab_size", "V", 151552),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 46, minimum=0),
        Size("num_attention_heads", "A", 96),
        Size("num_key_value_heads", "A_kv", 8),  # an int field: null is refused, as transformers refuses it
        Size("head_dim", "d_k", None, minimum=0),  # not a Glm4MoeConfig field, but read (getattr): absent: H // A
        Size("intermediate_size", "I", 10944),  # the dense layers' SwiGLU
        Size("moe_intermediate_size", "I_e", 1408),  # each routed expert's SwiGLU, and n_s of them shared
        Size("max_position_embeddings", "P", 131072),
        Size("n_routed_experts", "E", 128, aliases=("num_local_experts",)),
        Size("num_experts_per_tok", "k", 8, minimum=0),  # 0: the router runs, no expert does
        Size("n_shared_experts", "n_s", 1, minimum=0),  # 0: no shared experts (their tensors are 0 wide)
        Size("first_k_dense_replace", "L_f", 1, minimum=0),
        Size("n_group", "g", 1),
        Size("topk_group", "k_g", 1),
        llama.WINDOW,
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("use_qk_norm", False),
           Flag("norm_topk_prob", True)),
    derive=_derive,
    read=_read,
    runs=_runs,
    heads_divide_hidden="never",  # head_dim = H // A without it: the projections are A·d_k wide
    pad_token_id=None,
    layout=layout,
    formulas=formulas,
    flops=lambda c: {**llama.flops(c), FEED_FORWARD: deepseek_v3.feed_forward_flops(c)},
    kv_cache=llama.kv_cache,  # A_kv heads of d_k keys and values per layer and token
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Glm4MoeForCausalLM",
    classes={name: cls for name, cls in decoder_classes("Glm4Moe", "model.").items()
             if name == "Glm4MoeModel"},  # transformers 5.23 has no head class for GLM-4.5 but the causal LM
    checkpoint_names=expand_experts("gate_proj", "up_proj", "down_proj", width="I_e"),  # mlp.experts.{e}.gate_proj ...
)
