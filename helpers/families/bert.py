"""BERT, RoBERTa and XLM-RoBERTa as transformers builds them (``BertModel`` / ``RobertaModel`` /
``XLMRobertaModel``, pooler included).

Introduced in ``00_overview``. RoBERTa is BERT's layout in another config dialect: another default
vocabulary and padding index (1, which also pads its position table: positions start at 2), and the
position table registered last.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping

from ..spec import ConfigError, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, CLASSIFIER, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, MLM_HEAD,
    NSP_HEAD, POOLER, Block, Layout, Param,
)
from .base import Family
from .heads import TIED, combine, decoder, encoder_classes, layer_norm, linear, model_class, own_bias

SIZES = (
    Size("hidden_size", "H", 768),
    Size("num_hidden_layers", "L", 12, minimum=0),
    Size("num_attention_heads", "A", 12),
    Size("intermediate_size", "I", 3072),
    Size("max_position_embeddings", "P", 512),
    Size("type_vocab_size", "T", 2, minimum=0),  # transformers builds an empty segment table for 0
)
# transformers 5 builds absolute position tables only (add_cross_attention, with is_decoder, adds cross-attention
# layers: read_heads); is_decoder alone only changes the mask, not the parameters.
REFUSED = {
    "position_embedding_type": ("absolute", "transformers 5 builds absolute tables whatever this says, while a checkpoint "
                                            "trained so holds relative-distance tables; neither count would be the model's"),
}


CROSS = "cross_attention"  # ModelConfig.lists key: (1,) where add_cross_attention builds cross-attention layers


def _attention(c: ModelConfig, name: str, tokens: str) -> list[Param]:
    """BertAttention under ``name``: query, key, value A·⌊H/A⌋ wide (H where the heads divide it), output dense, LayerNorm."""
    H, width = c["H"], c["A"] * c["d_k"]
    rows = []
    for proj in ("query", "key", "value"):
        rows += [Param.matrix(f"{name}self.{proj}.weight", (H, H), ATTENTION, "H**2", tokens=tokens) if width == H else
                 Param.matrix(f"{name}self.{proj}.weight", (width, H), ATTENTION, "A*d_k*H", tokens=tokens),
                 Param.bias(f"{name}self.{proj}.bias", (width,), ATTENTION, "H" if width == H else "A*d_k")]
    return rows + [
        Param.matrix(f"{name}output.dense.weight", (H, H), ATTENTION, "H**2", tokens=tokens),
        Param.bias(f"{name}output.dense.bias", (H,), ATTENTION, "H"),
        Param.norm(f"{name}output.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm(f"{name}output.LayerNorm.bias", (H,), LAYER_NORM, "H"),
    ]


def _layer(c: ModelConfig) -> list[Param]:
    """One encoder layer, names relative to ``encoder.layer.{i}.``.

    Query, key and value are ``A·⌊H/A⌋`` wide: H, unless the heads do not divide H, which transformers builds only
    where the config has an ``embedding_size`` (ELECTRA, ALBERT; BERT given that key) and then cannot run."""
    H, I = c["H"], c["I"]
    # a decoder's cross-attention (add_cross_attention): the same tensors, over encoder_hidden_states, which a plain
    # forward pass does not have: it runs no matmul there (tokens "")
    cross = _attention(c, "crossattention.", "") if c.lists.get(CROSS) else []
    return _attention(c, "attention.", "B*S") + cross + [
        Param.matrix("intermediate.dense.weight", (I, H), FEED_FORWARD, "I*H"),
        Param.bias("intermediate.dense.bias", (I,), FEED_FORWARD, "I"),
        Param.matrix("output.dense.weight", (H, I), FEED_FORWARD, "H*I"),
        Param.bias("output.dense.bias", (H,), FEED_FORWARD, "H"),
        Param.norm("output.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("output.LayerNorm.bias", (H,), LAYER_NORM, "H"),
    ]


def _layout(c: ModelConfig, position_last: bool = False) -> Layout:
    V, P, T, H = c["V"], c["P"], c["T"], c["H"]
    word = Param.table("embeddings.word_embeddings.weight", (V, H), EMBEDDINGS, "V*H")
    position = Param.table("embeddings.position_embeddings.weight", (P, H), EMBEDDINGS, "P*H")
    token_type = Param.table("embeddings.token_type_embeddings.weight", (T, H), EMBEDDINGS, "T*H")
    norm = [Param.norm("embeddings.LayerNorm.weight", (H,), LAYER_NORM, "H"),
            Param.norm("embeddings.LayerNorm.bias", (H,), LAYER_NORM, "H")]
    # the same tensors; RobertaEmbeddings registers its position table last
    embeddings = [word, token_type, *norm, position] if position_last else [word, position, token_type, *norm]
    pooler = [Param.matrix("pooler.dense.weight", (H, H), POOLER, "H**2", tokens="B"),  # the [CLS] token only
              Param.bias("pooler.dense.bias", (H,), POOLER, "H")]
    return Layout((Block.once(*embeddings), Block.stack("encoder.layer.{i}.", _layer(c), c["L"]), Block.once(*pooler)))


FORMULAS = {
    EMBEDDINGS: "(V + P + T)*H",
    ATTENTION: "L*(4*H**2 + 4*H)",
    FEED_FORWARD: "L*(2*H*I + I + H)",
    LAYER_NORM: "2*H + 4*L*H",
    POOLER: "H**2 + H",
}
FLOPS = {
    EMBEDDINGS: "0",
    ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
    ATTENTION_SCORES: "4*L*B*S**2*H",
    FEED_FORWARD: "4*L*B*S*H*I",
    LAYER_NORM: "0",
    POOLER: "2*B*H**2",
}



def formulas(c: ModelConfig, table: Mapping[str, str] = FORMULAS) -> dict[str, str]:
    """``table``, with query, key and value A·d_k wide where the heads leave part of H out (transformers builds it).

    No notebook calls it; it works behind the helpers of ``00_overview``."""
    out = dict(table)
    if c["A"] * c["d_k"] != c["H"]:
        out[ATTENTION] = "L*(3*A*d_k*H + H**2 + 3*A*d_k + H)"
    if c.lists.get(CROSS):  # a second attention block and LayerNorm in every layer
        out[ATTENTION] = f"2*{out[ATTENTION]}"
        out[LAYER_NORM] = out[LAYER_NORM].replace("4*L*H", "6*L*H")
    return out


def read_heads(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """Refuse more heads than H has dimensions where a layer is built: ⌊H/A⌋ = 0 dimensions per head, whose scale
    0^-½ transformers' attention fails to compute (possible only where it skips the divisibility check). Read
    ``add_cross_attention``: cross-attention layers, which transformers builds in a decoder only (``is_decoder``).

    No notebook calls it; it works behind the helpers of ``00_overview``."""
    if sizes["L"] and sizes["A"] > sizes["H"]:
        raise ConfigError("num_attention_heads", f"{sizes['A']} heads for hidden_size = {sizes['H']}: 0 dimensions per "
                                                 "head (transformers fails to build the attention)")
    cross = _read_bool(raw, "add_cross_attention")
    if cross and sizes["L"] and not _read_bool(raw, "is_decoder"):
        raise ConfigError("add_cross_attention", "true needs is_decoder: true (transformers refuses cross-attention "
                                                 "layers in an encoder)")
    return {CROSS: (1,)} if cross else {}


def _read_bool(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(key, f"must be true or false, got {json.dumps(value)}")
    return value


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """Heads that do not divide H (built where the config has an ``embedding_size``): the forward pass fails.

    RoBERTa's positions count from its padding index: ``pad_token_id: null`` builds, and its forward pass fails.
    No notebook calls it; it works behind the helpers of ``00_overview``."""
    if raw.get("model_type") in ("roberta", "xlm-roberta") and "pad_token_id" in raw and raw["pad_token_id"] is None:
        return {"forward": ("pad_token_id", "null: RoBERTa numbers its positions from the padding index; transformers "
                                            "builds the model, and its forward pass fails")}
    if sizes["A"] * sizes["d_k"] == sizes["H"] or not sizes["L"]:
        return {}
    return {"forward": ("num_attention_heads", f"hidden_size = {sizes['H']} is not divisible by num_attention_heads = "
                                               f"{sizes['A']}: transformers builds query, key and value "
                                               f"{sizes['A'] * sizes['d_k']} wide, and its forward pass fails")}


WORD_TABLE = "embeddings.word_embeddings.weight"  # what an MLM head's decoder is tied to

# BertForMaskedLM's cls.predictions (BertLMPredictionHead: its own bias registered first), BertForPreTraining's
# NSP head on the pooled [CLS] token
MLM = combine(own_bias("cls.predictions.bias"), linear("cls.predictions.transform.dense", "H", MLM_HEAD),
              layer_norm("cls.predictions.transform.LayerNorm", MLM_HEAD),
              decoder("cls.predictions.decoder", WORD_TABLE, bias_tied_to="cls.predictions.bias"))
NSP = linear("cls.seq_relationship", "2", NSP_HEAD, tokens="B")

# RobertaLMHead (dense, layer_norm, decoder tied, its own bias first); RobertaClassificationHead on the <s> token
ROBERTA_MLM = combine(own_bias("lm_head.bias"), linear("lm_head.dense", "H", MLM_HEAD),
                      layer_norm("lm_head.layer_norm", MLM_HEAD),
                      decoder("lm_head.decoder", WORD_TABLE, bias_tied_to="lm_head.bias"))
ROBERTA_SEQUENCE = combine(linear("classifier.dense", "H", CLASSIFIER, tokens="B"),
                           linear("classifier.out_proj", "C", CLASSIFIER, tokens="B"))

BERT = Family(
    model_type="bert",
    architecture="BertModel",
    sizes=(Size("vocab_size", "V", 30522), *SIZES),
    refused=REFUSED,
    runs=runs,
    read=read_heads,
    heads_divide_hidden="unless embedding_size",  # BertSelfAttention skips the check for a config with one
    heads_checked_by_layers=True,
    pad_token_id=0,
    layout=_layout,
    formulas=formulas,
    flops=lambda c: dict(FLOPS),
    positions=lambda c: c["P"],
    torch_ref="BertModel",
    classes=encoder_classes("Bert", "bert.", mlm=MLM, extra={
        "BertForPreTraining": model_class(combine(MLM, NSP), prefix=("", "bert."), flags=TIED),
        "BertForNextSentencePrediction": model_class(NSP, prefix=("", "bert.")),
    }),
)

ROBERTA = replace(
    BERT,
    model_type="roberta",
    architecture="RobertaModel",
    sizes=(Size("vocab_size", "V", 50265), *SIZES),
    pad_token_id=1,
    padded=("V", "P"),  # RoBERTa pads its position table too, and numbers positions from pad + 1
    layout=lambda c: _layout(c, position_last=True),
    positions=lambda c: c["P"] - (c.pad_token_id or 0) - 1,
    torch_ref="RobertaModel",
    classes=encoder_classes("Roberta", "roberta.", mlm=ROBERTA_MLM, sequence_head=ROBERTA_SEQUENCE),
)

# XLM-RoBERTa: RoBERTa's model (XLMRobertaModel is RobertaModel renamed), BERT's default vocabulary in its config
XLM_ROBERTA = replace(
    ROBERTA,
    model_type="xlm-roberta",
    architecture="XLMRobertaModel",
    sizes=(Size("vocab_size", "V", 30522), *SIZES),
    # RoBERTa's heads, registered BEFORE the base model: an MLM head's tied table is listed as lm_head.decoder.weight
    classes=encoder_classes("XLMRoberta", "roberta.", mlm=ROBERTA_MLM, sequence_head=ROBERTA_SEQUENCE, head_first=True),
)
