"""ALBERT as transformers builds it (``AlbertModel``): factorised embeddings, one layer shared by all L, a pooler.

Not used by a notebook. The token, position and segment tables are ``embedding_size`` (d_e; ALBERT's paper writes E, which the series keeps for the experts of a mixture) wide
(:data:`helpers.families.electra.ELECTRA`'s tables), and ``encoder.embedding_hidden_mapping_in`` (d_e → H,
with bias, present even where d_e = H) lifts them to the encoder's width. The encoder holds ONE layer
(``encoder.albert_layer_groups.0.albert_layers.0.``) that runs L times: its parameters are counted once,
whatever ``num_hidden_layers`` is, while its matrices multiply ``L·B·S`` tokens per forward pass (their
``tokens``), so the FLOPs still count L layers.

Groups (``num_hidden_groups``, G) and layers per group (``inner_group_num``, K), as transformers builds them:
``encoder.albert_layer_groups.{g}.albert_layers.{j}.``, G·K layers of parameters. Run ``i`` of the L runs uses
group ``int(i / (L / G))`` (``AlbertTransformer.forward``, float division as there) and runs all K of its layers,
so group g's matrices multiply ``n_g·B·S`` tokens (n_g runs; a group no run reaches still holds its parameters),
L·K layer runs in all. G = 0 builds no layer: with L > 0 its forward pass divides by zero (FLOPs refused).

Heads that do not divide H: ``AlbertAttention`` checks them only when the config has no ``embedding_size``, and
ALBERT's always has one: transformers builds query, key and value ``A·⌊H/A⌋`` wide (and ``dense`` H×H), then
its forward pass fails on the width. Counted; FLOPs, memory and budget refused naming ``num_attention_heads``.
The pooler is BERT's (dense H×H on the [CLS] token).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, MLM_HEAD, POOLER,
    SOP_HEAD, Block, Layout, Param,
)
from . import bert, electra
from .base import Family
from .heads import TIED, combine, decoder, encoder_classes, layer_norm, linear, model_class, own_bias

SHARED = "encoder.albert_layer_groups.0.albert_layers.0."
RUNS = "L*B*S"  # the shared layer runs L times on every token


def group_runs(c: ModelConfig) -> list[int]:
    """How many of the L runs use each group: run ``i`` uses group ``int(i / (L / G))``, as ``AlbertTransformer``.

    No notebook calls it; it works behind the helpers of ``00_overview``."""
    L, G = c["L"], c["G"]
    runs = [0] * G
    if G:
        for i in range(L):
            runs[min(int(i / (L / G)), G - 1)] += 1
    return runs


def _layer(c: ModelConfig, prefix: str = SHARED, tokens: str = RUNS) -> list[Param]:
    """One ``AlbertLayer``, under its whole name, counted once, multiplying ``tokens`` (``L·B·S``: every run)."""
    H, I = c["H"], c["I"]
    width, wide = c["A"] * c["d_k"], "A*d_k"  # A·⌊H/A⌋: H unless the heads leave part of H out
    rows = [Param.norm(prefix + "full_layer_layer_norm.weight", (H,), LAYER_NORM, "H"),
            Param.norm(prefix + "full_layer_layer_norm.bias", (H,), LAYER_NORM, "H")]
    for proj in ("query", "key", "value", "dense"):
        out = H if proj == "dense" or width == H else width
        rows += [Param.matrix(prefix + f"attention.{proj}.weight", (out, H), ATTENTION,
                              "H**2" if out == H else f"{wide}*H", tokens=tokens),
                 Param.bias(prefix + f"attention.{proj}.bias", (out,), ATTENTION, "H" if out == H else wide)]
    return rows + [
        Param.norm(prefix + "attention.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm(prefix + "attention.LayerNorm.bias", (H,), LAYER_NORM, "H"),
        Param.matrix(prefix + "ffn.weight", (I, H), FEED_FORWARD, "I*H", tokens=tokens),
        Param.bias(prefix + "ffn.bias", (I,), FEED_FORWARD, "I"),
        Param.matrix(prefix + "ffn_output.weight", (H, I), FEED_FORWARD, "H*I", tokens=tokens),
        Param.bias(prefix + "ffn_output.bias", (H,), FEED_FORWARD, "H"),
    ]


def _layers(c: ModelConfig) -> list[Param]:
    """Every group's layers: group g's K layers each multiply the ``n_g·B·S`` tokens of its runs."""
    if (c["G"], c["K"]) == (1, 1):
        return _layer(c)
    rows = []
    for g, runs in enumerate(group_runs(c)):
        tokens = RUNS if runs == c["L"] else f"{runs}*B*S" if runs else ""
        for j in range(c["K"]):
            rows += _layer(c, f"encoder.albert_layer_groups.{g}.albert_layers.{j}.", tokens)
    return rows


def _layout(c: ModelConfig) -> Layout:
    d_e, H = c["d_e"], c["H"]
    embeddings = electra.ELECTRA.layout(c).blocks[0].params[:5]  # the d_e-wide tables and their LayerNorm
    mapping = [Param.matrix("encoder.embedding_hidden_mapping_in.weight", (H, d_e), EMBEDDINGS, "H*d_e"),
               Param.bias("encoder.embedding_hidden_mapping_in.bias", (H,), EMBEDDINGS, "H")]
    pooler = [Param.matrix("pooler.weight", (H, H), POOLER, "H**2", tokens="B"),  # the [CLS] token only
              Param.bias("pooler.bias", (H,), POOLER, "H")]
    return Layout((Block.once(*embeddings, *mapping, *_layers(c), *pooler),))


FORMULAS = {
    EMBEDDINGS: "(V + P + T)*d_e + d_e*H + H",
    LAYER_NORM: "2*d_e + 4*H",  # one shared layer: no factor L
    ATTENTION: "4*H**2 + 4*H",
    FEED_FORWARD: "2*H*I + I + H",
    POOLER: "H**2 + H",
}
FLOPS = {
    EMBEDDINGS: "2*B*S*d_e*H",  # embedding_hidden_mapping_in on every token
    ATTENTION_PROJECTIONS: "8*L*B*S*H**2",  # the shared layer's matmuls, run L times
    ATTENTION_SCORES: "4*L*B*S**2*H",
    FEED_FORWARD: "4*L*B*S*H*I",
    LAYER_NORM: "0",
    POOLER: "2*B*H**2",
}


def _formulas(c: ModelConfig) -> dict[str, str]:
    """One shared layer (no factor L), or G·K of them; query, key and value A·d_k wide where the heads leave part of H."""
    if (c["G"], c["K"], c["A"] * c["d_k"]) == (1, 1, c["H"]):
        return dict(FORMULAS)
    layers = "" if (c["G"], c["K"]) == (1, 1) else "G*K*"
    attention = "(4*H**2 + 4*H)" if c["A"] * c["d_k"] == c["H"] else "(3*A*d_k*H + H**2 + 3*A*d_k + H)"
    return {**FORMULAS, LAYER_NORM: f"2*d_e + {layers}4*H", ATTENTION: f"{layers}{attention}",
            FEED_FORWARD: f"{layers}(2*H*I + I + H)"}


def _flops(c: ModelConfig) -> dict[str, str]:
    """The layer runs: L of one shared layer, or L·K (each run goes through the K layers of its group)."""
    if c["K"] == 1:
        return dict(FLOPS)
    return {**FLOPS, ATTENTION_PROJECTIONS: "8*L*K*B*S*H**2", ATTENTION_SCORES: "4*L*K*B*S**2*H",
            FEED_FORWARD: "4*L*K*B*S*H*I"}


def _runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """What transformers builds but cannot run: heads leaving part of H out, runs with no group to use."""
    if sizes["A"] * sizes["d_k"] != sizes["H"] and sizes["L"] and sizes["G"] and sizes["K"]:
        return {"forward": ("num_attention_heads", f"hidden_size = {sizes['H']} is not divisible by num_attention_heads "
                                                   f"= {sizes['A']}: transformers builds query, key and value "
                                                   f"{sizes['A'] * sizes['d_k']} wide, and its forward pass fails")}
    if sizes["G"] == 0 and sizes["L"]:
        return {"forward": ("num_hidden_groups", "0 groups for num_hidden_layers = "
                                                 f"{sizes['L']} runs: transformers' forward pass divides by zero")}
    return {}


# AlbertMLMHead: its own bias, LayerNorm(E), H → E, the E-wide token table (tied, bias tied to its own)
MLM = combine(own_bias("predictions.bias"), layer_norm("predictions.LayerNorm", MLM_HEAD, width="d_e"),
              linear("predictions.dense", "d_e", MLM_HEAD),
              decoder("predictions.decoder", bert.WORD_TABLE, width="d_e", bias_tied_to="predictions.bias"))
SOP = linear("sop_classifier.classifier", "C", SOP_HEAD, tokens="B")  # sentence order, on the pooled output

ALBERT = Family(
    model_type="albert",
    architecture="AlbertModel",
    sizes=(
        Size("vocab_size", "V", 30000),
        Size("embedding_size", "d_e", 128),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 12, minimum=0),
        Size("num_attention_heads", "A", 64),
        Size("intermediate_size", "I", 16384),
        Size("max_position_embeddings", "P", 512),
        Size("type_vocab_size", "T", 2, minimum=0),
        Size("num_hidden_groups", "G", 1, minimum=0),
        Size("inner_group_num", "K", 1, minimum=0),
    ),
    refused={
        "position_embedding_type": ("absolute", "only absolute position tables are modelled"),
    },
    read=lambda raw, sizes, flags: bert.read_heads({}, {**sizes, "L": sizes["G"] * sizes["K"]}, flags),  # layers built
    runs=_runs,
    heads_divide_hidden="never",  # AlbertConfig has an embedding_size: AlbertAttention does not check the heads
    pad_token_id=0,
    layout=_layout,
    formulas=_formulas,
    flops=_flops,
    positions=lambda c: c["P"],
    torch_ref="AlbertModel",
    classes=encoder_classes("Albert", "albert.", mlm=MLM, extra={
        "AlbertForPreTraining": model_class(combine(MLM, SOP), prefix=("", "albert."), flags=TIED, labels=True)}),
)
