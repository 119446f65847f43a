"""Gemma 2 as transformers builds it (``Gemma2ForCausalLM``): four RMSNorms per layer, windowed and global layers.

Introduced in ``07_decoder_llms``. Gemma's tensors (head_dim of its own, tied head, gains stored as offsets
from 1) with two more norms per layer: each sub-layer is sandwiched, ``input_layernorm`` before attention and
``post_attention_layernorm`` after it, ``pre_feedforward_layernorm`` before the MLP and
``post_feedforward_layernorm`` after it: 4H per layer instead of 2H.

The layers alternate: layer 0, 2, 4 … attend within a sliding window of ``sliding_window`` tokens, layer 1,
3, 5 … to everything (``Gemma2Config.layer_types``: ``L_w = ⌈L/2⌉`` windowed and ``L_g = ⌊L/2⌋`` global layers).
The window changes no tensor and, with eager attention (the full S×S, masked afterwards), no FLOP; it changes
the cache: transformers 5's ``DynamicSlidingWindowLayer`` keeps the last ``W − 1`` tokens of a windowed layer,
a global layer keeps them all. The logit soft-capping (``tanh`` of scores and logits) is elementwise: 0 FLOPs.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import Flag, ModelConfig, Size
from ..spec import LAYER_NORM, Block, Layout, Param
from . import llama
from .base import Family
from .heads import decoder_classes


def layout(c: ModelConfig) -> Layout:
    """LLaMA's tensors, with ``pre_feedforward_layernorm`` and ``post_feedforward_layernorm`` in every layer.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H = c["H"]
    head, stack, tail = llama.LLAMA.layout(c).blocks
    extra = (Param.norm("pre_feedforward_layernorm.weight", (H,), LAYER_NORM, "H"),
             Param.norm("post_feedforward_layernorm.weight", (H,), LAYER_NORM, "H"))
    return Layout((head, Block.stack(stack.prefix, stack.params + extra, c["L"]), tail))


def formulas(c: ModelConfig) -> dict[str, str]:
    """LLaMA's formulas with four norms per layer: ``(4L + 1)·H``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return {**llama.LLAMA.formulas(c), LAYER_NORM: "(4*L + 1)*H"}


def _alternate(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None) -> list[str]:
    """Gemma2Config's own ``layer_types``: windowed on even layers, global on odd ones."""
    return [llama.SLIDING if (i + 1) % 2 else llama.FULL for i in range(sizes["L"])]


# a mask per layer type, and the sliding one for every input (a null window fails, layers or none)
_read_cache, _runs = llama.hooks(default=4096, types=_alternate, masks=True, every_mask="Gemma2Model")


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The windowed (``L_w``) and global (``L_g``) layers, from ``layer_types`` or Gemma 2's alternation.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return windowed_and_global(_read_cache(raw, sizes, flags), sizes)


def windowed_and_global(lists: dict[str, tuple[int, ...]], sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Files the windowed (``L_w``) and global (``L_g``) layer counts of ``lists["cache"]`` in ``sizes``; returns ``lists``.

    Gemma 2 and Gemma 3's text model read their layers with it.
    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    full, windowed, _ = lists["cache"]
    sizes["L_w"] = windowed
    sizes["L_g"] = full
    return lists


def kv_cache(c: ModelConfig) -> str:
    """Windowed layers keep the last W − 1 tokens, global ones every token (transformers' DynamicCache).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    full, windowed, chunked = c.lists["cache"]
    if windowed and not chunked:
        two, pair = llama.key_value(c)
        return f"{two}{pair}*(L_w*min(S, W - 1) + L_g*S)*B"
    return llama.kv_cache(c)


GEMMA2 = Family(
    model_type="gemma2",
    architecture="Gemma2ForCausalLM",
    sizes=(
        Size("vocab_size", "V", 256000),
        Size("hidden_size", "H", 2304),
        Size("num_hidden_layers", "L", 26, minimum=0),
        Size("num_attention_heads", "A", 8),
        Size("num_key_value_heads", "A_kv", 4),
        Size("head_dim", "d_k", 256, minimum=0),  # not H // A; 0: projections 0 wide (rotary H // A), cannot run
        Size("intermediate_size", "I", 9216),
        Size("max_position_embeddings", "P", 8192),
        Size("sliding_window", "W", 4096, minimum=-2**63, nullable=True),  # null: the forward pass fails
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", True), Flag("attention_bias", False)),
    derive=llama.LLAMA.derive,
    read=read,
    runs=_runs,  # no window (null), or other layer types: the forward pass itself fails
    pad_token_id=0,
    layout=layout,
    formulas=formulas,
    flops=llama.flops,
    kv_cache=kv_cache,
    positions=lambda c: None,  # rotary: no position table
    torch_ref="Gemma2ForCausalLM",
    classes=decoder_classes("Gemma2", "model."),
)
