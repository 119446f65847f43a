"""DeepSeek-V2 as transformers builds it (``DeepseekV2ForCausalLM``): latent attention (MLA) as first published.

Works behind the helpers of ``11_todays_models``. DeepSeek-V2 (DeepSeek-AI 2024) introduced multi-head latent
attention and DeepSeekMoE's shared experts; DeepSeek-V3 (:mod:`helpers.families.deepseek_v3`, whose layout, formulas,
FLOPs and cache this family reuses) kept both. The tensors are DeepSeek-V3's, symbol for symbol: a query through a
bottleneck of ``q_lora_rank`` r_q (DeepSeek-V2: 1536) or, with ``q_lora_rank: null``, a plain ``q_proj``
(DeepSeek-V2-Lite: no query compression), keys and values re-projected from a latent of ``kv_lora_rank`` r_kv with
one shared rotary key of ``qk_rope_head_dim`` d_rope; the first ``first_k_dense_replace`` L_f layers dense, the
others E routed experts of width I_e (k per token) and n_s shared ones. What differs, in transformers 5.23:

* ``mlp_bias`` puts a bias on the dense SwiGLU's three projections and the shared experts' (not on the routed ones);
* the router's scores are a softmax (no correction-bias buffer) and ``topk_method`` picks the experts:
  ``"greedy"`` (V2-Lite: the k best of all E) or ``"group_limited_greedy"`` (V2: the k best inside the ``topk_group``
  k_g groups, of ``n_group`` g, whose best expert scores highest: a group of one expert routes); any other method
  fails in the forward pass, and so do ``num_experts_per_tok``, ``n_group`` or ``topk_group`` left null where they
  are read (DeepseekV2Config's defaults: null, null, null). With no k, a token's experts are unknown: ``active``
  then counts every expert (k read as E);
* the heads must divide ``hidden_size`` (``validate_architecture``), though no tensor is H/A wide;
* a 0-wide d_rope builds (the rotary embedding falls back to H/A) and fails in the forward pass; the rotary step
  views pairs as complex numbers, so an odd d_nope or r_kv fails it in fp32.

Not counted: the router's ``e_score_correction_bias`` does not exist here, and DeepSeek-V2 has no
multi-token-prediction module. The cache is DeepSeek-V3's: the latent (r_kv) and the shared rotary key (d_rope), one
head per layer, where full keys and values would be L·A·(d_k + d_v) values a token.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping, cast

from ..spec import ConfigError, Flag, Size
from . import deepseek_v3, llama
from .deepseek_v3 import DEEPSEEK_V3
from .base import too_many_experts
from .heads import decoder_classes

METHODS = ("greedy", "group_limited_greedy")  # DeepseekV2TopkRouter's two branches


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """DeepSeek-V3's (A_kv, d_k = d_nope + d_rope, L_f at most L, an odd d_rope wider than 4 refused), queries and keys
    0 wide refused; k read as E where the file gives none (the model builds; its router cannot pick, so every expert
    counts as active)."""
    assert DEEPSEEK_V3.derive is not None
    DEEPSEEK_V3.derive(sizes, keys)
    if sizes["d_k"] == 0 and sizes["L"]:
        raise ConfigError(keys["d_rope"], "0, with qk_nope_head_dim = 0: queries and keys 0 wide, and transformers' "
                                          "attention scales its scores by qk_head_dim ** -0.5 (it fails to build)")
    sizes.setdefault("k", sizes["E"])


_read_cache, _ = llama.hooks(stored_head=None, rotary=None)  # DeepseekV2Config has no window keys; as written, the cache follows them


def _read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's layers, and ``topk_method`` a string or null, as DeepseekV2Config's strict field requires; the flag
    ``group_limited_greedy`` says which router the reference model builds (no tensor depends on it)."""
    method = raw.get("topk_method", "greedy")
    if method is not None and not isinstance(method, str):
        raise ConfigError("topk_method", f"must be a string ({' or '.join(METHODS)}), got {json.dumps(method)}")
    cast(dict, flags)["group_limited_greedy"] = method == "group_limited_greedy"
    return _read_cache(raw, sizes, flags)


