"""LLaMA as transformers builds it (``LlamaForCausalLM``: RMSNorm, SwiGLU, rotary positions, GQA).

Introduced in ``07_decoder_llms``. The layout, formulas and FLOPs here serve every family that keeps
LLaMA's tensors and changes only its config dialect or its cache (Mistral).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout,
    Param,
)
from .base import Family
from .heads import decoder_classes


def decoder_layout(c: ModelConfig, layer: list[Param]) -> Layout:
    """What every LLaMA-style decoder holds around its layers: ``model.embed_tokens`` (V×H, also the LM head when
    tied), the stack of L identical ``layer``s under ``model.layers.{i}.``, the final ``model.norm`` and an untied
    ``lm_head``. Shared by the families that keep LLaMA's names (Qwen2, Phi-3, Mixtral ...).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
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


def attention_projections(c: ModelConfig, bias: bool, o_bias: bool | None = None) -> list[Param]:
    """``self_attn.{q,k,v,o}_proj``: queries of A heads, keys and values of A_kv heads (d_k each) from H, the output
    back to H, each followed by its bias when ``bias`` (the output's when ``o_bias``, if given: Qwen2 biases q, k and v
    alone), in ``named_parameters()`` order. LLaMA's, and every family's that keeps its attention (OLMo 2, GPT-OSS,
    Qwen).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    H, A, A_kv, d_k = c["H"], c["A"], c["A_kv"], c["d_k"]
    params = []
    for proj, out, sym in (("q_proj", A * d_k, "A"), ("k_proj", A_kv * d_k, "A_kv"), ("v_proj", A_kv * d_k, "A_kv")):
        params.append(Param.matrix(f"self_attn.{proj}.weight", (out, H), ATTENTION, f"{sym}*d_k*H"))
        if bias:
            params.append(Param.bias(f"self_attn.{proj}.bias", (out,), ATTENTION, f"{sym}*d_k"))
    params.append(Param.matrix("self_attn.o_proj.weight", (H, A * d_k), ATTENTION, "H*A*d_k"))
    if bias if o_bias is None else o_bias:
        params.append(Param.bias("self_attn.o_proj.bias", (H,), ATTENTION, "H"))
    return params


def _layout(c: ModelConfig) -> Layout:
    """LLaMA's tensors: token table, L decoder layers, final RMSNorm, untied head unless tied."""
    H, I = c["H"], c["I"]
    attention_bias, mlp_bias = c.flags.get("attention_bias", False), c.flags.get("mlp_bias", False)
    layer = attention_projections(c, attention_bias)
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


