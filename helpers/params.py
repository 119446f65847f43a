"""The parameter table: every tensor of a model, with its checkpoint name, shape, component and formula.

Introduced in ``00_overview`` and used by every notebook. Counts are products of shapes taken in
NumPy with ``dtype=object``, so they are exact Python integers for any size (no int64 wrap-around).

Formulas are written as Python expressions over the symbols of :mod:`helpers.config`
(``"L*(4*H**2 + 4*H)"``), so that code can evaluate them (:func:`evaluate`) and check them against
the counted tensors, and are shown to people as ``L·(4H² + 4H)`` (:func:`render`). The records (:class:`Param`,
:class:`Block`, :class:`Layout`), the components and that formula language live in :mod:`helpers.spec`, layer 0,
and are importable from here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from .config import ConfigError, ModelConfig
from .families import FAMILIES
from .families.bert import BERT
from .spec import (  # noqa: F401  the records and the formula language live in helpers.spec (layer 0)
    EMBEDDINGS, ATTENTION, FEED_FORWARD, LAYER_NORM, POOLER, LM_HEAD, MLM_HEAD, NSP_HEAD, SOP_HEAD,
    DISCRIMINATOR_HEAD, CLASSIFIER, QA_HEAD, LINEAR_ATTENTION, VISION, ATTENTION_PROJECTIONS, ATTENTION_SCORES,
    DELTA_RULE, WITHOUT_PARAMETERS, TABLE, MATRIX, BIAS, NORM, EXPERT, EXPERT_BIAS, CONVOLUTION, KINDS, numel, Param,
    matmul_count, Block, Layout, evaluate, render,
)


def param_layout(config: ModelConfig) -> Layout:
    """The model's tensors in compact form (its family's layout): what the counts are computed from.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    ``param_layout(c).expand() == param_table(c)``.
    A config parsed with another class of the family (``model_class``, ``--class``) gets that class's tensors.
    """
    return config.family.model_layout(config)


TRANSFORMERS, CHECKPOINT = "transformers", "checkpoint"  # the two namings of ``count --names``


def checkpoint_layout(config: ModelConfig) -> Layout:
    """The model's tensors as its checkpoints on disk name them: the fused experts one tensor per expert.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    transformers 5 fuses a mixture's experts when it loads a checkpoint
    (``mlp.experts.gate_up_proj``, E × 2I × H); the files name them one by one (Mixtral:
    ``block_sparse_moe.experts.{e}.w1.weight`` ...). The family's ``checkpoint_names`` says how; the same
    values, so the same total. A family without one is refused in one line naming ``--names``.
    """
    expand = config.family.checkpoint_names
    if expand is None:
        declared = [t for t, f in FAMILIES.items() if f.checkpoint_names is not None]
        raise ConfigError("--names", f"{config.model_type} declares no checkpoint names of its own (only "
                                     f"{', '.join(declared)} do, for their fused experts)")
    layout = param_layout(config)
    return Layout(tuple(Block(b.prefix, tuple(q for p in b.params for q in expand(p)), b.layers) for b in layout.blocks))


def param_table(config: ModelConfig) -> list[Param]:
    """Every parameter tensor of the model, in checkpoint order, a tied weight listed once.

    Introduced in ``00_overview``.
    """
    return param_layout(config).expand()


def component_formulas(config: ModelConfig) -> dict[str, str]:
    """The symbolic count of each component, as evaluable expressions (see :func:`render`).

    Introduced in ``01_embeddings``.
    """
    return config.family.model_formulas(config)


def total(params: Iterable[Param]) -> int:
    """Sum of the tensors' counts (exact).

    Introduced in ``00_overview``.
    """
    return sum((p.count for p in params), 0)


def component_counts(params: Iterable[Param]) -> dict[str, int]:
    """Count per component, in the order components first appear.

    Introduced in ``03_feed_forward``.
    """
    counts: dict[str, int] = {}
    for p in params:
        counts[p.component] = counts.get(p.component, 0) + p.count
    return counts


def under(params: Iterable[Param], prefix: str) -> list[Param]:
    """The rows whose checkpoint name starts with ``prefix``, renamed relative to it.

    ``under(param_table(c), "embeddings.")`` names its rows ``word_embeddings.weight`` ...: the names
    a component built alone (``build_component(BertEmbeddings, c)``) gives its parameters, so the
    two can be compared with ``torch_ref.matches``. Introduced in ``01_embeddings``. Used again in 02 and 03.
    """
    return [replace(p, name=p.name[len(prefix):]) for p in params if p.name.startswith(prefix)]


def is_norm(param: Param) -> bool:
    """True for a LayerNorm/RMSNorm tensor (γ or β), whatever component the engine files it under (its kind :data:`NORM`).

    What :func:`linear_biases` leaves out (a norm's β is no linear bias). Introduced in ``02_multi_head_attention``.
    """
    return param.kind == NORM


def linear_biases(params: Iterable[Param]) -> list[Param]:
    """The bias vectors of the linear layers (tensors of kind :data:`BIAS`; a norm's β is of kind :data:`NORM`).

    These are what write-ups 000 and 003 leave out. Introduced in ``00_overview``.
    """
    return [p for p in params if p.kind == BIAS]


def select(params: Iterable[Param], component: str | None = None, layer: int | None = None) -> list[Param]:
    """The rows of one component and/or one layer (``layer=None``: any).

    Introduced in ``00_overview``.
    """
    return [p for p in params if (component is None or p.component == component) and (layer is None or p.layer == layer)]


# --- heads on top of BERT (BertForPreTraining, BertForSequenceClassification) --------------------

def pretraining_heads(config: ModelConfig) -> list[Param]:
    """The MLM and NSP heads of ``BertForPreTraining`` (decoder weight tied to the word embeddings).

    Introduced in ``00_overview``. The ``cls.*`` tensors of that class as the BERT family lists them
    (``--class BertForPreTraining``), for a BERT config (its token table tied, as bert-base's is).
    """
    head = BERT.classes["BertForPreTraining"]
    whole = replace(config, flags={**config.flags, "tie_word_embeddings": True}, model_class="BertForPreTraining")
    return [p for p in head.layout(whole).expand() if p.name.startswith("cls.")]


def classification_head(config: ModelConfig, num_labels: int) -> list[Param]:
    """The linear classifier of ``BertForSequenceClassification`` on the pooled output (C = num_labels).

    Introduced in ``05_pooler_and_heads``. The same tensors as ``--class BertForSequenceClassification``.
    """
    head = BERT.classes["BertForSequenceClassification"]
    whole = replace(config, sizes={**config.sizes, "C": num_labels}, model_class="BertForSequenceClassification")
    return [p for p in head.layout(whole).expand() if p.name.startswith("classifier.")]
