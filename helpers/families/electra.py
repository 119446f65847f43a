"""ELECTRA as transformers builds it (``ElectraModel``): BERT's encoder under factorised embeddings, no pooler.

Not used by a notebook. The token, position and segment tables are ``embedding_size`` (E) wide; where E ≠ H
(ELECTRA-small: E = 128, H = 256) a linear ``embeddings_project`` (E → H, with bias) lifts them to the
encoder's width, and it runs on every token. The encoder layers are BERT's, under the same names
(``encoder.layer.{i}.``), reused from :data:`helpers.families.bert.BERT`; ``ElectraModel`` has no pooler.
"""

from __future__ import annotations

from ..config import ModelConfig, Size
from ..params import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, DISCRIMINATOR_HEAD, EMBEDDINGS, FEED_FORWARD, LAYER_NORM,
    MLM_HEAD, Block, Layout, Param,
)
from . import bert
from .base import Family
from .heads import combine, decoder, encoder_classes, layer_norm, linear, model_class


def _embeddings(c: ModelConfig) -> list[Param]:
    """The E-wide tables and their LayerNorm (``ElectraEmbeddings``, as ``AlbertEmbeddings``)."""
    V, P, T, E = c["V"], c["P"], c["T"], c["E"]
    return [
        Param.table("embeddings.word_embeddings.weight", (V, E), EMBEDDINGS, "V*E"),
        Param.table("embeddings.position_embeddings.weight", (P, E), EMBEDDINGS, "P*E"),
        Param.table("embeddings.token_type_embeddings.weight", (T, E), EMBEDDINGS, "T*E"),
        Param.norm("embeddings.LayerNorm.weight", (E,), LAYER_NORM, "E"),
        Param.norm("embeddings.LayerNorm.bias", (E,), LAYER_NORM, "E"),
    ]


def _layout(c: ModelConfig) -> Layout:
    E, H = c["E"], c["H"]
    project = [Param.matrix("embeddings_project.weight", (H, E), EMBEDDINGS, "H*E"),
               Param.bias("embeddings_project.bias", (H,), EMBEDDINGS, "H")] if E != H else []
    encoder = bert.BERT.layout(c).blocks[1]  # BERT's L layers, encoder.layer.{i}.
    return Layout((Block.once(*_embeddings(c), *project), encoder))


def _formulas(c: ModelConfig) -> dict[str, str]:
    return {
        EMBEDDINGS: "(V + P + T)*E + E*H + H" if c["E"] != c["H"] else "(V + P + T)*E",
        ATTENTION: "L*(4*H**2 + 4*H)",
        FEED_FORWARD: "L*(2*H*I + I + H)",
        LAYER_NORM: "2*E + 4*L*H",
    }


def _flops(c: ModelConfig) -> dict[str, str]:
    return {
        EMBEDDINGS: "2*B*S*E*H" if c["E"] != c["H"] else "0",  # the projection E → H on every token
        ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
        ATTENTION_SCORES: "4*L*B*S**2*H",
        FEED_FORWARD: "4*L*B*S*H*I",
        LAYER_NORM: "0",
    }


# ElectraForMaskedLM, the generator's head: H → E, LayerNorm(E), then the E-wide token table (tied, own bias)
MLM = combine(layer_norm("generator_predictions.LayerNorm", MLM_HEAD, width="E"),
              linear("generator_predictions.dense", "E", MLM_HEAD),
              decoder("generator_lm_head", bert.WORD_TABLE, width="E"))
# ElectraForPreTraining, the discriminator's head: one logit per token, replaced or original
DISCRIMINATOR = combine(linear("discriminator_predictions.dense", "H", DISCRIMINATOR_HEAD),
                        linear("discriminator_predictions.dense_prediction", "1", DISCRIMINATOR_HEAD))

ELECTRA = Family(
    model_type="electra",
    architecture="ElectraModel",
    sizes=(
        Size("vocab_size", "V", 30522),
        Size("embedding_size", "E", 128),
        Size("hidden_size", "H", 256),
        Size("num_hidden_layers", "L", 12),
        Size("num_attention_heads", "A", 4),
        Size("intermediate_size", "I", 1024),
        Size("max_position_embeddings", "P", 512),
        Size("type_vocab_size", "T", 2, minimum=0),
    ),
    refused=bert.BERT.refused,  # cross-attention layers; relative position tables
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