def scores(c: ModelConfig, layers: str = "L") -> str | None:
    """The S×S matmuls of eager attention in ``layers`` layers where transformers' rotary step widens queries and keys
    to d_qk (:func:`rotary_width`): q·kᵀ over d_qk, the weights times V over d_k, ``2·layers·B·S²·A·(d_qk + d_k)``;
    with L_qk of the layers rotary (SmolLM3's NoPE layers stay d_k wide), q·kᵀ over d_qk in those only. None where
    queries and keys are d_k wide: the family's own formula (``4·layers·B·S²·A·d_k``) holds.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    if "d_qk" not in c.sizes:
        return None
    if "L_qk" in c.sizes:  # every layer's 4·B·S²·A·d_k, and the rotary layers' wider q·kᵀ
        return f"2*B*S**2*A*(2*{layers}*d_k + L_qk*(d_qk - d_k))"
    return f"2*{layers}*B*S**2*A*(d_qk + d_k)"


def with_scores(c: ModelConfig, formulas: Mapping[str, str], layers: str = "L") -> dict[str, str]:
    """``formulas`` (a family's FLOPs), the attention scores over queries and keys as wide as transformers runs them
    (:func:`scores`).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    wide = scores(c, layers)
    return {**formulas, ATTENTION_SCORES: wide} if wide is not None else dict(formulas)


def flops(c: ModelConfig) -> dict[str, str]:
    """LLaMA's forward FLOPs (:data:`FLOPS`), the scores over queries and keys as wide as transformers runs them.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    return with_scores(c, FLOPS)


def derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """A_kv = A unless given (multi-head attention). Key/value heads that do not divide the query heads still build
    (the projections are A_kv·d_k wide): :func:`runs` refuses them for the commands that run the model. LLaMA's
    ``Family.derive``, and the end of Mistral's.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    sizes.setdefault("A_kv", sizes["A"])


# --- what transformers' DynamicCache keeps, layer by layer (every family whose layers attend as LLaMA's) ---------
FULL, SLIDING, CHUNKED = "full_attention", "sliding_attention", "chunked_attention"
# transformers 5.23, configuration_utils: the attention layer types a config may list (validate_layer_type) and the
# legacy names it renames first (remap_legacy_layer_types)
ATTENTION_TYPES = (FULL, SLIDING, CHUNKED, "window_attention", "indexed_attention", "compressed_sparse_attention",
                   "heavily_compressed_attention", "minimax_m3_sparse", "conv", "moe", "hybrid", "hybrid_sliding",
                   "reference_sliding_attention", "linear_attention")
LEGACY_TYPES = {"mamba": "linear_attention", "attention": FULL, "deepseek_sparse_attention": "indexed_attention",
                "qwen_sparse_attention": "indexed_attention"}


def read_layer_types(raw: Mapping[str, Any], L: int) -> list[str] | None:
    """``layer_types`` as transformers validates it (legacy names renamed, known types, one per layer); None: absent.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    types = raw.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise ConfigError("layer_types", f"must be a list of attention types, one per layer, got {json.dumps(types)}")
    types = [LEGACY_TYPES.get(t, t) for t in types]
    unknown = sorted({t for t in types if t not in ATTENTION_TYPES})
    if unknown:
        raise ConfigError("layer_types", f"{json.dumps(unknown[0])} is not an attention type transformers knows "
                                         f"({', '.join(ATTENTION_TYPES)})")
    if len(types) != L:
        raise ConfigError("layer_types", f"lists {len(types)} layers, num_hidden_layers = {L}")
    return types


def cache_layers(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None,
                 types: list[str] | None) -> tuple[tuple[int, int, int], tuple[str, str] | None]:
    """(full, windowed, chunked) layers of transformers' ``DynamicCache`` and what it cannot keep, as ``(key, why)``.

    ``window`` is the config's ``sliding_window`` after its class has read it (Qwen2: None unless
    ``use_sliding_window``), ``types`` its ``layer_types`` (None: every layer windowed if there is a window, else
    chunked if there is an ``attention_chunk_size``, else full: ``get_layer_types_and_kwargs``). A windowed layer keeps
    the last ``W − 1`` tokens, a chunked one the last ``W_c − 1`` (the same ``DynamicSlidingWindowLayer``); with a
    window of 1 the slice ``[-W + 1:]`` is ``[0:]`` and keeps every token, as a full layer does.
    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    chunk = sizes.get("W_c")
    L = sizes["L"]
    if types is None:
        kind = SLIDING if window is not None else CHUNKED if chunk is not None else FULL
        types = [kind] * L
    counts, problem = [0, 0, 0], None
    for t in types:
        if t == FULL:
            counts[0] += 1
            continue
        key, size = ("sliding_window", window) if t == SLIDING else ("attention_chunk_size", chunk)
        if t not in (SLIDING, CHUNKED):
            problem = problem or ("layer_types", f"{json.dumps(t)} layers: transformers' cache for them is not modelled "
                                                 "here (only full, sliding and chunked attention)")
        elif size is None:
            problem = problem or (key if "layer_types" not in raw else "layer_types",
                                  f"{t} layers without a {key}: transformers' cache fails on them")
        elif size < 1:
            problem = problem or (key, f"{size}: transformers' cache fails on a window below 1 (its slice "
                                       f"[-{key} + 1:] keeps tokens from the start; only {2 - size} tokens run)")
        elif size == 1:
            counts[0] += 1  # the slice [-0:] keeps every token
        else:
            counts[1 if t == SLIDING else 2] += 1
    return (counts[0], counts[1], counts[2]), problem


