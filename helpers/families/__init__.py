"""The model families the engine counts, one module each, and their registry.

Introduced in ``00_overview``. A family is described once (:class:`~helpers.families.base.Family`): the
config keys it reads, its tensor layout with each tensor's kind, its parameter formulas, its FLOPs, its KV
cache, and the transformers and torch-reference classes it mirrors. Counting, FLOPs, memory, the printed
formulas and the tests all read :data:`FAMILIES`; adding a family is one module here, one line below and
its ``data/models/`` file (see the README, "Adding a model family"). :data:`FAMILIES` is a static table, the one
name of the registry: layer 1, the families import only :mod:`helpers.spec` (layer 0) and each other, and the engine
(config, params …, layer 2) reads the table from here (``tests/test_layers.py``).
"""

from __future__ import annotations

from . import (albert, bert, deepseek_v3, distilbert, electra, gemma, gemma2, gpt2, gpt_neox, llama, mistral, mixtral,
               opt, phi3, qwen2, qwen3, qwen3_moe, t5)
from . import gemma3_text, gpt_oss, llama4_text, olmo2, qwen3_next, smollm3  # the 2025 decoders
from . import deepseek_v2, glm4_moe  # GLM-4.5 and DeepSeek-V2's first latent attention
from . import modernbert  # the encoder of 2024
from . import gemma3, llama4, qwen2_5_vl  # vision-language models (a text family inside a composite config)
from .base import Family, ModelClass

FAMILIES: dict[str, Family] = {
    family.model_type: family
    for family in (bert.BERT, bert.ROBERTA, gpt2.GPT2, llama.LLAMA, mistral.MISTRAL, mixtral.MIXTRAL, qwen2.QWEN2,
                   qwen3.QWEN3, qwen3_moe.QWEN3_MOE, phi3.PHI3, gemma.GEMMA, gemma2.GEMMA2, gpt_neox.GPT_NEOX, opt.OPT, t5.T5,
                   bert.XLM_ROBERTA, distilbert.DISTILBERT, electra.ELECTRA, albert.ALBERT, deepseek_v3.DEEPSEEK_V3,
                   olmo2.OLMO2, smollm3.SMOLLM3, gemma3_text.GEMMA3_TEXT, gpt_oss.GPT_OSS,
                   qwen3_next.QWEN3_NEXT, glm4_moe.GLM4_MOE, deepseek_v2.DEEPSEEK_V2, modernbert.MODERNBERT,
                   llama4_text.LLAMA4_TEXT, gemma3.GEMMA3, qwen2_5_vl.QWEN2_5_VL, llama4.LLAMA4)
}

SUPPORTED = tuple(FAMILIES)

__all__ = ["FAMILIES", "SUPPORTED", "Family", "ModelClass"]
