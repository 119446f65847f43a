"""GPT-OSS as transformers builds it (``GptOssForCausalLM``): a mixture of experts with attention sinks.

Works behind the helpers of ``09_modern_architectures`` (notebook 11, on today's models, is to teach it). Mixtral's
plan (GQA, rotary positions, two RMSNorms per layer, E routed experts of which k run per token) with what OpenAI's
gpt-oss model card (OpenAI 2025, §2) adds: biases on the four attention projections (``attention_bias``, on by
default), one learned logit per query head (``self_attn.sinks``, A per layer: a column the softmax sees and the
values do not), a router with a bias (``mlp.router``, E × H and E), and experts with biases, stored fused and
transposed: ``mlp.experts.gate_up_proj`` (E × H × 2I, gate and up interleaved), ``gate_up_proj_bias`` (E × 2I),
``down_proj`` (E × I × H), ``down_proj_bias`` (E × H). A token uses k of the E experts' weights and bias rows
(:attr:`helpers.count.Count.active`; gpt-oss-120b: 116.8B parameters, 5.1B active without the input table, the
card's figure). Layers alternate a 128-token window and full attention (``layer_types``; even layers windowed by
default), which changes no tensor and no eager FLOP, only the cache: a windowed layer keeps the last ``W − 1``
tokens. ``quantization_config`` (MXFP4 experts) changes how the weights are stored, not how many there are.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import Flag, ModelConfig, Size
from ..spec import ATTENTION, EMBEDDINGS, FEED_FORWARD, LAYER_NORM, LM_HEAD, Layout, Param
from . import llama
from .base import Family, experts_key, too_many_experts
from .heads import decoder_classes
from .llama import FULL, SLIDING


def _alternating(raw: Mapping[str, Any], sizes: Mapping[str, int], window: int | None) -> list[str]:
    """GptOssConfig's own ``layer_types``: layer ``i`` windowed when ``i + 1`` is odd, full otherwise."""
    return [SLIDING if (i + 1) % 2 else FULL for i in range(sizes["L"])]


