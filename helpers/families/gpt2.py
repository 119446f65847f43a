"""GPT-2 as transformers builds it (``GPT2LMHeadModel``; Conv1D weights stored [in, out]).

Introduced in ``07_decoder_llms``. The LM head is the token table (tied) unless ``tie_word_embeddings``
is false; its matmul is counted either way.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import (
    ATTENTION, ATTENTION_PROJECTIONS, ATTENTION_SCORES, CLASSIFIER, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD,
    Block, Layout, Param,
)
from . import llama
from .base import Family
from .heads import HeadParts, decoder_classes, linear, model_class

# keys GPT-2, OPT and GPT-NeoX's config classes do not declare, but transformers' DynamicCache reads (a window of
# W − 1 tokens per windowed layer, W_c − 1 per chunked one): they change no parameter, only the cache
WINDOWS = (llama.WINDOW, llama.CHUNK)


def read_windows(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's layers (full, windowed, chunked) from ``sliding_window``, ``attention_chunk_size``, ``layer_types``.

    No notebook calls it; it works behind the helpers of ``01_embeddings``."""
    return llama.read_cache(raw, sizes, sizes.get("W"), llama.read_layer_types(raw, sizes["L"]))


def window_runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """A cache transformers cannot keep (a chunked layer without a chunk size ...): refused for memory, in one line.

    No notebook calls it; it works behind the helpers of ``01_embeddings``."""
    _, problem = llama.cache_layers(raw, sizes, sizes.get("W"), llama.read_layer_types(raw, sizes["L"]))
    return {"cache": problem} if problem else {}


def kv_cache(c: ModelConfig) -> str:
    """Keys and values of A heads of d_k per layer: every token, or the last W − 1 (W_c − 1) of a windowed layer.

    No notebook calls it; it works behind the helpers of ``01_embeddings``."""
    return llama.kv_cache(c).replace("A_kv", "A")



CROSS = "cross_attention"  # ModelConfig.lists key: (1,) where add_cross_attention builds cross-attention layers


def _cross(H: int) -> list[Param]:
    """GPT2Attention(is_cross_attention=True) and ``ln_cross_attn``: keys and values (c_attn, H → 2H) over
    encoder_hidden_states, queries (q_attn), output (c_proj). A plain forward pass has no encoder states: no matmul."""
    return [Param.matrix("crossattention.c_attn.weight", (H, 2 * H), ATTENTION, "2*H**2", tokens=""),
            Param.bias("crossattention.c_attn.bias", (2 * H,), ATTENTION, "2*H"),
            Param.matrix("crossattention.q_attn.weight", (H, H), ATTENTION, "H**2", tokens=""),
            Param.bias("crossattention.q_attn.bias", (H,), ATTENTION, "H"),
            Param.matrix("crossattention.c_proj.weight", (H, H), ATTENTION, "H**2", tokens=""),
            Param.bias("crossattention.c_proj.bias", (H,), ATTENTION, "H"),
            Param.norm("ln_cross_attn.weight", (H,), LAYER_NORM, "H"),
            Param.norm("ln_cross_attn.bias", (H,), LAYER_NORM, "H")]


def _read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's windows (:func:`read_windows`) and ``add_cross_attention`` (cross-attention in every block)."""
    cross = raw.get("add_cross_attention", False)
    if not isinstance(cross, bool):
        raise ConfigError("add_cross_attention", f"must be true or false, got {json.dumps(cross)}")
    return {**read_windows(raw, sizes, flags), **({CROSS: (1,)} if cross else {})}


def _layout(c: ModelConfig) -> Layout:
    V, P, H, I = c["V"], c["P"], c["H"], c["I"]
    tied = c.flags["tie_word_embeddings"]
    layer = [
        Param.norm("ln_1.weight", (H,), LAYER_NORM, "H"),
        Param.norm("ln_1.bias", (H,), LAYER_NORM, "H"),
        Param.matrix("attn.c_attn.weight", (H, 3 * H), ATTENTION, "3*H**2"),
        Param.bias("attn.c_attn.bias", (3 * H,), ATTENTION, "3*H"),
        Param.matrix("attn.c_proj.weight", (H, H), ATTENTION, "H**2"),
        Param.bias("attn.c_proj.bias", (H,), ATTENTION, "H"),
        Param.norm("ln_2.weight", (H,), LAYER_NORM, "H"),
        Param.norm("ln_2.bias", (H,), LAYER_NORM, "H"),
        *(_cross(H) if c.lists.get(CROSS) else []),
        Param.matrix("mlp.c_fc.weight", (H, I), FEED_FORWARD, "H*I"),
        Param.bias("mlp.c_fc.bias", (I,), FEED_FORWARD, "I"),
        Param.matrix("mlp.c_proj.weight", (I, H), FEED_FORWARD, "I*H"),
        Param.bias("mlp.c_proj.bias", (H,), FEED_FORWARD, "H"),
    ]
    tail = [Param.norm("transformer.ln_f.weight", (H,), LAYER_NORM, "H"),
            Param.norm("transformer.ln_f.bias", (H,), LAYER_NORM, "H")]
    if not tied:
        tail.append(Param.matrix("lm_head.weight", (V, H), LM_HEAD, "V*H"))
    return Layout((
        Block.once(Param.table("transformer.wte.weight", (V, H), EMBEDDINGS, "V*H", tokens="B*S" if tied else ""),
                   Param.table("transformer.wpe.weight", (P, H), EMBEDDINGS, "P*H")),
        Block.stack("transformer.h.{i}.", layer, c["L"]),
        Block.once(*tail),
    ))


