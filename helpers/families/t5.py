"""T5, T5 v1.1 and FLAN-T5 as transformers builds them (``T5ForConditionalGeneration``): an encoder–decoder.

Introduced in ``07_decoder_llms``. Two stacks share one token table ``shared`` (V × H), which is also the
LM head:

* the encoder (L layers): self-attention (q, k, v: A·d_k × H each, o: H × A·d_k; d_k = ``d_kv`` need not be
  H/A), then the feed-forward; the decoder (L_d layers, ``num_decoder_layers``; unless given, the file's own
  ``num_layers``, 6 if absent, even where the alias ``num_hidden_layers`` sets L: T5Config copies it first): causal
  self-attention, cross-attention (``EncDecAttention``: the same four matrices, its k and v over the encoder's
  tokens), then the feed-forward;
* no position table: a relative attention bias ``relative_attention_bias`` (R × A, R buckets), in layer 0
  of each stack only, shared by the other layers of that stack;
* no bias anywhere; T5LayerNorm is an RMSNorm with a gain γ only (H): one per sub-layer and one final per stack;
* the feed-forward is ``wi`` (I × H) and ``wo`` (H × I) with ReLU (t5-small, ``feed_forward_proj: relu``), or
  gated (``gated-gelu``, T5 v1.1 and FLAN-T5): ``wi_0`` and ``wi_1`` (I × H each) and ``wo``. G counts its input
  matrices (1, or 2 when gated): (G + 1)·H·I per layer.

**Always tied.** transformers 5.23's ``T5Config`` forces ``tie_word_embeddings = True``: a file's ``false``
(T5 v1.1, FLAN-T5) no longer unties the head; it only turns off the rescaling of the decoder's output by
H^-½ (``scale_decoder_outputs = False``). So ``lm_head.weight`` is ``shared.weight`` whatever the file says:
flan-t5-base counts 222,903,552 (its checkpoint on disk still holds a separate head of V·H more).
``tie_word_embeddings`` is therefore not read.

**Two lengths.** The encoder reads S_enc tokens and the decoder S_dec; the engine's FLOPs and KV cache take
one S, so both lengths are S here (the tests feed ``decoder_input_ids = input_ids``). The KV cache is
transformers' ``EncoderDecoderCache``: the decoder's self-attention keys and values over its S tokens, plus
the cross-attention keys and values over the encoder's S tokens, for each of the L_d decoder layers.

Keys T5Config does not declare but transformers' cache reads, ``sliding_window``, ``attention_chunk_size`` and
``layer_types`` (which T5Config checks against ``num_layers``, while the cache takes its first L_d entries), change
no parameter: the cache then keeps the last W − 1 tokens of each windowed layer, for self- and cross-attention alike.
``is_encoder_decoder: false`` leaves the cross-attention uncached: counted, its cache refused.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, CLASSIFIER, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD,
    QA_HEAD, Block, Layout, Param,
)
from . import llama
from .base import Family, ModelClass
from .heads import combine, linear, model_class


def _attention(name: str, c: ModelConfig) -> list[Param]:
    H, A, d_k = c["H"], c["A"], c["d_k"]
    return [Param.matrix(f"{name}.q.weight", (A * d_k, H), ATTENTION, "A*d_k*H"),
            Param.matrix(f"{name}.k.weight", (A * d_k, H), ATTENTION, "A*d_k*H"),
            Param.matrix(f"{name}.v.weight", (A * d_k, H), ATTENTION, "A*d_k*H"),
            Param.matrix(f"{name}.o.weight", (H, A * d_k), ATTENTION, "H*A*d_k")]


def _layer(c: ModelConfig, decoder: bool, first: bool) -> list[Param]:
    """One block of a stack: ``layer.0`` self-attention (+ the relative bias in block 0), [``layer.1`` cross], FF."""
    H, I = c["H"], c["I"]
    params = _attention("layer.0.SelfAttention", c)
    if first:
        params.append(Param.table("layer.0.SelfAttention.relative_attention_bias.weight", (c["R"], c["A"]),
                                  EMBEDDINGS, "R*A"))
    params.append(Param.norm("layer.0.layer_norm.weight", (H,), LAYER_NORM, "H"))
    ff = 1
    if decoder:
        params += _attention("layer.1.EncDecAttention", c)
        params.append(Param.norm("layer.1.layer_norm.weight", (H,), LAYER_NORM, "H"))
        ff = 2
    wi = ("wi_0", "wi_1") if c["G"] == 2 else ("wi",)
    params += [Param.matrix(f"layer.{ff}.DenseReluDense.{w}.weight", (I, H), FEED_FORWARD, "I*H") for w in wi]
    params += [Param.matrix(f"layer.{ff}.DenseReluDense.wo.weight", (H, I), FEED_FORWARD, "H*I"),
               Param.norm(f"layer.{ff}.layer_norm.weight", (H,), LAYER_NORM, "H")]
    return params


def _layout(c: ModelConfig, decoder: bool = True) -> Layout:
    """T5's tensors: ``shared`` (also the LM head), the encoder's blocks and final norm, the decoder's.

    ``decoder=False``: T5EncoderModel's, the encoder alone (``shared`` a lookup only)."""
    H = c["H"]
    blocks = [Block.once(Param.table("shared.weight", (c["V"], H), EMBEDDINGS, "V*H", tokens="B*S" if decoder else ""))]
    stacks = (("encoder", c["L"]), ("decoder", c["L_d"])) if decoder else (("encoder", c["L"]),)
    for stack, layers in stacks:
        decoder = stack == "decoder"
        blocks.append(Block(f"{stack}.block.{{i}}.", tuple(_layer(c, decoder, True)), range(0, min(1, layers))))
        blocks.append(Block(f"{stack}.block.{{i}}.", tuple(_layer(c, decoder, False)), range(1, layers)))
        blocks.append(Block.once(Param.norm(f"{stack}.final_layer_norm.weight", (H,), LAYER_NORM, "H")))
    return Layout(tuple(blocks))


