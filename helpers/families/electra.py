"""ELECTRA as transformers builds it (``ElectraModel``): BERT's encoder under factorised embeddings, no pooler.

Not used by a notebook. The token, position and segment tables are ``embedding_size`` (d_e) wide; where d_e ≠ H
(ELECTRA-small: d_e = 128, H = 256) a linear ``embeddings_project`` (d_e → H, with bias) lifts them to the
encoder's width, and it runs on every token. The encoder layers are BERT's, under the same names
(``encoder.layer.{i}.``), reused from :data:`helpers.families.bert.BERT`; ``ElectraModel`` has no pooler.
"""

from __future__ import annotations

from ..spec import ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, DISCRIMINATOR_HEAD, EMBEDDINGS, FEED_FORWARD, LAYER_NORM,
    MLM_HEAD, Block, Layout, Param,
)
from . import bert
from .base import Family
from .heads import combine, decoder, encoder_classes, layer_norm, linear, model_class


def _embeddings(c: ModelConfig) -> list[Param]:
    """The d_e-wide tables and their LayerNorm (``ElectraEmbeddings``, as ``AlbertEmbeddings``)."""
    V, P, T, d_e = c["V"], c["P"], c["T"], c["d_e"]
    return [
        Param.table("embeddings.word_embeddings.weight", (V, d_e), EMBEDDINGS, "V*d_e"),
        Param.table("embeddings.position_embeddings.weight", (P, d_e), EMBEDDINGS, "P*d_e"),
        Param.table("embeddings.token_type_embeddings.weight", (T, d_e), EMBEDDINGS, "T*d_e"),
        Param.norm("embeddings.LayerNorm.weight", (d_e,), LAYER_NORM, "d_e"),
        Param.norm("embeddings.LayerNorm.bias", (d_e,), LAYER_NORM, "d_e"),
    ]


def _layout(c: ModelConfig) -> Layout:
    d_e, H = c["d_e"], c["H"]
    project = [Param.matrix("embeddings_project.weight", (H, d_e), EMBEDDINGS, "H*d_e"),
               Param.bias("embeddings_project.bias", (H,), EMBEDDINGS, "H")] if d_e != H else []
    encoder = bert.BERT.layout(c).blocks[1]  # BERT's L layers, encoder.layer.{i}.
    return Layout((Block.once(*_embeddings(c), *project), encoder))


def _formulas(c: ModelConfig) -> dict[str, str]:
    return {
        EMBEDDINGS: "(V + P + T)*d_e + d_e*H + H" if c["d_e"] != c["H"] else "(V + P + T)*d_e",
        ATTENTION: bert.formulas(c)[ATTENTION],  # A·d_k-wide query, key, value where the heads leave part of H
        FEED_FORWARD: "L*(2*H*I + I + H)",
        LAYER_NORM: "2*d_e + 6*L*H" if c.lists.get(bert.CROSS) else "2*d_e + 4*L*H",  # + cross-attention's
    }


def _flops(c: ModelConfig) -> dict[str, str]:
    return {
        EMBEDDINGS: "2*B*S*d_e*H" if c["d_e"] != c["H"] else "0",  # the projection d_e → H on every token
        ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
        ATTENTION_SCORES: "4*L*B*S**2*H",
        FEED_FORWARD: "4*L*B*S*H*I",
        LAYER_NORM: "0",
    }


# ElectraForMaskedLM, the generator's head: H → E, LayerNorm(E), then the E-wide token table (tied, own bias)
MLM = combine(layer_norm("generator_predictions.LayerNorm", MLM_HEAD, width="d_e"),
              linear("generator_predictions.dense", "d_e", MLM_HEAD),
              decoder("generator_lm_head", bert.WORD_TABLE, width="d_e"))
# ElectraForPreTraining, the discriminator's head: one logit per token, replaced or original
DISCRIMINATOR = combine(linear("discriminator_predictions.dense", "H", DISCRIMINATOR_HEAD),
                        linear("discriminator_predictions.dense_prediction", "1", DISCRIMINATOR_HEAD))

ELECTRA = Family(
    model_type="electra",
    architecture="ElectraModel",
    sizes=(
        Size("vocab_size", "V", 30522),
        Size("embedding_size", "d_e", 128),
        Size("hidden_size", "H", 256),
        Size("num_hidden_layers", "L", 12, minimum=0),
        Size("num_attention_heads", "A", 4),
        Size("intermediate_size", "I", 1024),
        Size("max_position_embeddings", "P", 512),
        Size("type_vocab_size", "T", 2, minimum=0),
    ),
    refused=bert.BERT.refused,  # cross-attention layers; relative position tables
    read=bert.read_heads,
    runs=bert.runs,  # heads that do not divide H: built (ElectraConfig has an embedding_size), not run
    heads_divide_hidden="never",
    pad_token_id=0,
    layout=_layout,
    formulas=_formulas,
    flops=_flops,
    positions=lambda c: c["P"],
    torch_ref="ElectraModel",
    # no ElectraForMultipleChoice: its sequence summary depends on summary_* keys this engine does not read
    classes=encoder_classes("Electra", "electra.", mlm=MLM, has_pooler=False, sequence_head=bert.ROBERTA_SEQUENCE,
                            extra={"ElectraForPreTraining": model_class(DISCRIMINATOR, prefix=("", "electra."))}),
)
