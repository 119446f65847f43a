"""GPT-NeoX and Pythia as transformers builds them (``GPTNeoXForCausalLM``).

Introduced in ``07_decoder_llms``. GPT-2's per-layer sizes (4H² + 4H of attention, 2H·I + I + H of MLP,
two LayerNorms with γ and β) in another layout:

* Q, K and V come from one fused ``attention.query_key_value`` of 3H × H with a 3H bias (the heads
  interleaved: each head's q, k and v side by side), then ``attention.dense`` H × H; both lose their biases
  with ``attention_bias: false``; the MLP (``dense_h_to_4h``, ``dense_4h_to_h``) always has biases;
* no position table: rotary angles on the first ``rotary_pct`` of each head (Pythia: a quarter), the rest
  passed through: no parameter, no matmul, and the cache still holds whole heads of d_k = H/A;
* ``use_parallel_residual`` (Pythia: true) adds attention and MLP to the same input, ``x + attn(ln₁(x)) +
  mlp(ln₂(x))``, instead of one after the other: the same tensors and the same matmuls;
* the output head is untied (``tie_word_embeddings: false``): transformers 5 names it ``lm_head.weight``;
  the checkpoints on disk call it ``embed_out.weight`` (renamed at load time).

Keys GPTNeoXConfig does not declare but transformers' cache still reads (``sliding_window``, ``layer_types``,
``attention_chunk_size``) change no parameter: ``DynamicCache`` then keeps the last W − 1 tokens of a windowed layer.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout,
    Param,
)
from . import gpt2, llama
from .base import Family
from .heads import decoder_classes



def layout(c: ModelConfig) -> Layout:
    """GPT-NeoX's tensors: ``embed_in``, L layers (two LayerNorms, fused QKV, dense, MLP), final LayerNorm, head.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    V, H, I = c["V"], c["H"], c["I"]
    bias, tied = c.flags["attention_bias"], c.flags["tie_word_embeddings"]
    layer = [
        Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("input_layernorm.bias", (H,), LAYER_NORM, "H"),
        Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H"),
        Param.norm("post_attention_layernorm.bias", (H,), LAYER_NORM, "H"),
        Param.matrix("attention.query_key_value.weight", (3 * H, H), ATTENTION, "3*H**2"),
    ]
    if bias:
        layer.append(Param.bias("attention.query_key_value.bias", (3 * H,), ATTENTION, "3*H"))
    layer.append(Param.matrix("attention.dense.weight", (H, H), ATTENTION, "H**2"))
    if bias:
        layer.append(Param.bias("attention.dense.bias", (H,), ATTENTION, "H"))
    layer += [
        Param.matrix("mlp.dense_h_to_4h.weight", (I, H), FEED_FORWARD, "I*H"),
        Param.bias("mlp.dense_h_to_4h.bias", (I,), FEED_FORWARD, "I"),
        Param.matrix("mlp.dense_4h_to_h.weight", (H, I), FEED_FORWARD, "H*I"),
        Param.bias("mlp.dense_4h_to_h.bias", (H,), FEED_FORWARD, "H"),
    ]
    tail = [Param.norm("gpt_neox.final_layer_norm.weight", (H,), LAYER_NORM, "H"),
            Param.norm("gpt_neox.final_layer_norm.bias", (H,), LAYER_NORM, "H")]
    if not tied:
        tail.append(Param.matrix("lm_head.weight", (V, H), LM_HEAD, "V*H"))
    return Layout((
        Block.once(Param.table("gpt_neox.embed_in.weight", (V, H), EMBEDDINGS, "V*H", tokens="B*S" if tied else "")),
        Block.stack("gpt_neox.layers.{i}.", layer, c["L"]),
        Block.once(*tail),
    ))


