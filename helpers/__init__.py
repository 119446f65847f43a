"""helpers: the single source of code for the series *How many parameters does a Transformer have?*

Importing ``helpers`` never imports torch (the command line stays fast); the torch reference
models live in :mod:`helpers.torch_ref`. The modules are layered (README, "The layers"; ``tests/test_layers.py``):
:mod:`helpers.spec` (the records), :mod:`helpers.families`, the engine (config, params, count, report), the analyses,
and the apps and lessons on top, imported only when used.
"""

from .config import ConfigError, ModelConfig, load_config, model_names, parse_config
from .count import Count, count_report, compact_table, count_model, describe, tensor_table, count_json
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


def __getattr__(name: str):
    """``helpers.explore``, the explorer app (:func:`helpers.explorer.explore`), imported when first asked for: the
    engine alone stays small (``import helpers.config`` loads no app, ``tests/test_layers.py``)."""
    if name == "explore":
        from .explorer import explore

        return explore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ATTENTION", "CLASSIFIER", "EMBEDDINGS", "FEED_FORWARD", "LAYER_NORM", "LM_HEAD", "MLM_HEAD", "NSP_HEAD", "POOLER",
    "BIAS", "MATRIX", "NORM", "TABLE",
    "Block", "ConfigError", "Count", "Layout", "ModelConfig", "Param",
    "count_report", "classification_head", "compact_table", "count_model", "describe", "evaluate", "explore", "fmt_int", "fmt_share",
    "component_counts", "component_formulas", "is_norm", "linear_biases", "load_config", "model_names", "numel", "param_layout", "param_table", "parse_config",
    "pretraining_heads", "render", "select", "table", "tensor_table", "count_json", "total", "under",
]
