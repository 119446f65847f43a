"""ModernBERT as transformers builds it (``ModernBertModel``): the encoder of 2024, BERT without biases.

Works behind the helpers of ``11_todays_models``, which sets it against BERT of ``06_full_bert``. Warner et al.
2024 ("Smarter, Better, Faster, Longer", arXiv:2412.13663, §2.1) keep BERT's encoder and change what fills it:

* no biases: ``attention_bias``, ``mlp_bias`` and ``classifier_bias`` off, and LayerNorms without β
  (``norm_bias`` off); ``decoder_bias`` (the MLM decoder's own V-wide bias) on;
* no position table: rotary positions with two bases, ``global_rope_theta`` (160,000) on global layers and
  ``local_rope_theta`` (10,000) on local ones (no tensor: ``max_position_embeddings`` bounds nothing);
* a token table with a LayerNorm after it (``embeddings.norm``), pre-norm layers (the first has no ``attn_norm``:
  the embedding norm already normalised its input) and a ``final_norm``: 2L + 1 norms;
* attention as one fused projection ``attn.Wqkv`` (3H × H) and ``attn.Wo`` (H × H): 4H² per layer;
* a GeGLU feed-forward, ``mlp.Wi`` fused 2I × H (the GELU half and the gate half) and ``mlp.Wo`` H × I: 3HI;
* alternating attention: every ``global_attn_every_n_layers``-th layer (3: layers 0, 3, 6 ...) attends globally,
  the others within ``local_attention`` tokens (128: |i − j| ≤ 64), or as ``layer_types`` says.

The window changes no tensor, and with eager attention no FLOP either: ``FlopCounterMode`` counts the full S × S
scores and values in every layer, local ones included (the mask is added to the scores after the matmul; measured
on transformers' eager model). A kernel that skips the masked blocks (flash attention's window) does less. An
encoder keeps no cache. The classes with heads put ``ModernBertPredictionHead`` (dense H × H + LayerNorm) on the
base model (``model.``); the masked LM's ``decoder`` is tied to the token table (``tie_word_embeddings``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, CLASSIFIER, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, MLM_HEAD,
    QA_HEAD, Block, Layout, Param,
)
from . import llama
from .base import Family
from .heads import combine, decoder, layer_norm, linear, model_class
from .llama import FULL, SLIDING, read_layer_types

TABLE_NAME = "embeddings.tok_embeddings.weight"  # what the masked LM's decoder is tied to
LOCAL = "local"  # ModelConfig.lists key: 1 for each layer that attends within the window, 0 for a global one


def _norm(name: str, c: ModelConfig, component: str = LAYER_NORM) -> list[Param]:
    """A LayerNorm: γ, and β where ``norm_bias`` is on."""
    return layer_norm(name, component, bias="norm_bias")(c).params


def _linear(name: str, shape: tuple[int, int], formula: str, bias: str, flag: str, c: ModelConfig,
            component: str) -> list[Param]:
    """An ``nn.Linear``: its weight (out × in, ``formula``), and its bias (``bias``) where the flag ``flag`` is on."""
    weight = Param.matrix(f"{name}.weight", shape, component, formula)
    return [weight, Param.bias(f"{name}.bias", shape[:1], component, bias)] if c.flags[flag] else [weight]


def _layer(c: ModelConfig, first: bool) -> list[Param]:
    """One encoder layer, names relative to ``layers.{i}.``: the first has no ``attn_norm`` (an ``nn.Identity``)."""
    H, I = c["H"], c["I"]
    params = [] if first else _norm("attn_norm", c)
    params += _linear("attn.Wqkv", (3 * H, H), "3*H**2", "3*H", "attention_bias", c, ATTENTION)  # A·d_k = H
    params += _linear("attn.Wo", (H, H), "H**2", "H", "attention_bias", c, ATTENTION)
    params += _norm("mlp_norm", c)
    params += _linear("mlp.Wi", (2 * I, H), "2*I*H", "2*I", "mlp_bias", c, FEED_FORWARD)  # the GELU half, the gate
    params += _linear("mlp.Wo", (H, I), "H*I", "H", "mlp_bias", c, FEED_FORWARD)
    return params


def _layout(c: ModelConfig) -> Layout:
    """``ModernBertModel``'s tensors: the token table and its norm, layer 0, layers 1 to L − 1, the final norm."""
    V, H, L = c["V"], c["H"], c["L"]
    blocks = [Block.once(Param.table(TABLE_NAME, (V, H), EMBEDDINGS, "V*H"), *_norm("embeddings.norm", c)),
              Block("layers.{i}.", tuple(_layer(c, first=True)), range(0, 1))]
    if L > 1:
        blocks.append(Block("layers.{i}.", tuple(_layer(c, first=False)), range(1, L)))
    return Layout((*blocks, Block.once(*_norm("final_norm", c))))