def _bias_tables(c: ModelConfig, *depths: str) -> str:
    """The relative-bias tables (R × A) of the stacks named, one per stack that has a layer 0."""
    stacks = sum(1 for depth in depths if c[depth] > 0)
    return "V*H" + ("" if not stacks else " + R*A" if stacks == 1 else f" + {stacks}*R*A")


def _formulas(c: ModelConfig) -> dict[str, str]:
    """T5's parameter formulas per component (the LM head is ``shared``: no line of its own)."""
    return {
        EMBEDDINGS: _bias_tables(c, "L", "L_d"),
        ATTENTION: "4*(L + 2*L_d)*A*d_k*H",
        LAYER_NORM: "(2*L + 3*L_d + 2)*H",
        FEED_FORWARD: "(G + 1)*(L + L_d)*H*I",
    }


def _encoder_formulas(c: ModelConfig) -> dict[str, str]:
    """T5EncoderModel's parameter formulas: the encoder's share of T5's."""
    return {
        EMBEDDINGS: _bias_tables(c, "L"),
        ATTENTION: "4*L*A*d_k*H",
        LAYER_NORM: "(2*L + 1)*H",
        FEED_FORWARD: "(G + 1)*L*H*I",
    }


ENCODER = ModelClass(lambda c: _layout(c, decoder=False), _encoder_formulas)
ENCODER_CLASSES = ("T5EncoderModel", "T5ForTokenClassification")  # the classes on ENCODER: no decoder built