def router_problem(raw: Mapping[str, Any], sizes: Mapping[str, int]) -> tuple[str, str] | None:
    """What stops DeepSeek-V2's router in a sparse layer, as ``(key, why)``: no k, a method it does not know, k > E
    (greedy), and for ``group_limited_greedy`` groups that are null or cannot split the experts; None: it routes.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    method = raw.get("topk_method", "greedy")
    if raw.get("num_experts_per_tok") is None:
        return ("num_experts_per_tok", "null: the router has no number of experts to pick (torch.topk fails)")
    if method not in METHODS:
        return ("topk_method", f"{json.dumps(method)}: DeepseekV2TopkRouter knows only {' and '.join(METHODS)} (its "
                               "forward pass fails on any other)")
    if method == "greedy":
        return too_many_experts(sizes, "n_routed_experts")
    for key, symbol in (("n_group", "g"), ("topk_group", "k_g")):
        if symbol not in sizes:
            return (key, "null: group_limited_greedy routing splits the experts into n_group groups and keeps "
                         "topk_group of them")
    return deepseek_v3.router_problem(sizes, best=1)  # a group scored by its best expert


def rotary_problem(sizes: Mapping[str, int]) -> str | None:
    """Why DeepSeek-V2's rotary step cannot turn d_rope dimensions, None where it can: an odd d_rope fails its complex
    view; d_rope = 0 leaves ``head_dim`` 0, so the angles are built for H // A dimensions instead, ⌈(H // A)/2⌉ of
    them, and the 0-wide rotary part broadcasts against one at most (H // A ≤ 2 runs).

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    d_rope, fallback = sizes["d_rope"], sizes["H"] // sizes["A"]
    if d_rope % 2:
        return f"{d_rope} is odd: rotary embeddings turn pairs of dimensions (its complex view fails)"
    if d_rope == 0 and -(-fallback // 2) > 1:
        return (f"0: transformers then builds the rotary angles for hidden_size // num_attention_heads = {fallback} "
                f"dimensions, {-(-fallback // 2)} of them, which the 0-wide rotary part cannot broadcast against (its "
                "forward pass fails)")
    return None


def _runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """DeepSeek-V3's (key/value heads, d_rope), with DeepSeek-V2's router (:func:`router_problem`), and the rotary
    step's complex view: the rotary part of a query (after d_nope values) or of the latent's output (after r_kv) must
    start on an even offset, or ``torch.view_as_complex`` fails (in fp32; bf16 copies it to fp32 first and runs)."""
    problems = deepseek_v3.runs(raw, sizes, flags, router=router_problem, rotary=rotary_problem)
    if sizes["L"] and "forward" not in problems:
        for key, symbol in (("qk_nope_head_dim", "d_nope"), ("kv_lora_rank", "r_kv")):
            if sizes[symbol] % 2:
                problems["forward"] = (key, f"{sizes[symbol]} is odd: the rotary dimensions after it start on an odd "
                                            "offset, and transformers' complex view of them (view_as_complex) fails "
                                            "in fp32")
                break
    return problems


DEEPSEEK_V2 = replace(
    DEEPSEEK_V3,
    model_type="deepseek_v2",
    architecture="DeepseekV2ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 102400),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32, minimum=0),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", None, nullable=True),  # null: A (DeepseekV2Config's __post_init__)
        Size("q_lora_rank", "r_q", 1536, minimum=0, nullable=True),  # null: a plain q_proj (V2-Lite)
        Size("kv_lora_rank", "r_kv", 512, minimum=0),
        Size("qk_nope_head_dim", "d_nope", 128, minimum=0),
        Size("qk_rope_head_dim", "d_rope", 64, minimum=0),  # 0 builds, cannot run
        Size("v_head_dim", "d_v", 128, minimum=0),  # 0: values 0 wide (runs)
        Size("intermediate_size", "I", 11008),  # the dense layers' SwiGLU
        Size("moe_intermediate_size", "I_e", 1407),  # each routed expert's SwiGLU, and n_s of them shared
        Size("max_position_embeddings", "P", 2048),
        Size("n_routed_experts", "E", 64, minimum=0, aliases=("num_experts",), layers=("L - L_f",)),  # attribute_map: num_experts
        Size("num_experts_per_tok", "k", None, minimum=0, nullable=True),  # null (the default): k read as E
        Size("n_shared_experts", "n_s", 2, minimum=0),
        Size("first_k_dense_replace", "L_f", 0, minimum=0),
        Size("n_group", "g", None, nullable=True),  # read by group_limited_greedy only
        Size("topk_group", "k_g", None, nullable=True),
        llama.WINDOW,
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("mlp_bias", False),
           Flag("norm_topk_prob", False, nullable=True)),  # ``bool | None``; no tensor
    derive=_derive,
    read=_read,
    runs=_runs,
    heads_divide_hidden="always",  # DeepseekV2Config's validate_architecture
    torch_ref="DeepseekV2ForCausalLM",
    classes=decoder_classes("DeepseekV2", "model.", token_head=None),  # the base model and sequence classification
)
