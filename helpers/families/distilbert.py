"""DistilBERT as transformers builds it (``DistilBertModel``): BERT's layer under its own names, no segments, no pooler.

Not used by a notebook. The same tensors as a BERT layer (Q, K, V and output projections with biases, two
LayerNorms, an H → I → H feed-forward), named ``transformer.layer.{i}.attention.q_lin`` …, with
``dim``/``n_heads``/``n_layers``/``hidden_dim`` for H/A/L/I; the embeddings have a token and a position
table but no segment table, and the model has no pooler. ``sinusoidal_pos_embds`` only fills the position
table with fixed values: the table is still a parameter tensor, counted.
"""

from __future__ import annotations

from ..spec import ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, CLASSIFIER, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, MLM_HEAD,
    QA_HEAD, Block, Layout, Param,
)
from .base import Family
from .heads import combine, decoder, encoder_classes, layer_norm, linear, model_class


def _layer(c: ModelConfig) -> list[Param]:
    """One ``TransformerBlock``, names relative to ``transformer.layer.{i}.``."""
    H, I = c["H"], c["I"]
    rows = []
    for proj in ("q_lin", "k_lin", "v_lin", "out_lin"):
        rows += [Param.matrix(f"attention.{proj}.weight", (H, H), ATTENTION, "H**2"),
                 Param.bias(f"attention.{proj}.bias", (H,), ATTENTION, "H")]
    return rows + [
        Param.norm("sa_layer_norm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("sa_layer_norm.bias", (H,), LAYER_NORM, "H"),
        Param.matrix("ffn.lin1.weight", (I, H), FEED_FORWARD, "I*H"),
        Param.bias("ffn.lin1.bias", (I,), FEED_FORWARD, "I"),
        Param.matrix("ffn.lin2.weight", (H, I), FEED_FORWARD, "H*I"),
        Param.bias("ffn.lin2.bias", (H,), FEED_FORWARD, "H"),
        Param.norm("output_layer_norm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("output_layer_norm.bias", (H,), LAYER_NORM, "H"),
    ]


def _layout(c: ModelConfig) -> Layout:
    V, P, H = c["V"], c["P"], c["H"]
    embeddings = Block.once(
        Param.table("embeddings.word_embeddings.weight", (V, H), EMBEDDINGS, "V*H"),
        Param.table("embeddings.position_embeddings.weight", (P, H), EMBEDDINGS, "P*H"),
        Param.norm("embeddings.LayerNorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("embeddings.LayerNorm.bias", (H,), LAYER_NORM, "H"),
    )
    return Layout((embeddings, Block.stack("transformer.layer.{i}.", _layer(c), c["L"])))


FORMULAS = {
    EMBEDDINGS: "(V + P)*H",
    ATTENTION: "L*(4*H**2 + 4*H)",
    FEED_FORWARD: "L*(2*H*I + I + H)",
    LAYER_NORM: "2*H + 4*L*H",
}
FLOPS = {
    EMBEDDINGS: "0",
    ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
    ATTENTION_SCORES: "4*L*B*S**2*H",
    FEED_FORWARD: "4*L*B*S*H*I",
    LAYER_NORM: "0",
}

# DistilBertForMaskedLM: vocab_transform, vocab_layer_norm, vocab_projector (weight tied, bias its own)
MLM = combine(linear("vocab_transform", "H", MLM_HEAD), layer_norm("vocab_layer_norm", MLM_HEAD),
              decoder("vocab_projector", "embeddings.word_embeddings.weight"))
PRE_CLASSIFIER = linear("pre_classifier", "H", CLASSIFIER, tokens="B")  # on the [CLS] token: no pooler

DISTILBERT = Family(
    heads_checked_by_layers=True,  # DistilBertSelfAttention checks them: a depth-0 model is built whatever they are
    model_type="distilbert",
    architecture="DistilBertModel",
    sizes=(
        Size("vocab_size", "V", 30522),
        Size("dim", "H", 768, aliases=("hidden_size",)),  # DistilBertConfig's attribute_map
        Size("n_layers", "L", 6, minimum=0, aliases=("num_hidden_layers",)),
        Size("n_heads", "A", 12, aliases=("num_attention_heads",), layers=("L",)),  # read by the attention alone
        Size("hidden_dim", "I", 4 * 768),  # a fixed default, not 4·dim
        Size("max_position_embeddings", "P", 512),
    ),
    pad_token_id=0,
    layout=_layout,
    formulas=lambda c: dict(FORMULAS),
    flops=lambda c: dict(FLOPS),
    positions=lambda c: c["P"],
    torch_ref="DistilBertModel",
    classes=encoder_classes(
        "DistilBert", "distilbert.", mlm=MLM, has_pooler=False,
        sequence_head=combine(PRE_CLASSIFIER, linear("classifier", "C", CLASSIFIER, tokens="B")),
        choice_head=combine(PRE_CLASSIFIER, linear("classifier", "1", CLASSIFIER, tokens="B")),
        extra={"DistilBertForQuestionAnswering": model_class(  # transformers refuses num_labels other than 2 here
            linear("qa_outputs", "C", QA_HEAD), prefix=("", "distilbert."), labels=True, required_labels=2)}),
)