def decoder_layers(c: ModelConfig) -> int:
    """The decoder's layers the class builds: L_d, or 0 for the encoder-only classes (the heads and d_kv are read by
    the layers alone, so a null under an alias fails only where one is built).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    return 0 if c.model_class in ENCODER_CLASSES else c["L_d"]


# T5ClassificationHead, on the decoder's state at the last <eos>
SEQUENCE = combine(linear("classification_head.dense", "H", CLASSIFIER, tokens="B"),
                   linear("classification_head.out_proj", "C", CLASSIFIER, tokens="B"))

def _kv_cache(c: ModelConfig) -> str:
    """EncoderDecoderCache: the decoder's self-attention keys and values over its S tokens, and its cross-attention
    ones over the encoder's S tokens; both DynamicCaches keep only the last W − 1 (W_c − 1) tokens of a windowed
    (chunked) layer, the cross-attention cache too, as transformers does."""
    full, windowed, chunked = c.lists.get("cache", (c["L_d"], 0, 0))
    if not windowed and not chunked:
        return "2*L_d*A*d_k*S*B + 2*L_d*A*d_k*S*B"
    if windowed == c["L_d"] or chunked == c["L_d"]:
        kept = "L_d*min(S, W - 1)" if windowed else "L_d*min(S, W_c - 1)"
    else:
        rest = "L_d" + (" - L_w" if windowed else "") + (" - L_c" if chunked else "")
        kept = " + ".join(([f"({rest})*S"] if full else []) + (["L_w*min(S, W - 1)"] if windowed else [])
                          + (["L_c*min(S, W_c - 1)"] if chunked else []))
    return f"2*A*d_k*({kept})*B + 2*A*d_k*({kept})*B"


FLOPS = {  # the encoder and the decoder both over S tokens
    EMBEDDINGS: "0",
    ATTENTION_PROJECTIONS: "8*(L + 2*L_d)*B*S*A*d_k*H",
    ATTENTION_SCORES: "4*(L + 2*L_d)*B*S**2*A*d_k",
    FEED_FORWARD: "2*(G + 1)*(L + L_d)*B*S*H*I",
    LAYER_NORM: "0",
    LM_HEAD: "2*B*S*V*H",
}


def _read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The decoder's depth, and ``feed_forward_proj``: ``ACT`` (wi, wo) or ``gated-ACT`` (wi_0, wi_1, wo), as T5Config
    checks it.

    ``num_decoder_layers`` absent or null copies ``num_layers`` as the file writes it (6 if it does not), BEFORE
    transformers applies the alias ``num_hidden_layers``: ``{"num_hidden_layers": 3}`` builds 3 encoder layers and 6
    decoder layers, as T5Config's ``__post_init__`` does.
    """
    if "L_d" not in sizes:
        own = raw.get("num_layers")
        sizes["L_d"] = 6 if own is None else own  # _read_size checked it as an integer
        if sizes["L_d"] < 0:
            raise ConfigError("num_layers", f"must be at least 0, got {sizes['L_d']} (the decoder's depth copies it)")
    _read_proj(raw, sizes)
    return _cache_sizes(raw, sizes)


def _cache_types(raw: Mapping[str, Any], sizes: Mapping[str, int]) -> list[str] | None:
    """The decoder layers' cache types: ``layer_types`` (T5Config checks it lists ``num_layers`` layers) for the first
    L_d layers, or None (every layer windowed if ``sliding_window``, chunked if ``attention_chunk_size``, else full)."""
    types = llama.read_layer_types(raw, sizes["L"])
    return None if types is None else types[:sizes["L_d"]]


