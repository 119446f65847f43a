"""Llama 4's language model as transformers builds it (``Llama4ForCausalLM``): iRoPE layers, a mixture with a shared expert.

Works behind the helpers of ``11_todays_models``. LLaMA's attention (GQA, ``head_dim`` 128 whatever H/A is, biases with
``attention_bias``) and two RMSNorms per layer, with what Meta's Llama 4 adds (Meta AI 2025, "The Llama 4 herd"):

* **iRoPE**: every ``no_rope_layer_interval``-th layer (4: layers 3, 7, 11 ...) attends without rotary positions
  (NoPE, as ``no_rope_layers`` lists: 1 rotary, 0 none; an empty list reads as absent); the rotary layers attend
  within chunks of ``attention_chunk_size`` tokens (W_c = 8192: ``layer_types`` says ``chunked_attention``), the NoPE
  layers over the whole context (``full_attention``). The rotary layers divide queries and keys by their root mean square
  (``use_qk_norm``: ``Llama4TextL2Norm``, an L2 normalisation scaled by √d_k, with no parameter), the NoPE layers scale their queries with the
  position (``attn_temperature_tuning``): elementwise, no tensor and no matmul. Only the cache sees the chunks: a
  chunked layer keeps the last ``W_c − 1`` tokens once S passes the chunk (:func:`helpers.families.llama.kv_cache`).
* **A mixture with a shared expert**: the layers of ``moe_layers`` (by default every ``interleave_moe_layer_step``-th:
  ``range(s − 1, L, s)``; Scout s = 1, every layer; Maverick s = 2, the odd layers) hold E routed experts
  (``num_local_experts``) of width I (``intermediate_size``), fused and transposed as GPT-OSS's
  (``feed_forward.experts.gate_up_proj`` E × H × 2I, ``down_proj`` E × I × H), a router (``feed_forward.router``,
  E × H, no bias) that keeps the top k (``num_experts_per_tok``, 1) and weighs each by a sigmoid of its logit, and a
  shared expert every token passes through (``feed_forward.shared_expert``, a SwiGLU of width I). The other layers
  keep a dense SwiGLU of ``intermediate_size_mlp`` (I_mlp, 16384). L_e counts the sparse layers.

Active parameters (:attr:`helpers.count.Count.active`) are the total less the E − k experts a token skips in each
sparse layer: the shared expert, the dense layers, the token table and the head all count (Scout's language model
17.17B of 107.8B, Maverick's 17.18B of 400.7B: the cards' "17B active"). The FLOPs are the routed model's (k experts
per token); transformers' own ``Llama4TextMoe`` multiplies every token by all E experts (the unrouted weighted by
sigmoid(−∞) = 0), so ``FlopCounterMode`` on its class counts :func:`unrouted_flops` more (``Family.surplus_flops``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size, read_int as _read_int
from ..spec import FEED_FORWARD, LAYER_NORM, Block, Layout, Param, render
from . import llama, smollm3
from .base import Family, layer_runs, mixed_stack, too_many_experts
from .heads import model_class
from .llama import CHUNKED, FULL


def rope_layers(raw: Mapping[str, Any], L: int) -> list[int]:
    """``no_rope_layers`` as ``Llama4TextConfig`` reads it: 1 where a layer rotates, 0 where it has no position (NoPE);
    from ``no_rope_layer_interval`` when absent, null or empty (SmolLM3's reading, :func:`helpers.families.smollm3.
    rope_layers`, but for the empty list; the interval is read, and 0 refused, even beside a list). Without
    ``layer_types`` the config derives one type per entry, so the list must hold exactly L entries (transformers'
    ``validate_layer_type``); with it, at least L.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    given = raw.get("no_rope_layers")
    default = smollm3.rope_layers({key: v for key, v in raw.items() if key != "no_rope_layers"}, L)  # always derived
    if not given:
        return default
    if isinstance(given, list) and raw.get("layer_types") is None and len(given) != L:
        raise ConfigError("no_rope_layers", f"lists {len(given)} layers, num_hidden_layers = {L} (Llama4TextConfig "
                                            "derives one layer type per entry, and transformers wants one per layer)")
    return smollm3.rope_layers(raw, L)


def _types(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None) -> list[str]:
    """Llama4TextConfig's own ``layer_types``: the rotary layers chunked, the NoPE layers full."""
    return [CHUNKED if rotary else FULL for rotary in rope_layers(raw, sizes["L"])]


W_C = 8192  # Llama4TextConfig's attention_chunk_size

# Llama4TextConfig keeps head_dim (validate_rope reads it); the rotary layers view each head as complex pairs
_read_cache, _cache_runs = llama.hooks(types=_types, rotary=llama.pairs_width, rope=rope_layers)


def sparse_layers(raw: Mapping[str, Any], sizes: Mapping[str, int]) -> range | tuple[int, ...]:
    """The layers that hold the experts: ``moe_layers`` where the config lists it (indices outside the stack match no
    layer), else ``range(s − 1, L, s)`` as ``Llama4TextConfig`` derives it (a step of 0 is refused, as Python's range
    refuses it; a negative step gives none).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    L, listed = sizes["L"], raw.get("moe_layers")
    if listed is not None:
        if not isinstance(listed, list):
            raise ConfigError("moe_layers", f"must be a list of layer indices, got {json.dumps(listed)}")
        return tuple(sorted({i for i in (_read_int("moe_layers", i) for i in listed) if 0 <= i < L}))
    s = sizes["s"]
    if s == 0:
        raise ConfigError("interleave_moe_layer_step", "0: Llama4TextConfig builds range(s - 1, L, s), which refuses a "
                                                       "step of 0 (list moe_layers instead)")
    return range(s - 1, L, s) if s > 0 else ()


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The sparse layers (``{"moe": ...}``, their indices, where ``moe_layers`` lists them; L_e, their number, into
    ``sizes``), the rotary ones (``{"rope": ...}``, 1 or 0 per layer), each layer's chunk (``{"chunks": ...}``: W_c
    for a chunked layer, 0 for a full one, as the reference model masks) and the cache's layers (``{"cache": ...}``).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``head_dim: 0`` is refused where a layer is built (its attention scales by ``head_dim ** -0.5``).
    """
    if sizes["d_k"] == 0 and sizes["L"]:
        raise ConfigError("head_dim", "0: transformers' attention scales by head_dim ** -0.5 and fails to build")
    moe = sparse_layers(raw, sizes)
    sizes["L_e"] = len(moe)
    rope = rope_layers(raw, sizes["L"])
    listed = {} if isinstance(moe, range) else {"moe": moe}  # a range is derived again from s (any depth, no list)
    chunk = raw["attention_chunk_size"] if "attention_chunk_size" in raw else W_C
    types = llama.read_layer_types(raw, sizes["L"]) or [CHUNKED if r else FULL for r in rope]
    chunks = tuple(chunk if t == CHUNKED and isinstance(chunk, int) and chunk > 0 else 0 for t in types)
    return {**_read_cache(raw, sizes, flags), "rope": tuple(rope), "chunks": chunks, **listed}


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """What transformers builds but cannot run: LLaMA's (key/value heads, the cache; an odd head only where a layer
    rotates: a NoPE layer never pairs its dimensions), an ``attention_chunk_size`` of null or 0 (the model builds the
    chunked mask for every input), layer types other than full and chunked (it builds only those masks), and a
    sparse layer that cannot route (k > E; E = 0).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    problems = dict(_cache_runs(raw, sizes, flags))
    L = sizes["L"]
    found: tuple[str, str] | None = None
    chunk = raw["attention_chunk_size"] if "attention_chunk_size" in raw else W_C  # sizes keep W_c only if a layer chunks
    if chunk is None or chunk == 0:
        found = ("attention_chunk_size", f"{json.dumps(chunk)}: Llama4TextModel builds a chunked attention mask for "
                                         "every input, and fails without a chunk of at least one token")
    elif L and (other := sorted({t for t in llama.read_layer_types(raw, L) or () if t not in (FULL, CHUNKED)})):
        found = ("layer_types", f"{json.dumps(other[0])} layers: Llama4TextModel builds attention masks for full and "
                                "chunked attention only (its forward pass fails)")
    elif sizes["L_e"] and sizes["E"] == 0:
        found = ("num_local_experts", "0 experts in a sparse layer: transformers' experts cannot split 0 rows among "
                                      "0 experts (its forward pass fails)")
    elif sizes["L_e"]:
        found = too_many_experts(sizes, "num_local_experts")
    if found is not None:
        problems.setdefault("forward", found)
    return problems


def moe_layers(c: ModelConfig) -> range | tuple[int, ...]:
    """The indices of the sparse layers of a parsed config, in order (:func:`sparse_layers`).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if "moe" in c.lists:
        return c.lists["moe"]
    s = c["s"]
    return range(s - 1, c["L"], s) if s > 0 else range(0)


def _swiglu(prefix: str, H: int, width: int, symbol: str) -> list[Param]:
    """``{prefix}.gate_proj``, ``up_proj`` (width × H) and ``down_proj`` (H × width): a ``Llama4TextMLP``."""
    return [Param.matrix(f"{prefix}.gate_proj.weight", (width, H), FEED_FORWARD, f"{symbol}*H"),
            Param.matrix(f"{prefix}.up_proj.weight", (width, H), FEED_FORWARD, f"{symbol}*H"),
            Param.matrix(f"{prefix}.down_proj.weight", (H, width), FEED_FORWARD, f"H*{symbol}")]


def layout(c: ModelConfig) -> Layout:
    """Token table, the layers (dense and sparse runs in order), the final norm and the head (untied unless tied).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H, I, E = c["H"], c["I"], c["E"]
    attention = llama.attention_projections(c, c.flags["attention_bias"])  # the L2 QK-norm has no parameter
    norms = [Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
             Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    dense = attention + _swiglu("feed_forward", H, c["I_mlp"], "I_mlp") + norms
    sparse = attention + [
        Param.experts("feed_forward.experts.gate_up_proj", (E, H, 2 * I), FEED_FORWARD, "2*E*H*I"),
        Param.experts("feed_forward.experts.down_proj", (E, I, H), FEED_FORWARD, "E*I*H"),
        Param.matrix("feed_forward.router.weight", (E, H), FEED_FORWARD, "E*H"),
        *_swiglu("feed_forward.shared_expert", H, I, "I"),
    ] + norms
    head, _, tail = llama.decoder_layout(c, dense).blocks  # LLaMA's token table, final norm and lm_head
    layers = [Block("model.layers.{i}.", tuple(sparse if is_sparse else dense), run)
              for run, is_sparse in layer_runs(c["L"], moe_layers(c))]
    return Layout((head, *layers, tail))


def _feed_forward(c: ModelConfig, dense: str, sparse: str) -> str:
    """``dense`` in each of the L − L_e dense layers, ``sparse`` in each of the L_e sparse ones."""
    return mixed_stack(c["L"], c["L"] - c["L_e"], dense, sparse, "(L - L_e)", "L_e")


def formulas(c: ModelConfig) -> dict[str, str]:
    """LLaMA's formulas, the feed-forward split between dense SwiGLUs (I_mlp) and mixtures (every routed expert,
    the router, the shared expert).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return {**llama.LLAMA.formulas(c), FEED_FORWARD: _feed_forward(c, "3*H*I_mlp", "3*E*H*I + E*H + 3*H*I")}


def flops(c: ModelConfig) -> dict[str, str]:
    """LLaMA's FLOPs (the chunks change no eager matmul: the mask is applied after the full S×S scores), a sparse
    layer's feed-forward per routed token (k experts) plus the router and the shared expert on every token.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    routed = "6*B*S*k*H*I + 2*B*S*E*H + 6*B*S*H*I"
    return {**llama.FLOPS, FEED_FORWARD: _feed_forward(c, "6*B*S*H*I_mlp", routed)}


def unrouted_flops(c: ModelConfig) -> str:
    """The matmul FLOPs transformers' ``Llama4TextMoe`` adds to :func:`flops`: it runs every token through all E
    experts (``hidden_states.repeat(E, 1)``, one ``bmm`` per fused tensor) and weighs the E − k it did not route to by
    sigmoid(−∞) = 0, so each sparse layer multiplies ``6·B·S·(E − k)·H·I`` more than the routed model does.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return "6*L_e*B*S*(E - k)*H*I" if c["L_e"] else "0"


def notes(c: ModelConfig) -> list[str]:
    """What ``flops`` says under the model: the routed model is counted, and what transformers' class runs beyond it.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    if not c["L_e"]:
        return []
    return [f"the routed model: k = {c['k']} of E = {c['E']} experts per token; transformers' Llama4TextMoe runs every "
            f"token through all E (the others weighed by 0), so FlopCounterMode on it counts {render(unrouted_flops(c))} "
            "more"]


LLAMA4_TEXT = Family(
    model_type="llama4_text",
    architecture="Llama4ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 202048),
        Size("hidden_size", "H", 5120),
        Size("num_hidden_layers", "L", 48, minimum=0),
        Size("num_attention_heads", "A", 40),
        Size("num_key_value_heads", "A_kv", 8),  # an int field: null is refused, as transformers refuses it
        Size("head_dim", "d_k", 128, minimum=0),  # not H // A; 0 builds only without layers
        Size("intermediate_size", "I", 8192),  # each routed expert's SwiGLU, and the shared expert's
        Size("intermediate_size_mlp", "I_mlp", 16384),  # the dense layers' SwiGLU
        Size("max_position_embeddings", "P", 131072),
        Size("num_local_experts", "E", 16, minimum=0),  # 0: experts 0 wide (a sparse layer cannot route)
        Size("num_experts_per_tok", "k", 1, minimum=0),  # 0: the router runs, no routed expert counts
        Size("interleave_moe_layer_step", "s", 1, minimum=-2**63),  # read where moe_layers is absent
        Size("attention_chunk_size", "W_c", W_C, minimum=-2**63, nullable=True),
        llama.WINDOW,  # no Llama4TextConfig field, but the cache reads it for sliding_attention layers
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False),
           Flag("use_qk_norm", True)),  # no parameter: the reference model normalises as transformers does
    derive=llama.LLAMA.derive,
    read=read,
    runs=runs,
    heads_divide_hidden="never",  # head_dim sizes the heads: the projections are A·d_k wide
    pad_token_id=None,
    layout=layout,
    formulas=formulas,
    flops=flops,
    kv_cache=llama.kv_cache,  # NoPE layers every token, chunked layers the last W_c − 1
    positions=lambda c: None,  # rotary (and NoPE): no position table
    torch_ref="Llama4ForCausalLM",
    classes={"Llama4TextModel": model_class(prefix=("model.", ""), lm_head=False)},
    surplus_flops=unrouted_flops,  # transformers runs every token through every expert
    notes=notes,
)
