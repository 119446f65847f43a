"""Qwen3 as transformers builds it (``Qwen3ForCausalLM``): q/k RMSNorms per head, an explicit head_dim.

Introduced in ``07_decoder_llms``. Qwen3 drops Qwen2's q/k/v biases (``attention_bias``, false by default,
puts one on all four projections, ``o_proj`` included) and normalises each head's query and key with an
RMSNorm of ``d_k`` (``q_norm``, ``k_norm``: one gain shared by every head, 2·d_k per layer). ``head_dim``
defaults to 128 whatever ``H/A`` is, so the projections are ``A·d_k`` wide, not H (Qwen3-0.6B: H = 1024,
A = 16, d_k = 128: q_proj is 2048 × 1024). The norms are elementwise (no FLOP); the sliding-window keys and
the cache are Qwen2's (:mod:`helpers.families.qwen2`).
"""

from __future__ import annotations

from dataclasses import replace

from ..spec import Flag, ModelConfig, Size
from ..spec import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout
from . import qwen2
from .base import Family
from .heads import decoder_classes


def layout(c: ModelConfig) -> Layout:
    """Qwen3's tensors: Qwen2's layout without its biases (unless ``attention_bias``), with q_norm and k_norm.

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    """
    bias = c.flags["attention_bias"]
    return qwen2.layout(c, qk_norm=True, bias=(bias, bias))


def formulas(c: ModelConfig, norms: str = "L*(2*H + 2*d_k) + H") -> dict[str, str]:
    """Qwen3's parameter formulas per component (the q/k norms filed with the other norms, ``norms``: per head, d_k
    each; OLMo 2 passes its norms over the whole projections).

    No notebook calls it; it works behind the helpers of ``12_finetune_quantize_serve``.
    """
    attention = "2*A*d_k*H + 2*A_kv*d_k*H" + (" + A*d_k + 2*A_kv*d_k + H" if c.flags["attention_bias"] else "")
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: "L*(3*H*I)",
        LAYER_NORM: norms,
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


QWEN3: Family = replace(
    qwen2.QWEN2,
    model_type="qwen3",
    architecture="Qwen3ForCausalLM",
    sizes=(*qwen2.SIZES[:5], Size("head_dim", "d_k", 128), *qwen2.SIZES[5:]),  # null refused, as transformers does
    flags=(*qwen2.FLAGS, Flag("attention_bias", False)),
    runs=qwen2.runs_qwen3,  # Qwen3Config keeps head_dim: an odd one is refused (validate_rope)
    layout=layout,
    formulas=formulas,
    torch_ref="Qwen3ForCausalLM",
    classes=decoder_classes("Qwen3", "model.", qa_prefix="transformer."),
)
