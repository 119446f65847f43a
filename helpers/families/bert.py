"""BERT, RoBERTa and XLM-RoBERTa as transformers builds them (``BertModel`` / ``RobertaModel`` /
``XLMRobertaModel``, pooler included).

Introduced in ``00_overview``. RoBERTa is BERT's layout in another config dialect: another default
vocabulary and padding index (1, which also pads its position table: positions start at 2), and the
position table registered last.
"""

from __future__ import annotations

from dataclasses import replace

from ..config import ModelConfig, Size
from ..params import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, CLASSIFIER, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, MLM_HEAD,
    NSP_HEAD, POOLER, Block, Layout, Param,
)
from .base import Family
from .heads import TIED, combine, decoder, encoder_classes, layer_norm, linear, model_class, own_bias

SIZES = (
    Size("hidden_size", "H", 768),
    Size("num_hidden_layers", "L", 12),
    Size("num_attention_heads", "A", 12),
    Size("intermediate_size", "I", 3072),
    Size("max_position_embeddings", "P", 512),
    Size("type_vocab_size", "T", 2, minimum=0),  # transformers builds an empty segment table for 0
)
# transformers 5 builds absolute position tables only and adds cross-attention weights on request;
# is_decoder only changes the mask, not the parameters.
REFUSED = {
    "add_cross_attention": (False, "cross-attention layers are not modelled"),
    "position_embedding_type": ("absolute", "transformers 5 builds absolute tables whatever this says, while a checkpoint "
                                            "trained so holds relative-distance tables; neither count would be the model's"),
}


def _layer(c: ModelConfig) -> list[Param]:
    """One encoder layer, names relative to ``encoder.layer.{i}.``."""
    H, I = c["H"], c["I"]
    rows = []
    for proj in ("query", "key", "value"):
        rows += [Param.matrix(f"attention.self.{proj}.weight", (H, H), ATTENTION, "H**2"),
                 Param.bias(f"attention.self.{proj}.bias", (H,), ATTENTION, "H")]
    return rows + [
        Param.matrix("attention.output.dense.weight", (H, H), ATTENTION, "H**2"),
        Param.bias("attention.output.dense.bias", (H,), ATTENTION, "H"),
        Param.norm("attention.output.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("attention.output.LayerNorm.bias", (H,), LAYER_NORM, "H"),
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
    pad_token_id=0,
    layout=_layout,
    formulas=lambda c: dict(FORMULAS),
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