def _cache_sizes(raw: Mapping[str, Any], sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """``{"cache": (full, windowed, chunked)}`` over the decoder's L_d layers, ``L_w``/``L_c``/``W``/``W_c`` in sizes."""
    cache = {**sizes, "L": sizes["L_d"]}
    lists = llama.read_cache(raw, cache, sizes.get("W"), _cache_types(raw, sizes))
    for key in ("L_w", "L_c", "W", "W_c"):
        sizes.pop(key, None)
        if key in cache:
            sizes[key] = cache[key]
    return lists


def _runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """A cache transformers cannot keep: windows without a size, ``layer_types`` shorter than the decoder (its
    DynamicCache then indexes past the list), ``is_encoder_decoder: false`` (no cross-attention cache)."""
    if raw.get("is_encoder_decoder", True) is False:
        return {"cache": ("is_encoder_decoder", "false leaves the decoder without its cross-attention cache: not "
                                                "modelled")}
    types = llama.read_layer_types(raw, sizes["L"])
    if types is not None and len(types) < sizes["L_d"]:
        return {"cache": ("layer_types", f"lists {len(types)} layers for num_decoder_layers = {sizes['L_d']}: "
                                         "transformers' cache fails on the decoder's later layers")}
    _, problem = llama.cache_layers(raw, {**sizes, "L": sizes["L_d"]}, sizes.get("W"), _cache_types(raw, sizes))
    return {"cache": problem} if problem else {}


def _read_proj(raw: Mapping[str, Any], sizes: dict[str, int]) -> None:
    """``feed_forward_proj``: ``ACT`` (wi, wo) or ``gated-ACT`` (wi_0, wi_1, wo), as T5Config checks it; an
    ``is_gated_act`` key in the file decides instead (transformers sets the attribute from it after deriving it)."""
    proj = raw.get("feed_forward_proj", "relu")
    parts = proj.split("-") if isinstance(proj, str) else []
    if not parts or not all(parts) or len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated"):
        raise ConfigError("feed_forward_proj", f"{json.dumps(proj)} is neither \"ACT\" nor \"gated-ACT\" (e.g. \"relu\", "
                                               "\"gated-gelu\")")
    sizes["G"] = len(parts)  # input matrices of the feed-forward: 2 when gated
    if "is_gated_act" in raw:  # T5Config derives it from feed_forward_proj, but a key in the file overrides that
        sizes["G"] = 2 if raw["is_gated_act"] else 1


T5 = Family(
    model_type="t5",
    architecture="T5ForConditionalGeneration",
    sizes=(
        Size("vocab_size", "V", 32128),
        Size("d_model", "H", 512, aliases=("hidden_size",)),
        Size("d_kv", "d_k", 64, aliases=("head_dim",), layers=("L", decoder_layers)),  # read by T5Attention alone
        Size("d_ff", "I", 2048),
        Size("num_layers", "L", 6, minimum=0, aliases=("num_hidden_layers",)),
        Size("num_decoder_layers", "L_d", None, minimum=0, nullable=True),  # None: the file's num_layers
        Size("num_heads", "A", 8, aliases=("num_attention_heads",), layers=("L", decoder_layers)),
        Size("relative_attention_num_buckets", "R", 32),
        llama.WINDOW,  # T5Config declares neither, but transformers' DynamicCache reads both
        llama.CHUNK,
    ),
    read=_read,
    runs=_runs,
    heads_divide_hidden="never",  # d_kv sizes the heads: A·d_k need not be H
    pad_token_id=0,
    padded=(),  # shared has no padding row
    layout=_layout,
    formulas=_formulas,
    flops=lambda c: dict(FLOPS),
    # EncoderDecoderCache: self-attention over the decoder's S tokens + cross-attention over the encoder's S tokens
    kv_cache=_kv_cache,
    positions=lambda c: None,  # relative attention bias: no position table, no longest sequence
    torch_ref="T5ForConditionalGeneration",
    classes={
        "T5Model": model_class(lm_head=False),  # the same tensors (the head is shared), no LM head matmul
        "T5EncoderModel": ENCODER,
        "T5ForSequenceClassification": model_class(SEQUENCE, prefix=("", "transformer."), lm_head=False, labels=True),
        "T5ForTokenClassification": model_class(linear("classifier", "C", CLASSIFIER), prefix=("", "transformer."),
                                                base=ENCODER, labels=True),
        "T5ForQuestionAnswering": model_class(linear("qa_outputs", "C", QA_HEAD), lm_head=False, labels=True),
    },
)
