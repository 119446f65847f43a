"""Qwen2.5-VL as transformers builds it (``Qwen2_5_VLForConditionalGeneration``, ``model_type`` ``qwen2_5_vl``).

Works behind the helpers of ``11_todays_models``. A composite config (:class:`~helpers.families.base.TextConfig`):
the language model is Qwen2's (:mod:`helpers.families.qwen2`: biases on q, k and v, listed under
``model.language_model.``), read from ``text_config`` or, as the published files write it, from the top level;
where a key is missing, Qwen2_5_VLTextConfig's defaults apply (H = 8192, L = 80 ..., not Qwen2's), its attention
takes ``d_k = H // A`` whatever ``head_dim`` says, and it refuses heads that do not divide H. Its rotary
embedding is M-RoPE (Bai et al. 2025, arXiv:2502.13923 §2.1): the d_k/2 frequencies split into temporal, height
and width sections (``mrope_section``), no parameter. The vision encoder ``model.visual`` (a ViT trained from
scratch) cuts a video or an image into ``t_v × p_v × p_v`` patches of ``C_v`` channels, embeds them with one
convolution without a bias, runs L_v pre-RMSNorm blocks (a fused ``qkv`` projection and ``proj`` with biases, a
SwiGLU MLP of I_v with biases) with 2-D rotary positions, window attention (``window_size``) in every block but
``fullatt_block_indexes``, and a patch merger: an RMSNorm, then an MLP over ``m_v × m_v`` neighbouring patches
concatenated (``H_v·m_v²`` wide) into the text width ``out_hidden_size`` (O_v). Every one of these tensors is in
the ``vision`` component; windows and M-RoPE change no tensor.

FLOPs, memory: the text tokens through the language model, as FlopCounterMode counts a forward pass on
``input_ids`` alone (the tower multiplies no text token); an image's cost depends on its grid and its windows:
:func:`image_flops` (``flops`` prints it for one image). The KV cache is the language model's (Qwen2's, a window only with
``use_sliding_window``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import BIAS, MATRIX, NORM, VISION, Block, Layout, Param, evaluate
from . import qwen2
from .base import TextConfig, composite, nest

V_ = "vision_config."
# Qwen2_5_VLTextConfig's defaults where they differ from Qwen2Config's (a key the file leaves out)
TEXT_DEFAULTS = {"vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
                 "num_attention_heads": 64, "num_key_value_heads": 8, "max_window_layers": 80}


FULL_BLOCKS = (7, 15, 23, 31)  # Qwen2_5_VLVisionConfig's fullatt_block_indexes


def _given(raw: Mapping[str, Any], key: str) -> str:
    """The name the file gives a text key: ``text_config.KEY`` where it has a text_config, else ``KEY``."""
    return f"text_config.{key}" if raw.get("text_config") is not None else key


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: dict[str, bool]) -> None:
    """The text model's heads dividing H (its attention refuses them otherwise), the tower's heads at least one wide,
    and the head's tie.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    Qwen2_5_VLConfig ties the head when its own ``tie_word_embeddings`` is true, or when the ``text_config`` says
    so (any true value: the text config class has no such field and keeps what it is given).
    """
    if sizes["L"] and sizes["H"] % sizes["A"]:  # Qwen2_5_VLAttention raises a ValueError when it is built
        key = _given(raw, "num_attention_heads")
        raise ConfigError(key, f"the heads split the hidden size: hidden_size = {sizes['H']} is not divisible by "
                               f"num_attention_heads = {sizes['A']}")
    if sizes["L_v"] and sizes["H_v"] < sizes["A_v"]:  # its attention scales by (H_v // A_v) ** -0.5 when built
        key = V_ + ("num_attention_heads" if raw.get(V_ + "num_attention_heads") is not None else "num_heads")
        raise ConfigError(key, f"{sizes['A_v']} heads of {V_}hidden_size = {sizes['H_v']} are 0 wide (the vision "
                               "attention divides by the square root of the width of a head)")
    blocks = raw.get(V_ + "fullatt_block_indexes", FULL_BLOCKS)
    if not isinstance(blocks, (list, tuple)):  # Qwen2_5_VLVisionConfig declares a list of ints
        raise ConfigError(V_ + "fullatt_block_indexes", f"must be a list of block indices, got {json.dumps(blocks)}")
    sizes["L_vf"] = sum(1 for i in range(sizes["L_v"]) if i in blocks)  # blocks attending over the whole image
    if raw.get("text_config.tie_word_embeddings"):
        flags["tie_word_embeddings"] = True


MROPE = [16, 24, 24]  # Qwen2_5_VLRotaryEmbedding's mrope_section where the config names none


def runs(raw: Mapping[str, Any], sizes: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, tuple[str, str]]:
    """What the text model cannot run: M-RoPE's sections (``mrope_section`` of ``rope_scaling`` or
    ``rope_parameters``, [16, 24, 24] unless given) must split the ⌈d_k/2⌉ rotary frequencies exactly (a head of 1 has
    one, and runs its queries and keys 2 wide: :func:`~helpers.families.llama.rotary_width`), and a ``head_dim`` in
    ``text_config`` other than H // A sizes the rotary table but not the heads.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    head_dim = raw.get("text_config.head_dim")
    if head_dim is not None and head_dim != sizes["d_k"]:
        return {"forward": ("text_config.head_dim", f"{head_dim}: the rotary table is head_dim wide, the attention "
                                                    f"heads hidden_size // num_attention_heads = {sizes['d_k']}")}
    at = "text_config." if raw.get("text_config") is not None else ""
    key = at + ("rope_scaling" if raw.get(at + "rope_scaling") else "rope_parameters")  # rope_scaling wins, as there
    rope = raw.get(key) or {}
    section = rope.get("mrope_section", MROPE) if isinstance(rope, dict) else None
    if not (isinstance(section, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in section)
            and sum(section) == -(-sizes["d_k"] // 2)):  # the rotary table is built even with no layer
        return {"forward": (key, f"mrope_section {section} does not split the d_k/2 = {sizes['d_k'] / 2:g} rotary "
                                 "frequencies of a head (hidden_size // num_attention_heads) exactly")}
    return {}


def _linear(name: str, shape: tuple[int, int], formula: str, bias: str | None) -> tuple[Param, ...]:
    """A linear layer of the tower (``formula``: its weight's) with its bias of ``bias`` (None: none)."""
    weight = Param(f"{name}.weight", shape, VISION, formula, MATRIX)
    return (weight,) if bias is None else (weight, Param(f"{name}.bias", shape[:1], VISION, bias, BIAS))


def vision_layout(c: ModelConfig, prefix: str = "model.visual.") -> tuple[Block, ...]:
    """Qwen2.5-VL's vision encoder (``Qwen2_5_VisionTransformerPretrainedModel``) as ``named_parameters()`` lists it.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H_v, I_v, m2, O_v = c["H_v"], c["I_v"], c["m_v"] ** 2, c["O_v"]
    patch = Param(f"{prefix}patch_embed.proj.weight", (H_v, c["C_v"], c["t_v"], c["p_v"], c["p_v"]), VISION,
                  "H_v*C_v*t_v*p_v**2", MATRIX)
    block = (Param("norm1.weight", (H_v,), VISION, "H_v", NORM), Param("norm2.weight", (H_v,), VISION, "H_v", NORM),
             *_linear("attn.qkv", (3 * H_v, H_v), "3*H_v**2", "3*H_v"),
             *_linear("attn.proj", (H_v, H_v), "H_v**2", "H_v"),
             *_linear("mlp.gate_proj", (I_v, H_v), "I_v*H_v", "I_v"),
             *_linear("mlp.up_proj", (I_v, H_v), "I_v*H_v", "I_v"),
             *_linear("mlp.down_proj", (H_v, I_v), "H_v*I_v", "H_v"))
    merger = (Param(f"{prefix}merger.ln_q.weight", (H_v,), VISION, "H_v", NORM),
              *_linear(f"{prefix}merger.mlp.0", (H_v * m2, H_v * m2), "H_v**2*m_v**4", "H_v*m_v**2"),
              *_linear(f"{prefix}merger.mlp.2", (O_v, H_v * m2), "O_v*H_v*m_v**2", "O_v"))
    return (Block.once(patch), Block.stack(f"{prefix}blocks.{{i}}.", block, c["L_v"]), Block.once(*merger))


VISION_FORMULA = ("H_v*C_v*t_v*p_v**2 + L_v*(4*H_v**2 + 3*H_v*I_v + 2*I_v + 7*H_v) + H_v + (H_v*m_v**2)**2"
                  " + H_v*m_v**2 + O_v*H_v*m_v**2 + O_v")


def layout(c: ModelConfig) -> Layout:
    """The vision encoder, then Qwen2's text model under ``model.language_model.`` and the head.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return nest(qwen2.layout(c), {"model.": "model.language_model."}, before=vision_layout(c))


def formulas(c: ModelConfig) -> dict[str, str]:
    """Qwen2's text formulas and the ``vision`` component (patch embedding, L_v blocks, patch merger).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return {**qwen2.formulas(c), VISION: VISION_FORMULA}


def _windows(side: int, k: int) -> int:
    """Σ n² over the windows along one side of ``side`` merged patches cut in windows of ``k`` (the last one shorter)."""
    return (side // k) * k**2 + (side % k) ** 2


IMAGE_FLOPS = ("2*N*H_v*C_v*t_v*p_v**2 + L_v*(8*N*H_v**2 + 6*N*H_v*I_v) + 4*L_vf*t*(h*w)**2*H_v"
               " + 4*(L_v - L_vf)*t*m_v**4*H_v*R_h*R_w + 2*N*H_v**2*m_v**2 + 2*N*H_v*O_v")


def image_flops(c: ModelConfig, h: int, w: int, t: int = 1) -> int:
    """Forward FLOPs of one image (or video) of ``t`` × ``h`` × ``w`` patches through the vision encoder, as
    FlopCounterMode counts them with eager attention: :data:`IMAGE_FLOPS` over N = t·h·w patches.

    No notebook calls it; it works behind the helpers of ``00_overview``. The patch convolution; per block the
    qkv and output projections and the SwiGLU MLP; the scores and values over each frame's h·w patches in the
    ``fullatt_block_indexes`` blocks (L_vf of them) and, in the others, over windows of k × k merged patches
    (k = window_size // m_v // p_v; Σ n² = m_v⁴·R_h·R_w, R = ⌊side/k⌋·k² + (side mod k)², the last window of a
    side shorter); the merger's two matrices on N / m_v² merged tokens. ``h`` and ``w`` must be multiples of m_v.
    """
    m, k = c["m_v"], c["W_v"] // c["m_v"] // c["p_v"]
    if h % m or w % m or k < 1:
        raise ValueError(f"{h} × {w} patches: sides must be multiples of spatial_merge_size {m}, and a window of "
                         f"window_size {c['W_v']} must hold a merged patch (k = {k})")
    return evaluate(IMAGE_FLOPS, c, N=t * h * w, t=t, h=h, w=w, R_h=_windows(h // m, k), R_w=_windows(w // m, k))


def notes(c: ModelConfig) -> list[str]:
    """What ``flops`` counts (the text tokens) and what an image of 16·m_v × 16·m_v patches adds.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    side = 16 * c["m_v"]
    try:
        image = f"adds {image_flops(c, side, side):,} FLOPs (eager attention, windows of {c['W_v']} pixels)"
    except ValueError:
        image = f"cannot run: no merged patch fits a window of {c['W_v']} pixels"
    return [f"text tokens only (input_ids through the language model); one {side * c['p_v']}×{side * c['p_v']} image "
            f"({side}×{side} patches) through the vision encoder {image}"]


QWEN2_5_VL = composite(
    qwen2.QWEN2,
    model_type="qwen2_5_vl",
    architecture="Qwen2_5_VLForConditionalGeneration",
    text=TextConfig("qwen2", defaults=TEXT_DEFAULTS, flat=True, ignores=("head_dim", "tie_word_embeddings")),
    sub_configs=("vision_config",),
    sizes=(
        Size(V_ + "depth", "L_v", 32, minimum=0, aliases=(V_ + "num_hidden_layers",)),  # Qwen2_5_VLVisionConfig's
        Size(V_ + "hidden_size", "H_v", 3584),
        Size(V_ + "intermediate_size", "I_v", 3420),
        Size(V_ + "num_heads", "A_v", 16, aliases=(V_ + "num_attention_heads",)),
        Size(V_ + "in_channels", "C_v", 3),
        Size(V_ + "patch_size", "p_v", 14),
        Size(V_ + "temporal_patch_size", "t_v", 2),
        Size(V_ + "spatial_merge_size", "m_v", 2),
        Size(V_ + "out_hidden_size", "O_v", 3584),
        Size(V_ + "window_size", "W_v", 112, minimum=-2**63),  # pixels; no tensor
    ),
    flags=(Flag("tie_word_embeddings", False),),
    read=read,
    runs=runs,
    layout=layout,
    formulas=formulas,
    notes=notes,
    torch_ref="Qwen2_5_VLForConditionalGeneration",
)
