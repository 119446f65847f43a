"""Mistral as transformers builds it (``MistralForCausalLM``): LLaMA's tensors, a sliding-window KV cache.

Used in ``09_modern_architectures`` (the design choices); it was added last, to prove that a family is
described in one place (README, "Adding a model family"). Every tensor, formula and FLOP is LLaMA's (eager
attention computes the full S×S and masks the window afterwards, so the window saves no FLOP there). What
changes is the config dialect (GQA with 8 key/value heads by default, a 14336-wide SwiGLU, 131,072 positions,
no bias switches) and the cache: transformers 5 keeps the last ``sliding_window − 1`` tokens of each layer once
S exceeds them (``DynamicSlidingWindowLayer``), so the cache stops growing at ``W − 1`` positions.
"""

from __future__ import annotations

from typing import Mapping

from ..config import ConfigError, Flag, Size
from . import llama
from .base import Family
from .heads import decoder_classes


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """LLaMA's check of the key/value heads, and a window the cache can hold."""
    if sizes.get("W") == 1:
        raise ConfigError("sliding_window", "1 is not modelled: transformers' cache slice [-W + 1:] becomes [0:] and "
                                            "keeps every token instead of none")
    llama.LLAMA.derive(sizes, keys)


MISTRAL = Family(
    model_type="mistral",
    architecture="MistralForCausalLM",
    sizes=(
        Size("vocab_size", "V", 32000),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", 8),  # transformers refuses null here (its field is an int)
        Size("head_dim", "d_k", None),  # None: H // A
        Size("intermediate_size", "I", 14336),
        Size("max_position_embeddings", "P", 4096 * 32),
        Size("sliding_window", "W", 4096, nullable=True),  # null: no window, the cache keeps every token
    ),
    flags=(Flag("tie_word_embeddings", False),),
    refused={"layer_types": (None, "per-layer attention types (some layers without the window) are Ministral's; "
                                   "MistralForCausalLM's cache would follow them and this engine does not")},
    derive=_derive,
    pad_token_id=None,
    layout=llama.LLAMA.layout,  # LLaMA's tensors, formulas and FLOPs: only the dialect and the cache differ
    formulas=llama.LLAMA.formulas,
    flops=llama.LLAMA.flops,
    kv_cache=lambda c: "2*L*A_kv*d_k*min(S, W - 1)*B" if "W" in c.sizes else "2*L*A_kv*d_k*S*B",
    positions=lambda c: None,  # rotary: no position table
    torch_ref="LlamaForCausalLM",  # the same tensors, names and matmuls as LLaMA's reference
    classes=decoder_classes("Mistral", "model.", qa_prefix="model."),
)