def formulas(c: ModelConfig) -> dict[str, str]:
    """GPT-NeoX's parameter formulas per component (GPT-2's, without a position table).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: "L*(4*H**2 + 4*H)" if c.flags["attention_bias"] else "4*L*H**2",
        FEED_FORWARD: "L*(2*H*I + I + H)",
        LAYER_NORM: "4*L*H + 2*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


def rotary_dims(raw: Mapping[str, Any], d_k: int) -> int | None:
    """R = int(d_k · factor), the rotated dimensions of a head, the factor as GPTNeoXConfig settles it: the
    ``partial_rotary_factor`` of ``rope_parameters`` (or ``rope_scaling``), else ``rotary_pct``, else 0.25 (a top-level
    ``partial_rotary_factor`` comes after and is never used). None: a factor that is not a number (left to transformers).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    rope = raw.get("rope_parameters") or raw.get("rope_scaling") or {}
    factor = rope.get("partial_rotary_factor") if isinstance(rope, dict) else None
    if factor is None:
        factor = raw.get("rotary_pct", 0.25)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        return None
    return int(d_k * factor)


def _width(raw: Mapping[str, Any], d_k: int) -> int | None:
    """The width of queries and keys after the rotary step (:func:`~helpers.families.llama.rotary_width`): transformers
    rotates R rounded up to a pair (the width of its angles), harmless inside the head; past its last dimension a head
    of 1 runs 2 wide, a wider one fails. A factor that is not a number is left to transformers (d_k)."""
    R = rotary_dims(raw, d_k)
    return d_k if R is None else llama.rotary_width(d_k, R)


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's layers (:func:`~helpers.families.gpt2.read_windows`), and d_qk where the rotary step widens the
    queries and keys of a head of 1 (R = 1).

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    lists = gpt2.read_windows(raw, sizes, flags)
    llama.widen(sizes, _width(raw, sizes["H"] // sizes["A"]))
    return lists


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """A cache transformers cannot keep (:func:`~helpers.families.gpt2.window_runs`), and rotary dimensions whose last
    pair reaches past a head of 3 or more (R odd and equal to d_k): transformers' forward pass fails. An odd R inside a
    wider head rotates R + 1 dimensions, and a head of 1 runs 2 wide (d_qk, :func:`read`): no refusal.

    No notebook calls it; it works behind the helpers of ``09_modern_architectures``.
    """
    problems = gpt2.window_runs(raw, sizes, flags)
    R, d_k = rotary_dims(raw, sizes["d_k"]), sizes["d_k"]
    if sizes["L"] and _width(raw, d_k) is None:
        problems["forward"] = ("rotary_pct", f"{R} rotary dimensions in a head of {d_k}: rotary embeddings turn pairs of "
                                             "dimensions, and the last pair would reach past the head: transformers' "
                                             "forward pass fails")
    return problems


# the same matmuls as GPT-2's layer (fused QKV H → 3H, output H → H, FFN H → I → H) and an untied or tied head
FLOPS = gpt2.FLOPS

GPT_NEOX = Family(
    model_type="gpt_neox",
    architecture="GPTNeoXForCausalLM",
    sizes=(
        Size("vocab_size", "V", 50432),
        Size("hidden_size", "H", 6144),
        Size("num_hidden_layers", "L", 44, minimum=0),
        Size("num_attention_heads", "A", 64),
        Size("intermediate_size", "I", 24576),  # no I = 4H default: the file says it (Pythia: 4H)
        Size("max_position_embeddings", "P", 2048),
        *gpt2.WINDOWS,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", True), Flag("use_parallel_residual", True)),
    read=read,
    runs=runs,
    padded=(),  # embed_in has no padding row
    layout=layout,
    formulas=formulas,
    flops=lambda c: llama.with_scores(c, FLOPS),
    kv_cache=gpt2.kv_cache,  # whole heads of d_k = H/A, rotated part and passed part alike
    positions=lambda c: None,  # rotary: no position table
    torch_ref="GPTNeoXForCausalLM",
    classes=decoder_classes("GPTNeoX", "gpt_neox.", token_head="classifier", qa_prefix="gpt_neox."),
)