def read_cache(raw: Mapping[str, Any], sizes: dict[str, int], window: int | None, types: list[str] | None,
               keep_l_w: bool = False) -> dict[str, tuple[int, ...]]:
    """The cache's layers into ``sizes`` (``L_w``, ``L_c`` where a formula needs them, ``W``, ``W_c`` where a layer
    uses them, ``L_w`` always with ``keep_l_w``) and ``{"cache": (full, windowed, chunked)}`` for ``ModelConfig.lists``.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    (full, windowed, chunked), _ = cache_layers(raw, sizes, window, types)
    L = sizes["L"]
    if keep_l_w or 0 < windowed < L:
        sizes["L_w"] = windowed
    if 0 < chunked < L:
        sizes["L_c"] = chunked
    if not windowed:
        sizes.pop("W", None)
    if not chunked and CHUNKED not in (types or ()):  # a chunk of 1 keeps every token, but runs still reads it
        sizes.pop("W_c", None)
    return {"cache": (full, windowed, chunked)}


def kv_cache(c: ModelConfig) -> str:
    """Full layers cache every token, windowed ones the last W − 1, chunked ones the last W_c − 1: DynamicCache.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    full, windowed, chunked = c.lists.get("cache", (c["L"], 0, 0))
    two, pair = key_value(c)
    if not windowed and not chunked:
        formula = f"{two}L*{pair}*S*B"
    elif windowed == c["L"]:
        formula = f"{two}L*{pair}*min(S, W - 1)*B"
    elif chunked == c["L"]:
        formula = f"{two}L*{pair}*min(S, W_c - 1)*B"
    else:
        rest = "L" + (" - L_w" if windowed else "") + (" - L_c" if chunked else "")
        terms = ([f"({rest})*S"] if full else []) + (["L_w*min(S, W - 1)"] if windowed else []) + (
            ["L_c*min(S, W_c - 1)"] if chunked else [])
        formula = f"{two}{pair}*({' + '.join(terms)})*B"
    if "L_qk" not in c.sizes:
        return formula
    # keys d_qk wide in the rotary layers only (SmolLM3's NoPE layers keep d_k): their extra width, by the tokens kept
    kept = [(n, tokens) for n, tokens in zip(c.lists["cache_qk"], ("S", "min(S, W - 1)", "min(S, W_c - 1)")) if n]
    wide = f"L_qk*{kept[0][1]}" if len(kept) == 1 else " + ".join(f"{n}*{t}" if n > 1 else t for n, t in kept)
    return f"{formula} + A_kv*(d_qk - d_k)*({wide})*B"


def key_value(c: ModelConfig) -> tuple[str, str]:
    """A cache formula's factor 2 and one layer's key and value per token and head: ``("2*", "A_kv*d_k")``, or
    ``("", "A_kv*(d_qk + d_k)")`` where transformers' rotary step leaves every layer's keys d_qk wide
    (:func:`rotary_width`; DynamicCache keeps the keys after the rotation).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    if "d_qk" in c.sizes and "L_qk" not in c.sizes:
        return "", "A_kv*(d_qk + d_k)"
    return "2*", "A_kv*d_k"


# --- how wide queries and keys run after transformers' rotary step -------------------------------------------------
Rotary = Callable[[Mapping[str, Any], int], "int | None"]  # (raw, d_k) -> the width, None where the step fails


def rotary_width(d_k: int, rotated: int | None = None) -> int | None:
    """The width of queries and keys after transformers' rotary step (``q·cos + rotate_half(q)·sin``) on a head of d_k
    whose first R = ``rotated`` dimensions turn (all of them by default): the angles come as ⌈R/2⌉ pairs, cos and sin
    R + R mod 2 wide, and the step takes that many dimensions of the head (``rotary_dim = cos.shape[-1]``, or the whole
    head where the family rotates it whole). d_k where they fit; for a head of 1 the angles' width (its one dimension
    broadcasts against them: 2 for the one pair of R = 1, queries and keys run 2 wide, values stay 1); None where the
    last pair reaches past a wider head (an odd head rotated whole): the forward pass fails.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    R = d_k if rotated is None else rotated
    if R + R % 2 <= d_k:
        return d_k
    return R + R % 2 if d_k == 1 else None


def halves_width(raw: Mapping[str, Any], d_k: int) -> int | None:
    """GPT-OSS's rotary step (``torch.chunk(x, 2)``: the first ⌈d_k/2⌉ dimensions against the last ⌊d_k/2⌋, each times
    ⌈d_k/2⌉ angles): an odd head of 3 runs 4 wide; a head of 1 has no second half (the forward pass fails).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    return d_k + d_k % 2 if d_k != 1 else None


def pairs_width(raw: Mapping[str, Any], d_k: int) -> int | None:
    """Llama 4's rotary step (``view_as_complex``: the head as d_k/2 complex numbers): an odd head fails.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    return None if d_k % 2 else d_k