def _formulas(c: ModelConfig) -> dict[str, str]:
    cross = bool(c.lists.get(CROSS))  # a second attention block and LayerNorm in every layer
    formulas = {
        EMBEDDINGS: "(V + P)*H",
        ATTENTION: "L*(8*H**2 + 8*H)" if cross else "L*(4*H**2 + 4*H)",
        FEED_FORWARD: "L*(2*H*I + I + H)",
        LAYER_NORM: "6*L*H + 2*H" if cross else "4*L*H + 2*H",
    }
    if not c.flags["tie_word_embeddings"]:
        formulas[LM_HEAD] = "V*H"
    return formulas


FLOPS = {
    EMBEDDINGS: "0",
    ATTENTION_PROJECTIONS: "8*L*B*S*H**2",
    ATTENTION_SCORES: "4*L*B*S**2*H",
    FEED_FORWARD: "4*L*B*S*H*I",
    LAYER_NORM: "0",
    LM_HEAD: "2*B*S*V*H",
}


def _derive(sizes: dict[str, int], keys: Mapping[str, str]) -> None:
    sizes.setdefault("I", 4 * sizes["H"])  # n_inner: None means 4 * n_embd


def _choice_head(c: ModelConfig) -> HeadParts:
    """GPT2DoubleHeadsModel's multiple_choice_head (GPT2SequenceSummary, with num_labels forced to 1): a linear
    layer to one logit (``summary_proj_to_labels``) or to H, or none (``summary_use_proj: false``)."""
    if not c.flags["summary_use_proj"]:
        return HeadParts([], {})
    return linear("multiple_choice_head.summary", "1" if c.flags["summary_proj_to_labels"] else "H", CLASSIFIER,
                  tokens="B")(c)


def _summary_type(raw: Mapping[str, Any]) -> None:
    """``summary_type: "attn"`` makes GPT2SequenceSummary raise NotImplementedError: refused."""
    kind = raw.get("summary_type", "cls_index")
    if kind not in ("last", "first", "mean", "cls_index"):
        raise ConfigError("summary_type", f"{json.dumps(kind)} is not supported (transformers builds \"last\", \"first\", "
                                          "\"mean\" and \"cls_index\" only)")


GPT2 = Family(
    model_type="gpt2",
    architecture="GPT2LMHeadModel",
    sizes=(
        Size("vocab_size", "V", 50257),
        Size("n_embd", "H", 768, aliases=("hidden_size",)),
        Size("n_layer", "L", 12, minimum=0, aliases=("num_hidden_layers",)),
        Size("n_head", "A", 12, aliases=("num_attention_heads",), layers=("L",)),  # read by GPT2Attention alone
        Size("n_inner", "I", None),  # None: 4 * n_embd
        Size("n_positions", "P", 1024, aliases=("max_position_embeddings",)),
        *WINDOWS,
    ),
    flags=(Flag("tie_word_embeddings", True),),
    derive=_derive,
    read=_read,
    heads_checked_by_layers=True,  # GPT2Attention checks them: a depth-0 model is built whatever they are
    runs=window_runs,
    padded=(),  # GPT-2's tables have no padding row
    layout=_layout,
    formulas=_formulas,
    flops=lambda c: dict(FLOPS),
    kv_cache=kv_cache,
    positions=lambda c: c["P"],
    torch_ref="GPT2LMHeadModel",
    classes={
        **decoder_classes("GPT2", "transformer.", token_head="classifier", qa_prefix="transformer."),
        "GPT2DoubleHeadsModel": model_class(_choice_head, read=_summary_type, flags=(
            Flag("summary_use_proj", True), Flag("summary_proj_to_labels", True))),
    },
)
