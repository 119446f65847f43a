"""Gemma as transformers builds it (``GemmaForCausalLM``): LLaMA's tensors, a head_dim of its own, a tied head.

Introduced in ``07_decoder_llms``. Every tensor name and shape is LLaMA's (``model.embed_tokens``, q/k/v/o,
gate/up/down, two RMSNorms per layer and a final one), so the layout, formulas and FLOPs are LLaMA's. What
differs is the config dialect:

* ``head_dim`` is 256 by default and sizes the heads alone: gemma-7b has 16 heads × 256 = 4096 query
  columns for a hidden size of 3072, so ``q_proj`` is 4096 × 3072 and ``o_proj`` 3072 × 4096; transformers
  does not even require the heads to divide H (``heads_divide_hidden="never"``);
* the LM head is tied to the token table by default (``tie_word_embeddings: true``): one V × H tensor,
  counted once, multiplied twice (lookup and logits);
* the RMSNorm gains are stored as offsets from 1 (the layer computes ``x̂ · (1 + w)`` and initialises ``w``
  to 0): the same H parameters per norm, the same count;
* the token table has a padding row (``pad_token_id`` 0) and its output is scaled by √H (a buffer, no
  parameter); the MLP's GELU and the scale are elementwise: no FLOP FlopCounterMode sees.

Keys GemmaConfig does not declare but transformers' cache still reads (``sliding_window``, ``layer_types``,
``attention_chunk_size``) change no tensor and no FLOP: ``DynamicCache`` keeps only a window of tokens on those
layers (:func:`helpers.families.llama.cache_layers`), while the mask still sees them all.
"""

from __future__ import annotations

from ..spec import Flag, Size
from . import llama
from .base import Family
from .heads import decoder_classes

_read, _runs = llama.hooks()  # no window keys in GemmaConfig: as written, the cache follows them

GEMMA = Family(
    model_type="gemma",
    architecture="GemmaForCausalLM",
    sizes=(
        Size("vocab_size", "V", 256000),
        Size("hidden_size", "H", 3072),
        Size("num_hidden_layers", "L", 28, minimum=0),
        Size("num_attention_heads", "A", 16),
        Size("num_key_value_heads", "A_kv", 16),  # an int field: null is refused, as transformers refuses it
        Size("head_dim", "d_k", 256),  # not H // A: gemma-7b has 16 × 256 = 4096 ≠ 3072
        Size("intermediate_size", "I", 24576),
        Size("max_position_embeddings", "P", 8192),
        llama.WINDOW,
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", True), Flag("attention_bias", False)),
    derive=llama.LLAMA.derive,  # A_kv = A unless given
    read=_read,
    runs=_runs,  # the key/value heads share the query heads evenly, or the forward pass fails
    pad_token_id=0,  # GemmaTextScaledWordEmbedding has a padding row
    heads_divide_hidden="never",
    layout=llama.LLAMA.layout,
    formulas=llama.LLAMA.formulas,
    flops=llama.flops,
    kv_cache=llama.kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="LlamaForCausalLM",  # the same tensors, names and matmuls as LLaMA's reference
    classes=decoder_classes("Gemma", "model."),
)
