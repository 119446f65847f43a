"""Mixtral as transformers builds it (``MixtralForCausalLM``): Mistral's attention, a mixture of experts.

Used in ``09_modern_architectures``. Each layer's SwiGLU is replaced by E experts (``num_local_experts``, 8) of which a
router (``mlp.gate``, E × H) picks k per token (``num_experts_per_tok``, 2). transformers 5 stores the
experts fused: ``mlp.experts.gate_up_proj`` (E × 2I × H) and ``mlp.experts.down_proj`` (E × H × I). Every
expert is a parameter (Mixtral 8x7B: 46.7B), but a token multiplies only k of them (12.9B active,
:attr:`helpers.count.Count.active`); the forward FLOPs are per routed token: ``6·B·S·k·H·I`` for the
experts and ``2·B·S·E·H`` for the router. The cache is LLaMA's, windowed where ``sliding_window`` is given
(:func:`helpers.families.llama.cache_layers`).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import Flag, ModelConfig, Size
from ..spec import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout, Param
from . import llama
from .base import Family, experts_key, too_many_experts
from .heads import decoder_classes, expand_experts


def _experts(c: ModelConfig) -> list[Param]:
    """A sparse MoE block's tensors as transformers names them, relative to the layer (router first)."""
    H, I, E = c["H"], c["I"], c["E"]
    return [Param.matrix("mlp.gate.weight", (E, H), FEED_FORWARD, "E*H"),
            Param.experts("mlp.experts.gate_up_proj", (E, 2 * I, H), FEED_FORWARD, "2*E*I*H"),
            Param.experts("mlp.experts.down_proj", (E, H, I), FEED_FORWARD, "E*H*I")]


def _layout(c: ModelConfig) -> Layout:
    """Mixtral's tensors: LLaMA's (no biases), each layer's MLP replaced by a router and E fused experts."""
    H, A, A_kv, d_k = c["H"], c["A"], c["A_kv"], c["d_k"]
    layer = [Param.matrix(f"self_attn.{proj}.weight", (out, H), ATTENTION, f"{sym}*d_k*H")
             for proj, out, sym in (("q_proj", A * d_k, "A"), ("k_proj", A_kv * d_k, "A_kv"),
                                    ("v_proj", A_kv * d_k, "A_kv"))]
    layer.append(Param.matrix("self_attn.o_proj.weight", (H, A * d_k), ATTENTION, "H*A*d_k"))
    layer += _experts(c)
    layer += [Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
              Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    return llama.decoder_layout(c, layer)


def _formulas(c: ModelConfig) -> dict[str, str]:
    """Mixtral's parameter formulas per component: every expert counted, and the router."""
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: "L*(2*A*d_k*H + 2*A_kv*d_k*H)",
        FEED_FORWARD: "L*(3*E*H*I + E*H)",
        LAYER_NORM: "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


FLOPS = {
    **llama.FLOPS,
    FEED_FORWARD: "6*L*B*S*k*H*I + 2*L*B*S*E*H",  # k experts per token (top-k routing), the router on every token
}


_read, _window_runs = llama.hooks(stored_head=False)  # no window unless given: sliding_window changes only the mask and the cache


def _runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """LLaMA's (key/value heads, the cache), and k ≤ E: ``torch.topk`` refuses more experts per token than experts
    (the model builds; its forward pass fails)."""
    problems = _window_runs(raw, sizes, flags)
    if sizes["L"] and (found := too_many_experts(sizes, experts_key(raw))):
        problems.setdefault("forward", found)
    return problems


MIXTRAL = Family(
    model_type="mixtral",
    architecture="MixtralForCausalLM",
    sizes=(
        Size("vocab_size", "V", 32000),
        Size("hidden_size", "H", 4096),
        Size("num_hidden_layers", "L", 32, minimum=0),
        Size("num_attention_heads", "A", 32),
        Size("num_key_value_heads", "A_kv", 8),  # an int field: null is refused, as transformers refuses it
        Size("head_dim", "d_k", None),  # None: H // A
        Size("intermediate_size", "I", 14336),
        Size("max_position_embeddings", "P", 4096 * 32),
        Size("num_local_experts", "E", 8, minimum=0, aliases=("num_experts",), layers=("L",)),  # 0: tensors 0 wide, k > 0 cannot route
        Size("num_experts_per_tok", "k", 2, minimum=0),  # 0: the router runs, no expert does
        llama.WINDOW,  # MixtralConfig's sliding_window, None by default
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False),),
    derive=llama.LLAMA.derive,
    read=_read,
    runs=_runs,
    heads_divide_hidden="never",  # head_dim = H // A: the projections are A·d_k wide
    pad_token_id=None,
    layout=_layout,
    formulas=_formulas,
    flops=lambda c: llama.with_scores(c, FLOPS),
    kv_cache=llama.kv_cache,  # LLaMA's: every token, or a window of them
    positions=lambda c: None,  # rotary: no position table
    torch_ref="MixtralForCausalLM",
    classes=decoder_classes("Mixtral", "model.", qa_prefix="model."),
    # on disk: block_sparse_moe.gate.weight, block_sparse_moe.experts.{e}.w1/w3/w2.weight (transformers renames and fuses)
    checkpoint_names=expand_experts("w1", "w3", "w2", width="I", block="block_sparse_moe"),
)