# a mask per layer type, and the sliding one for every input; its rotary step halves each head (odd ones widen)
_read_cache, _window_runs = llama.hooks(default=128, types=_alternating, masks=True, every_mask="GptOssModel",
                                        rotary=llama.halves_width)


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[int, ...]]:
    """The cache's layers (:func:`helpers.families.llama.hooks`) and each layer's window (``{"windows": ...}``: W
    for a windowed layer, 0 for a full one), which the reference model masks with.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    lists = _read_cache(raw, sizes, flags)
    window = raw["sliding_window"] if "sliding_window" in raw else 128
    types = llama.read_layer_types(raw, sizes["L"]) or _alternating(raw, sizes, window)
    windows = tuple(window if t == SLIDING and isinstance(window, int) and window > 0 else 0 for t in types)
    return {**lists, "windows": windows}


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """LLaMA's (key/value heads, the cache, the masks); ``sliding_window: null`` (the model builds its sliding-window
    mask for every input, whatever the layers are, and that fails without a window); E = 0 (its experts one-hot
    encode the router's picks over E classes, and none fails); and k ≤ E: ``torch.topk`` refuses more experts per
    token than experts (the model builds; its forward pass fails).

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    problems = dict(_window_runs(raw, sizes, flags))
    key = experts_key(raw)
    if sizes["L"] and sizes["E"] == 0:
        problems.setdefault("forward", (key, "0 experts: GptOssExperts one-hot encodes the router's picks over 0 "
                                             "classes, and transformers' forward pass fails"))
    elif sizes["L"] and (found := too_many_experts(sizes, key)):
        problems.setdefault("forward", found)
    return problems


def layout(c: ModelConfig) -> Layout:
    """GPT-OSS's tensors in transformers' order: the sinks, biased projections, the router, the fused experts.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    H, I, A, E = c["H"], c["I"], c["A"], c["E"]
    bias = c.flags["attention_bias"]
    # one logit per head, joining each row of scores before the softmax: added, as a bias is (no matmul); a parameter
    # of the attention module itself, so torch lists it before the projections' (which are submodules)
    layer = [Param.bias("self_attn.sinks", (A,), ATTENTION, "A"), *llama.attention_projections(c, bias)]
    layer += [Param.matrix("mlp.router.weight", (E, H), FEED_FORWARD, "E*H"),
              Param.bias("mlp.router.bias", (E,), FEED_FORWARD, "E"),
              Param.experts("mlp.experts.gate_up_proj", (E, H, 2 * I), FEED_FORWARD, "2*E*H*I"),
              Param.expert_bias("mlp.experts.gate_up_proj_bias", (E, 2 * I), FEED_FORWARD, "2*E*I"),
              Param.experts("mlp.experts.down_proj", (E, I, H), FEED_FORWARD, "E*I*H"),
              Param.expert_bias("mlp.experts.down_proj_bias", (E, H), FEED_FORWARD, "E*H"),
              Param.norm("input_layernorm.weight", (H,), LAYER_NORM, "H"),
              Param.norm("post_attention_layernorm.weight", (H,), LAYER_NORM, "H")]
    return llama.decoder_layout(c, layer)


def formulas(c: ModelConfig) -> dict[str, str]:
    """Parameter formulas per component: every expert counted, with its biases; the sinks in attention.

    No notebook calls it; it works behind the helpers of ``11_todays_models``.
    """
    attention = "A + 2*A*d_k*H + 2*A_kv*d_k*H" + (" + A*d_k + 2*A_kv*d_k + H" if c.flags["attention_bias"] else "")
    result = {
        EMBEDDINGS: "V*H",
        ATTENTION: f"L*({attention})",
        FEED_FORWARD: "L*(3*E*H*I + 2*E*I + 2*E*H + E)",
        LAYER_NORM: "(2*L + 1)*H",
    }
    if not c.flags["tie_word_embeddings"]:
        result[LM_HEAD] = "V*H"
    return result


FLOPS = {
    **llama.FLOPS,  # the sinks add a column to the scores' softmax, no matmul
    FEED_FORWARD: "6*L*B*S*k*H*I + 2*L*B*S*E*H",  # k experts per token, the router on every token
}


GPT_OSS = Family(
    model_type="gpt_oss",
    architecture="GptOssForCausalLM",
    sizes=(
        Size("vocab_size", "V", 201088),
        Size("hidden_size", "H", 2880),
        Size("num_hidden_layers", "L", 36, minimum=0),
        Size("num_attention_heads", "A", 64),
        Size("num_key_value_heads", "A_kv", 8),  # int fields: null is refused, as transformers refuses it
        Size("head_dim", "d_k", 64),  # not H // A
        Size("intermediate_size", "I", 2880),
        Size("max_position_embeddings", "P", 131072),
        Size("num_local_experts", "E", 128, minimum=0, aliases=("num_experts",), layers=("L",)),
        Size("num_experts_per_tok", "k", 4, minimum=0),
        Size("sliding_window", "W", 128, minimum=-2**63, nullable=True),
        llama.CHUNK,
    ),
    flags=(Flag("tie_word_embeddings", False), Flag("attention_bias", True)),
    derive=llama.LLAMA.derive,
    read=read,
    runs=runs,
    heads_divide_hidden="never",  # head_dim sizes the heads: the projections are A·d_k wide
    pad_token_id=None,
    layout=layout,
    formulas=formulas,
    flops=lambda c: llama.with_scores(c, FLOPS),
    kv_cache=llama.kv_cache,  # full layers every token, windowed ones the last W − 1
    positions=lambda c: None,  # rotary (YaRN): no position table
    torch_ref="GptOssForCausalLM",
    classes=decoder_classes("GptOss", "model.", qa_prefix=None),
)
