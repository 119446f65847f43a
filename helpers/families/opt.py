"""OPT as transformers builds it (``OPTForCausalLM``: learned positions, ReLU MLP, LayerNorms with γ and β).

Introduced in ``07_decoder_llms``. GPT-2's per-layer sizes (4H² + 4H of attention, 2H·I + I + H of MLP, two
LayerNorms) in ``nn.Linear`` layout, with three OPT peculiarities:

* the position table has P + 2 rows: OPT shifts every position by an offset of 2 (the first two rows are
  never looked up, yet they are parameters);
* ``word_embed_proj_dim`` d_e (opt-350m: 512 against H = 1024): the token table and the LM head are d_e wide, and
  ``project_in`` (H × d_e, filed under the embeddings) and ``project_out`` (d_e × H, filed under the LM head)
  translate between d_e and H; both exist only when d_e ≠ H, and both are matmuls over every token;
* ``do_layer_norm_before: false`` (opt-350m: post-LayerNorm layers) removes the final LayerNorm of the stack
  (so does the legacy ``_remove_final_layer_norm``); each layer keeps its two LayerNorms, applied after the
  residual instead of before; ``layer_norm_elementwise_affine: false`` drops every γ and β;
  ``enable_bias: false`` drops the biases of attention and MLP.

The LM head is the token table (tied) unless ``tie_word_embeddings`` is false.
Keys OPTConfig does not declare but transformers' cache still reads (``sliding_window``, ``layer_types``,
``attention_chunk_size``) change no parameter: ``DynamicCache`` then keeps the last W − 1 tokens of a windowed layer.
"""

from __future__ import annotations

from typing import Mapping

from ..spec import Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Block, Layout,
    Param,
)
from . import gpt2
from .base import Family, ModelClass
from .heads import decoder_classes



def _final_norm(c: ModelConfig) -> bool:
    return c.flags["do_layer_norm_before"] and not c.flags["_remove_final_layer_norm"]


def _layout(c: ModelConfig, lm_head: bool = True) -> Layout:
    """OPT's tensors: token table (V × d_e), positions (P + 2 rows), projections if d_e ≠ H, final LayerNorm, L layers.

    ``lm_head=False``: OPTModel's (under ``model.``), no head, ``project_out`` kept (its output is d_e wide)."""
    V, P, H, I, d_e = c["V"], c["P"], c["H"], c["I"], c["d_e"]
    bias, affine, tied = c.flags["enable_bias"], c.flags["layer_norm_elementwise_affine"], c.flags["tie_word_embeddings"]

    def norm(name: str) -> list[Param]:
        if not affine:
            return []
        return [Param.norm(f"{name}.weight", (H,), LAYER_NORM, "H"), Param.norm(f"{name}.bias", (H,), LAYER_NORM, "H")]

    def linear(name: str, out: int, inp: int, component: str, formula: str, bias_formula: str) -> list[Param]:
        params = [Param.matrix(f"{name}.weight", (out, inp), component, formula)]
        if bias:
            params.append(Param.bias(f"{name}.bias", (out,), component, bias_formula))
        return params

    layer = []
    for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):  # transformers' order
        layer += linear(f"self_attn.{proj}", H, H, ATTENTION, "H**2", "H")
    layer += norm("self_attn_layer_norm")
    layer += linear("fc1", I, H, FEED_FORWARD, "I*H", "I") + linear("fc2", H, I, FEED_FORWARD, "H*I", "H")
    layer += norm("final_layer_norm")
    head = [Param.table("model.decoder.embed_tokens.weight", (V, d_e), EMBEDDINGS, "V*d_e",
                        tokens="B*S" if tied and lm_head else ""),
            Param.table("model.decoder.embed_positions.weight", (P + 2, H), EMBEDDINGS, "(P + 2)*H")]
    if d_e != H:
        head += [Param.matrix("model.decoder.project_out.weight", (d_e, H), LM_HEAD, "d_e*H"),
                 Param.matrix("model.decoder.project_in.weight", (H, d_e), EMBEDDINGS, "H*d_e")]
    if _final_norm(c):
        head += norm("model.decoder.final_layer_norm")
    blocks = [Block.once(*head), Block.stack("model.decoder.layers.{i}.", layer, c["L"])]
    if not tied and lm_head:
        blocks.append(Block.once(Param.matrix("lm_head.weight", (V, d_e), LM_HEAD, "V*d_e")))
    return Layout(tuple(blocks))