def widen(sizes: dict[str, int], width: int | None) -> bool:
    """Files ``d_qk``, the width of queries and keys after the rotary step (:func:`rotary_width`), in ``sizes`` where it
    is neither d_k nor a failure (None) and a layer is built; True where it did.

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    if width is None or width == sizes.get("d_k", sizes["H"] // sizes["A"]) or not sizes["L"]:
        return False
    sizes["d_qk"] = width
    return True


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool],
         window: int | None = None, types: list[str] | None = None, rotates: bool = True) -> dict[str, tuple[str, str]]:
    """What transformers cannot run: key/value heads that do not divide the query heads (its ``repeat_kv`` gives
    A_kv·⌊A/A_kv⌋ heads of keys for A of queries), heads 0 wide, a head the rotary step cannot turn (``rotates``
    False: :func:`rotary_width` and its kin give None), a cache it cannot keep (:func:`cache_layers`).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    problems = {}
    if sizes["A"] % sizes["A_kv"] and sizes["L"]:  # no layer (L = 0): nothing attends
        key = "num_key_value_heads"
        problems["forward"] = (key, "grouped-query attention shares each key/value head among a whole number of query "
                                    f"heads: num_attention_heads = {sizes['A']} is not divisible by {key} = "
                                    f"{sizes['A_kv']} (transformers builds the model, its forward pass fails)")
    elif sizes["d_k"] == 0 and sizes["L"]:  # Gemma 2's head_dim: 0 builds its projections 0 wide
        problems["forward"] = ("head_dim", "0 dimensions per head: transformers builds the attention projections 0 "
                                           "wide, and its forward pass fails (it cannot split 0 values into heads of 0)")
    elif not rotates and sizes["L"]:  # odd heads of 1 and 3 build (validate_rope lets heads of 4 or fewer pass)
        d_k = sizes["d_k"]
        problems["forward"] = ("head_dim", f"{d_k} dimension{'s' * (d_k != 1)} per head: rotary embeddings turn pairs "
                                           "of dimensions; an odd head fails in transformers' forward pass")
    _, problem = cache_layers(raw, sizes, window, types)
    if problem is not None:
        problems["cache"] = problem
    return problems


