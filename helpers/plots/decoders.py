"""Pictures introduced in ``07_decoder_llms``: a GPT-2 block beside a LLaMA block, drawn from the engine's tables."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from ..config import ModelConfig
from ..params import EMBEDDINGS, LM_HEAD, Param, total
from .diagrams import Block, block_stack, blocks_from

__all__: list[str] = ["decoder_columns", "gpt2_llama_blocks"]

# box label -> name prefix ({i}: the first layer's index); None: a box of 0 parameters; the head comes last
_GPT2 = (
    ("wte: token table V×H", "transformer.wte"),
    ("wpe: + position table P×H", "transformer.wpe"),
    ("ln_1: LayerNorm (γ, β)", "transformer.h.{i}.ln_1"),
    ("attn: c_attn + c_proj, biases", "transformer.h.{i}.attn"),
    ("ln_2: LayerNorm (γ, β)", "transformer.h.{i}.ln_2"),
    ("mlp: c_fc + c_proj (GELU), biases", "transformer.h.{i}.mlp"),
    ("ln_f: LayerNorm (γ, β)", "transformer.ln_f"),
)
_LLAMA = (
    ("embed_tokens: token table V×H", "model.embed_tokens"),
    ("no position table (RoPE)", None),
    ("input_layernorm: RMSNorm (γ)", "model.layers.{i}.input_layernorm"),
    ("self_attn: q, k, v, o, no biases", "model.layers.{i}.self_attn"),
    ("post_attention_layernorm: RMSNorm (γ)", "model.layers.{i}.post_attention_layernorm"),
    ("mlp: gate, up, down (SwiGLU)", "model.layers.{i}.mlp"),
    ("norm: RMSNorm (γ)", "model.norm"),
)


def _layers(params: Sequence[Param]) -> int:
    return 1 + max(p.layer for p in params if p.layer is not None)


def decoder_columns(params: Sequence[Param]) -> list[Block]:
    """The boxes of a GPT-2 or LLaMA column, bottom to top, each counted from ``params`` (one layer's boxes
    from layer 0; a position table or head the model does not have is a box of 0 parameters).

    Introduced in ``07_decoder_llms``. The family is read from the tensor names (``transformer.h.`` is GPT-2,
    ``model.layers.`` LLaMA); a tied head is a box of 0, an untied one counts ``lm_head``.
    """
    names = {p.name for p in params}
    gpt2 = any(n.startswith("transformer.h.") for n in names)
    layout = _GPT2 if gpt2 else _LLAMA
    first = min(p.layer for p in params if p.layer is not None)
    blocks = []
    head = ("lm_head: untied, V×H", "lm_head") if "lm_head.weight" in names else (
        f"LM head = {'wte' if gpt2 else 'embed_tokens'} (tied)", None)
    for label, prefix in layout + (head,):
        if prefix and label.endswith(", no biases") and any(
                n.startswith(prefix.format(i=first)) and n.endswith(".bias") for n in names):
            label = label.replace(", no biases", ", biases")  # attention_bias: true
        if prefix is None or not any(n.startswith(prefix.format(i=first)) for n in names):
            blocks.append(Block(label, 0, LM_HEAD if "head" in label else EMBEDDINGS))
        else:
            blocks += blocks_from(params, {label: prefix.format(i=first)})
    return blocks


def gpt2_llama_blocks(gpt2_params: Sequence[Param], llama_params: Sequence[Param], titles: Sequence[str],
                      gqa: ModelConfig | None = None, ax: plt.Axes | None = None, gap: float = 2.6,
                      width: float = 4.2) -> plt.Axes:
    """A GPT-2 model (left) beside a LLaMA model (right): two :func:`block_stack` columns on one axes.

    Introduced in ``07_decoder_llms``. Each box's count comes from the engine's table (one layer's boxes
    from layer 0, inside a "× L" bracket), its share is of that model's whole count, and the pre-norm
    residuals are drawn: each sublayer's input skips its norm and the sublayer and is added (⊕) after it.
    ``titles`` names the two columns; ``gqa``, a config with grouped-query attention, is named in a line
    under them with its A_kv and A.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(10.5, 5.4))
        fig.subplots_adjust(left=0.0, right=1.0, top=0.99, bottom=0.01)
    for k, params in enumerate((gpt2_params, llama_params)):
        x = k * (width + gap)
        L = _layers(params)
        block_stack(decoder_columns(params), ax, whole=total(params), residuals=[(2, 3), (4, 5)],
                    repeat=(2, 5, f"× L = {L}"), x=x, width=width)
        ax.text(x + width / 2, 8 * 1.5 - 0.1, titles[k], ha="center", va="bottom", fontsize=12,
                fontweight="bold")
    if gqa is not None:
        note = (f"{gqa.name}: k_proj and v_proj hold A_kv = {gqa['A_kv']} key/value heads for A = {gqa['A']} "
                "query heads (grouped-query attention)")
        ax.text(width + gap / 2, -0.45, note, ha="center", va="top", fontsize=10)
    ax.set_ylim(-1.0 if gqa is not None else -0.6, 8 * 1.5 + 0.5)
    return ax
