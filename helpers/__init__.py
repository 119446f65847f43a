"""helpers: the single source of code for the series *How many parameters does a Transformer have?*

Importing ``helpers`` never imports torch (the command line stays fast); the torch reference
models live in :mod:`helpers.torch_ref`.
"""

from .config import ConfigError, ModelConfig, load_config, model_names, parse_config
from .count import Count, breakdown, compact_table, count_model, describe, tensor_table, count_json
from .params import (
    ATTENTION,
    BIAS,
    CLASSIFIER,
    EMBEDDINGS,
    FEED_FORWARD,
    LAYER_NORM,
    LM_HEAD,
    MATRIX,
    MLM_HEAD,
    NORM,
    NSP_HEAD,
    POOLER,
    TABLE,
    Block,
    Layout,
    Param,
    classification_head,
    evaluate,
    component_counts,
    component_formulas,
    is_norm,
    linear_biases,
    numel,
    param_layout,
    param_table,
    pretraining_heads,
    render,
    select,
    total,
    under,
)
from .report import fmt_int, fmt_share, table
from .explore import explore

from . import families  # noqa: F401  the families register themselves (helpers.registry): the core imports none

__all__ = [
    "ATTENTION", "CLASSIFIER", "EMBEDDINGS", "FEED_FORWARD", "LAYER_NORM", "LM_HEAD", "MLM_HEAD", "NSP_HEAD", "POOLER",
    "BIAS", "MATRIX", "NORM", "TABLE",
    "Block", "ConfigError", "Count", "Layout", "ModelConfig", "Param",
    "breakdown", "classification_head", "compact_table", "count_model", "describe", "evaluate", "explore", "fmt_int", "fmt_share",
    "component_counts", "component_formulas", "is_norm", "linear_biases", "load_config", "model_names", "numel", "param_layout", "param_table", "parse_config",
    "pretraining_heads", "render", "select", "table", "tensor_table", "count_json", "total", "under",
]