def _formulas(c: ModelConfig) -> dict[str, str]:
    """Parameters per component: 4H² of attention and 3HI of GeGLU per layer, 2L + 1 LayerNorms, with the biases
    the flags switch on."""
    attention = "4*H**2" + (" + 4*H" if c.flags["attention_bias"] else "")
    feed_forward = "3*H*I" + (" + 2*I + H" if c.flags["mlp_bias"] else "")
    return {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: f"L*({feed_forward})",
        LAYER_NORM: "2*(2*L + 1)*H" if c.flags["norm_bias"] else "(2*L + 1)*H",
    }


FLOPS = {
    EMBEDDINGS: "0",
    ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
    # every layer, local ones too: eager attention multiplies the whole S×S and adds the window's mask afterwards
    ATTENTION_SCORES: "4*L*B*S**2*H",
    FEED_FORWARD: "6*L*B*S*H*I",  # Wi: 2·(2I)·H per token, Wo: 2·H·I
    LAYER_NORM: "0",
}


def _integer(raw: Mapping[str, Any], key: str, default: int) -> int:
    """An ``int`` field of ``ModernBertConfig`` (its strict validation refuses null, floats and booleans)."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(key, f"must be an integer, got {json.dumps(value)}")
    return value


def _window(raw: Mapping[str, Any]) -> int:
    """``local_attention``, or twice ``sliding_window`` where the file gives that key (the config's setter for it)."""
    window = _integer(raw, "local_attention", 128)
    if "sliding_window" in raw:
        half = raw["sliding_window"]
        if not isinstance(half, int):  # null fails the setter; a float makes local_attention a float
            raise ConfigError("sliding_window", f"must be an integer (ModernBertConfig sets local_attention to twice "
                                                f"it), got {json.dumps(half)}")
        window = 2 * half
    return window


def _layer_types(raw: Mapping[str, Any], L: int) -> list[str]:
    """``layer_types`` as transformers reads it, or its own from ``global_attn_every_n_layers`` (every n-th layer
    global, from layer 0); only full and sliding layers, the two its rotary embedding has bases for."""
    types = read_layer_types(raw, L)
    if types is None:
        n = raw.get("global_attn_every_n_layers", 3)
        if isinstance(n, bool) or not isinstance(n, (int, float)) or n == 0:
            raise ConfigError("global_attn_every_n_layers", f"must be a non-zero number (ModernBertConfig takes "
                                                            f"i % n for each layer i), got {json.dumps(n)}")
        return [SLIDING if i % n else FULL for i in range(L)]
    other = sorted({t for t in types if t not in (FULL, SLIDING)})
    if other:
        raise ConfigError("layer_types", f"{json.dumps(other[0])} layers: ModernBERT's rotary embedding has bases for "
                                         "full_attention and sliding_attention only (transformers fails to build it)")
    return types


def _rotary_width(raw: Mapping[str, Any], d_k: int) -> int:
    """The width of the rotary angles: twice ⌈head_dim / 2⌉, where ``head_dim`` is the file's (a key no field of
    the config declares, but the rotary embedding reads it) or H // A; refused where transformers refuses it."""
    given = raw.get("head_dim")
    if not given:  # absent, null or 0: H // A
        return 2 * math.ceil(d_k / 2)
    if isinstance(given, bool) or not isinstance(given, (int, float)) or not math.isfinite(given):
        raise ConfigError("head_dim", f"must be a number, got {json.dumps(given)}")
    if given < 0:
        raise ConfigError("head_dim", f"{given}: transformers fails to build the rotary angles of a negative width")
    if given > 4 and given % 2 and int(given) == given:
        raise ConfigError("head_dim", f"{given}: rotary embeddings turn pairs of dimensions, an odd head wider than 4 "
                                      "is refused by transformers (validate_rope)")
    return 2 * math.ceil(given / 2)


def _read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The window ``W`` (``local_attention``) and ``L_w``, the local layers, into ``sizes``; which layers are local
    (``{"local": ...}``); ``head_dim`` and ``classifier_pooling`` checked as ``ModernBertConfig`` checks them."""
    types = _layer_types(raw, sizes["L"])
    sizes["W"] = _window(raw)
    sizes["L_w"] = types.count(SLIDING)
    d_k = sizes["H"] // sizes["A"]
    llama.widen(sizes, _queries(_rotary_width(raw, d_k), d_k))
    pooling = raw.get("classifier_pooling", "cls")
    if pooling not in ("cls", "mean"):
        raise ConfigError("classifier_pooling", f"must be \"cls\" or \"mean\", got {json.dumps(pooling)}")
    return {LOCAL: tuple(int(t == SLIDING) for t in types)}


def _queries(width: int, d_k: int) -> int | None:
    """The width of queries and keys after the rotary step (``q·cos + rotate_half(q)·sin``, the whole head) against
    angles ``width`` wide: d_k where they match; a head of 1 broadcasts against any width and runs that wide (d_qk,
    :func:`~helpers.families.llama.rotary_width`); None: the forward pass fails."""
    return d_k if width == d_k else width if d_k == 1 else None


def _runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """Heads whose width the rotary angles do not match: odd heads (H // A), a ``head_dim`` other than H // A, and
    H = 0 fail transformers' forward pass; heads of 1 dimension run as wide as the angles (:func:`_queries`).
    """
    d_k = sizes["d_k"]
    width = _rotary_width(raw, d_k)
    if d_k == 0:
        return {"forward": ("hidden_size", "0: the attention splits 0 values into heads of 0, and transformers' "
                                           "forward pass fails")}
    if _queries(width, d_k) is not None:
        return {}
    key = "head_dim" if raw.get("head_dim") else "num_attention_heads"
    return {"forward": (key, f"rotary angles {width} wide against heads of {d_k} dimensions (hidden_size / "
                             "num_attention_heads): transformers builds the model, and its forward pass fails")}


def _head(component: str, tokens: str):
    """``ModernBertPredictionHead`` under ``head.``: dense H × H (bias: ``classifier_bias``), then a LayerNorm."""
    return combine(linear("head.dense", "H", component, tokens=tokens, bias="classifier_bias"),
                   layer_norm("head.norm", component, bias="norm_bias"))


_BASE = ("", "model.")  # every class with a head holds ModernBertModel as ``model``

CLASSES = {
    # the head on every token, then the decoder: tied to the token table, with its own bias (decoder_bias)
    "ModernBertForMaskedLM": model_class(combine(_head(MLM_HEAD, "B*S"),
                                                 decoder("decoder", TABLE_NAME, bias="decoder_bias")), prefix=_BASE),
    # the head on one pooled vector per sequence (classifier_pooling: the first token, or the mean)
    "ModernBertForSequenceClassification": model_class(
        combine(_head(CLASSIFIER, "B"), linear("classifier", "C", CLASSIFIER, tokens="B")), prefix=_BASE, labels=True),
    "ModernBertForTokenClassification": model_class(
        combine(_head(CLASSIFIER, "B*S"), linear("classifier", "C", CLASSIFIER)), prefix=_BASE, labels=True),
    # num_labels outputs (2 by default: start and end), named classifier as the others
    "ModernBertForQuestionAnswering": model_class(
        combine(_head(QA_HEAD, "B*S"), linear("classifier", "C", QA_HEAD)), prefix=_BASE, labels=True),
    "ModernBertForMultipleChoice": model_class(
        combine(_head(CLASSIFIER, "B"), linear("classifier", "1", CLASSIFIER, tokens="B")), prefix=_BASE),
}

MODERNBERT = Family(
    model_type="modernbert",
    architecture="ModernBertModel",
    sizes=(
        Size("vocab_size", "V", 50368, minimum=0),
        Size("hidden_size", "H", 768, minimum=0),  # 0 builds; its forward pass fails (runs)
        # 0 layers: ModernBertConfig's rope_parameters, with no layer type to key them, fail its own validation
        Size("num_hidden_layers", "L", 22),
        Size("num_attention_heads", "A", 12),
        Size("intermediate_size", "I", 1152, minimum=0),
        Size("max_position_embeddings", "P", 8192),  # rotary: bounds no table
    ),
    flags=(Flag("tie_word_embeddings", True), Flag("norm_bias", False), Flag("attention_bias", False),
           Flag("mlp_bias", False), Flag("classifier_bias", False), Flag("decoder_bias", True)),
    read=_read,
    runs=_runs,
    heads_divide_hidden="always",  # ModernBertAttention refuses heads that do not divide H
    pad_token_id=50283,
    layout=_layout,
    formulas=_formulas,
    flops=lambda c: llama.with_scores(c, FLOPS),
    positions=lambda c: None,  # rotary: no position table
    torch_ref="ModernBertModel",
    classes=CLASSES,
)
