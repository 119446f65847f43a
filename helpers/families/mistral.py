"""Mistral as transformers builds it (``MistralForCausalLM``): LLaMA's tensors, a sliding-window KV cache.

Used in ``09_modern_architectures`` (the design choices); it was added last, to prove that a family is
described in one place (README, "Adding a model family"). Every tensor, formula and FLOP is LLaMA's (eager
attention computes the full S×S and masks the window afterwards, so the window saves no FLOP there). What
changes is the config dialect (GQA with 8 key/value heads by default, a 14336-wide SwiGLU, 131,072 positions,
no bias switches) and the cache: transformers 5 keeps the last ``sliding_window − 1`` tokens of each layer once
S exceeds them (``DynamicSlidingWindowLayer``), so the cache stops growing at ``W − 1`` positions.
``count`` answers whatever MistralConfig builds: heads that do not divide H (d_k = H // A, the projections A·d_k
wide), key/value heads that do not divide the query heads, a ``layer_types`` list (it changes the cache only), a
window of 0 or less, a ``head_dim`` of 0 (read as H // A, as ``MistralAttention`` does). ``flops``/``memory`` refuse, in one line naming the key, what transformers cannot run: the key/value
heads not dividing the query heads (its ``repeat_kv`` fails), an odd head (rotary pairs); ``memory`` alone a window
below 1 (the cache's slice ``[-W + 1:]`` then keeps tokens from the start, and fails on some lengths).
"""

from __future__ import annotations

from typing import Mapping

from ..spec import Flag, Size
from . import llama
from .base import Family
from .heads import decoder_classes

def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    """A ``head_dim`` of 0 reads as none (MistralAttention and its rotary embedding take ``head_dim or H // A``),
    then LLaMA's: A_kv = A unless given."""
    if sizes.get("d_k") == 0:
        del sizes["d_k"]
    llama.derive(sizes, keys)


_read, _runs = llama.hooks(default=4096)  # sliding_window 4096 unless given (null: no window)


MISTRAL = Family(
    model_type="mistral",
    architecture="MistralForCausalLM",
    sizes=(
        Size("vocab_size", "V", 32000),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32, minimum=0),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", 8),  # transformers refuses null here (its field is an int)
        Size("head_dim", "d_k", None, minimum=0),  # None or 0: H // A (MistralAttention: head_dim or H // A)
        Size("intermediate_size", "I", 14336),
        Size("max_position_embeddings", "P", 4096 * 32),
        Size("sliding_window", "W", 4096, minimum=-2**63, nullable=True),  # null: no window, every token cached
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False),),
    derive=_derive,
    read=_read,
    runs=_runs,
    heads_divide_hidden="never",  # head_dim = H // A: the projections are A·d_k wide
    pad_token_id=None,
    layout=llama.LLAMA.layout,  # LLaMA's tensors, formulas and FLOPs: only the dialect and the cache differ
    formulas=llama.LLAMA.formulas,
    flops=llama.LLAMA.flops,
    kv_cache=llama.kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="LlamaForCausalLM",  # the same tensors, names and matmuls as LLaMA's reference
    classes=decoder_classes("Mistral", "model.", qa_prefix="model."),
)
