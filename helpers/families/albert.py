"""ALBERT as transformers builds it (``AlbertModel``): factorised embeddings, one layer shared by all L, a pooler.

Not used by a notebook. The token, position and segment tables are ``embedding_size`` (d_e; ALBERT's paper writes E, which the series keeps for the experts of a mixture) wide
(:data:`helpers.families.electra.ELECTRA`'s tables), and ``encoder.embedding_hidden_mapping_in`` (d_e → H,
with bias, present even where d_e = H) lifts them to the encoder's width. The encoder holds ONE layer
(``encoder.albert_layer_groups.0.albert_layers.0.``) that runs L times: its parameters are counted once,
whatever ``num_hidden_layers`` is, while its matrices multiply ``L·B·S`` tokens per forward pass (their
``tokens``), so the FLOPs still count L layers. More groups (``num_hidden_groups``) or more layers per
group (``inner_group_num``) are refused. The pooler is BERT's (dense H×H on the [CLS] token).
"""

from __future__ import annotations

from ..config import ModelConfig, Size
from ..params import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, MLM_HEAD, POOLER,
    SOP_HEAD, Block, Layout, Param,
)
from . import bert, electra
from .base import Family
from .heads import TIED, combine, decoder, encoder_classes, layer_norm, linear, model_class, own_bias

SHARED = "encoder.albert_layer_groups.0.albert_layers.0."
RUNS = "L*B*S"  # the shared layer runs L times on every token


def _layer(c: ModelConfig) -> list[Param]:
    """The one ``AlbertLayer``, under its whole name, counted once, multiplying ``L·B·S`` tokens."""
    H, I = c["H"], c["I"]
    rows = [Param.norm(SHARED + "full_layer_layer_norm.weight", (H,), LAYER_NORM, "H"),
            Param.norm(SHARED + "full_layer_layer_norm.bias", (H,), LAYER_NORM, "H")]
    for proj in ("query", "key", "value", "dense"):
        rows += [Param.matrix(SHARED + f"attention.{proj}.weight", (H, H), ATTENTION, "H**2", tokens=RUNS),
                 Param.bias(SHARED + f"attention.{proj}.bias", (H,), ATTENTION, "H")]
    return rows + [
        Param.norm(SHARED + "attention.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm(SHARED + "attention.LayerNorm.bias", (H,), LAYER_NORM, "H"),
        Param.matrix(SHARED + "ffn.weight", (I, H), FEED_FORWARD, "I*H", tokens=RUNS),
        Param.bias(SHARED + "ffn.bias", (I,), FEED_FORWARD, "I"),
        Param.matrix(SHARED + "ffn_output.weight", (H, I), FEED_FORWARD, "H*I", tokens=RUNS),
        Param.bias(SHARED + "ffn_output.bias", (H,), FEED_FORWARD, "H"),
    ]


def _layout(c: ModelConfig) -> Layout:
    d_e, H = c["d_e"], c["H"]
    embeddings = electra.ELECTRA.layout(c).blocks[0].params[:5]  # the d_e-wide tables and their LayerNorm
    mapping = [Param.matrix("encoder.embedding_hidden_mapping_in.weight", (H, d_e), EMBEDDINGS, "H*d_e"),
               Param.bias("encoder.embedding_hidden_mapping_in.bias", (H,), EMBEDDINGS, "H")]
    pooler = [Param.matrix("pooler.weight", (H, H), POOLER, "H**2", tokens="B"),  # the [CLS] token only
              Param.bias("pooler.bias", (H,), POOLER, "H")]
    return Layout((Block.once(*embeddings, *mapping, *_layer(c), *pooler),))


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
        Size("num_hidden_layers", "L", 12),
        Size("num_attention_heads", "A", 64),
        Size("intermediate_size", "I", 16384),
        Size("max_position_embeddings", "P", 512),
        Size("type_vocab_size", "T", 2, minimum=0),
    ),
    refused={
        "num_hidden_groups": (1, "several groups of layers, each shared by L/G layers, are not modelled"),
        "inner_group_num": (1, "several layers inside the shared group are not modelled"),
        "position_embedding_type": ("absolute", "only absolute position tables are modelled"),
    },
    pad_token_id=0,
    layout=_layout,
    formulas=lambda c: dict(FORMULAS),
    flops=lambda c: dict(FLOPS),
    positions=lambda c: c["P"],
    torch_ref="AlbertModel",
    classes=encoder_classes("Albert", "albert.", mlm=MLM, extra={
        "AlbertForPreTraining": model_class(combine(MLM, SOP), prefix=("", "albert."), flags=TIED, labels=True)}),
)