def _formulas(c: ModelConfig, lm_head: bool = True) -> dict[str, str]:
    """OPT's parameter formulas per component (``lm_head=False``: OPTModel's, ``project_out`` still under the lm head)."""
    bias, affine = c.flags["enable_bias"], c.flags["layer_norm_elementwise_affine"]
    projected = c["d_e"] != c["H"]
    result = {
        EMBEDDINGS: "V*d_e + (P + 2)*H" + (" + H*d_e" if projected else ""),
        ATTENTION: "L*(4*H**2 + 4*H)" if bias else "4*L*H**2",
        FEED_FORWARD: "L*(2*H*I + I + H)" if bias else "2*L*H*I",
    }
    if affine:
        result[LAYER_NORM] = "4*L*H + 2*H" if _final_norm(c) else "4*L*H"
    untied = lm_head and not c.flags["tie_word_embeddings"]
    head = [term for term, present in (("V*d_e", untied), ("d_e*H", projected)) if present]
    if head:
        result[LM_HEAD] = " + ".join(head)
    return result


def _flops(c: ModelConfig) -> dict[str, str]:
    """OPT's forward FLOPs: GPT-2's, with the d_e-wide head and the two projections when d_e ≠ H."""
    projected = c["d_e"] != c["H"]
    return {
        EMBEDDINGS: "2*B*S*H*d_e" if projected else "0",
        ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
        ATTENTION_SCORES: "4*L*B*S**2*H",
        FEED_FORWARD: "4*L*B*S*H*I",
        LAYER_NORM: "0",
        LM_HEAD: "2*B*S*V*d_e" + (" + 2*B*S*d_e*H" if projected else ""),
    }


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    sizes.setdefault("d_e", sizes["H"])  # word_embed_proj_dim: None means hidden_size


OPT = Family(
    model_type="opt",
    architecture="OPTForCausalLM",
    sizes=(
        Size("vocab_size", "V", 50272),
        Size("hidden_size", "H", 768),
        Size("num_hidden_layers", "L", 12, minimum=0),
        Size("num_attention_heads", "A", 12),
        Size("ffn_dim", "I", 3072),
        Size("max_position_embeddings", "P", 2048),
        *gpt2.WINDOWS,
        Size("word_embed_proj_dim", "d_e", None),  # None: hidden_size
    ),
    flags=(
        Flag("tie_word_embeddings", True),
        Flag("enable_bias", True),
        Flag("layer_norm_elementwise_affine", True),
        Flag("do_layer_norm_before", True),
        Flag("_remove_final_layer_norm", False),
    ),
    read=gpt2.read_windows,
    runs=gpt2.window_runs,
    derive=_derive,
    heads_checked_by_layers=True,  # OPTAttention checks them: a depth-0 model is built whatever they are
    pad_token_id=1,  # embed_tokens' padding row
    layout=_layout,
    formulas=_formulas,
    flops=_flops,
    kv_cache=gpt2.kv_cache,
    positions=lambda c: c["P"],  # P + 2 rows, the first two never looked up
    torch_ref="OPTForCausalLM",
    # the heads read d_e-wide states; without its head OPTModel keeps project_out (d_e ≠ H)
    classes=decoder_classes("OPT", "model.", token_head=None, qa_prefix="model.", width="d_e", base=ModelClass(
        lambda c: _layout(c, lm_head=False), lambda c: _formulas(c, lm_head=False))),
)