def check_head(raw: Mapping[str, Any], sizes: Mapping[str, int], stored: bool = True) -> None:
    """Refuse what transformers refuses to build: heads of 0 dimensions from H // A = 0 (the rotary embedding reads
    ``head_dim or H // A`` and fails on 0; a ``head_dim: 0`` that a family accepts, Gemma 2's, leaves it H // A) and
    an odd head wider than 4, wholly rotated (``validate_rope``, which reads the config's ``head_dim``: 0 skips it).
    ``stored``: the config class keeps ``head_dim`` (LLaMA: H // A when absent); otherwise only an explicit
    ``head_dim`` is validated (Qwen2, Phi-3).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    d_k = sizes["d_k"]
    if d_k == 0 and sizes["H"] // sizes["A"] == 0 and sizes["L"]:
        raise ConfigError("num_attention_heads", f"{sizes['A']} heads leave hidden_size // num_attention_heads = 0 "
                                                 "dimensions per head (transformers' rotary embedding fails to build)")
    checked = d_k if stored and raw.get("head_dim") != 0 else raw.get("head_dim")
    factor = raw.get("partial_rotary_factor", 1.0)
    if checked is not None and checked > 4 and checked % 2 and isinstance(factor, (int, float)) \
            and int(checked * factor) == checked:
        raise ConfigError("head_dim", f"{checked}: rotary embeddings turn pairs of dimensions, an odd head wider than 4 "
                                      "is refused by transformers (validate_rope)")


def hooks(default: int | None = None, switch: str | None = None,
          types: Callable[[Mapping[str, Any], Mapping[str, int], int | None], list[str]] | None = None,
          keep_l_w: bool = False, stored_head: bool | None = True, masks: bool = False, every_mask: str | None = None,
          rotary: Rotary | None = lambda raw, d_k: rotary_width(d_k),  # a whole head, rotate_half
          rope: Callable[[Mapping[str, Any], int], list[int]] | None = None) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A family's ``read`` and ``runs`` for the cache keys: ``sliding_window`` (``default`` when absent; None unless
    the flag ``switch`` is on: Qwen2's ``use_sliding_window``), ``attention_chunk_size``, ``layer_types`` (``types``
    derives them when absent: Qwen2's ``max_window_layers``, Gemma 2's alternation), and the head checks.
    ``masks``: the model builds one attention mask per layer type, full and sliding only (Qwen2, Qwen3, Gemma 2:
    ``causal_mask_mapping``), so any other type, or windowed layers without a window, fail its forward pass itself.
    ``every_mask``: the model (its class named) builds the sliding-window mask for every input, whatever its layers
    (Gemma 2, Gemma 3's text model, GPT-OSS), so ``sliding_window: null`` fails its forward pass, layers or none.
    ``rotary(raw, d_k)``: the width of queries and keys after the family's rotary step (:func:`rotary_width`, a whole
    head turned by ``rotate_half``, by default), None where it fails; ``rope(raw, L)``: 1 for each layer that rotates, 0
    for a layer without positions (SmolLM3's and Llama 4's NoPE layers; None: every layer rotates). Where the step
    widens them, ``read`` files d_qk (and L_qk, the rotary layers, where not all are, with their cache layers,
    ``{"cache_qk": ...}``) for the FLOPs and the cache (:func:`scores`, :func:`kv_cache`). ``rotary`` None: the
    family checks its heads itself (DeepSeek-V3).

    No notebook calls it; it works behind the helpers of ``01_embeddings``.
    """
    def window(raw: Mapping[str, Any], flags: Mapping[str, bool]) -> int | None:
        if switch is not None and not flags.get(switch, raw.get(switch) is True):
            return None
        return raw["sliding_window"] if "sliding_window" in raw else default

    def layer_types(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> list[str] | None:
        given = read_layer_types(raw, sizes["L"])
        return given if given is not None or types is None else types(raw, sizes, window(raw, flags))

    def rotating(raw: Mapping[str, Any], sizes: Mapping[str, int]) -> list[int]:
        """The indices of the layers that rotate their queries and keys."""
        flags = rope(raw, sizes["L"]) if rope is not None else None
        return [i for i in range(sizes["L"]) if flags is None or flags[i]]

    def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
        kinds = layer_types(raw, sizes, flags)
        lists = read_cache(raw, sizes, window(raw, flags), kinds, keep_l_w)
        layers = rotating(raw, sizes) if rotary is not None else []
        if not layers or not widen(sizes, rotary(raw, sizes.get("d_k", sizes["H"] // sizes["A"]))):
            return lists
        if len(layers) < sizes["L"]:  # the NoPE layers keep queries and keys d_k wide
            sizes["L_qk"] = len(layers)
            kept = None if kinds is None else [kinds[i] for i in layers]
            lists["cache_qk"] = cache_layers(raw, {**sizes, "L": len(layers)}, window(raw, flags), kept)[0]
        return lists

    def family_runs(raw: Mapping[str, Any], sizes: Mapping[str, int],
                    flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
        if stored_head is not None:  # None: the family checks its heads itself (DeepSeek-V3)
            check_head(raw, sizes, stored_head)
        kinds = layer_types(raw, sizes, flags)
        turns = rotary is None or not rotating(raw, sizes) or rotary(raw, sizes["d_k"]) is not None
        problems = runs(raw, sizes, flags, window(raw, flags), kinds, turns)
        if masks and kinds:
            other = sorted({t for t in kinds if t not in (FULL, SLIDING)})
            if other:
                problems.setdefault("forward", ("layer_types", f"{json.dumps(other[0])} layers: the model builds "
                                                               "attention masks for full and sliding attention only "
                                                               "(its forward pass fails)"))
            elif SLIDING in kinds and window(raw, flags) is None:
                key = "layer_types" if "layer_types" in raw else "sliding_window"
                problems.setdefault("forward", (key, "sliding_attention layers without a sliding_window: the model's "
                                                     "sliding-window mask fails (its forward pass, cache or not)"))
        if every_mask is not None and "sliding_window" in raw and raw["sliding_window"] is None:
            problems.setdefault("forward", ("sliding_window", f"null: {every_mask} builds a sliding-window mask for "
                                                              "every input and fails without a window"))
        return problems

    return read, family_runs


_read, _runs = hooks()


# the keys no LLaMA-like config class declares, but transformers' cache reads (see cache_layers)
WINDOW = Size("sliding_window", "W", None, minimum=-2**63, nullable=True)
CHUNK = Size("attention_chunk_size", "W_c", None, minimum=-2**63, nullable=True)


LLAMA = Family(
    model_type="llama",
    architecture="LlamaForCausalLM",
    sizes=(
        Size("vocab_size", "V", 32000),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32, minimum=0),  # 0: the token table, the final norm and the head
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", None),  # None: A (multi-head attention)
        Size("head_dim", "d_k", None),  # None: H // A
        Size("intermediate_size", "I", 11008),
        Size("max_position_embeddings", "P", 2048),
        WINDOW,
        CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", False), Flag("mlp_bias", False)),
    derive=derive,
    read=_read,
    runs=_runs,
    pad_token_id=None,
    layout=_layout,
    formulas=_formulas,
    flops=flops,
    kv_cache=kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="LlamaForCausalLM",
    classes=decoder_classes("Llama", "model.", qa_prefix="transformer."),
)
