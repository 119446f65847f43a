"""Gemma 3 with its vision tower as transformers builds it (``Gemma3ForConditionalGeneration``, ``model_type`` ``gemma3``).

Works behind the helpers of ``11_todays_models``. A composite config (:class:`~helpers.families.base.TextConfig`):
``text_config`` is Gemma 3's text model (:mod:`helpers.families.gemma3_text`, read by that family under the same
symbols and listed under ``model.language_model.``), ``vision_config`` a SigLIP vision encoder (Zhai et al. 2023,
``model.vision_tower.``) and ``model.multi_modal_projector`` the bridge between them (Gemma 3 report, Gemma Team
2025, arXiv:2503.19786 §2.1). The tower is a ViT: a ``p_v × p_v`` patch convolution of the ``C_v`` colour channels
into H_v (with a bias), a learned position table of ``P_v = (R_v // p_v)²`` rows (one per patch of an ``R_v × R_v``
image), L_v pre-norm encoder layers (LayerNorms with a shift, q/k/v/out projections with biases, an fc1/fc2 MLP of
I_v), a final LayerNorm and, where ``vision_use_head`` (SigLIP's default, off in the published Gemma 3), an
attention-pooling head (a probe token, ``nn.MultiheadAttention``, a LayerNorm and an MLP). The projector pools the
patches to ``mm_tokens_per_image`` soft tokens, normalises them (an RMSNorm of H_v) and maps them into the text
width with one ``H_v × H`` matrix. Every one of these tensors is in the ``vision`` component.

FLOPs, memory: the text tokens through the language model, as FlopCounterMode counts a forward pass on
``input_ids`` alone: the tower multiplies no text token (its tensors' ``tokens`` are empty), and an image's cost
is not in the table (:data:`VISION_FLOPS` writes it per image). The KV cache is the language model's: 5 local
layers of ``sliding_window`` to 1 global.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec import ConfigError, Flag, ModelConfig, Size
from ..spec import BIAS, MATRIX, NORM, TABLE, VISION, Block, Layout, Param, evaluate, render
from . import gemma3_text
from .base import TextConfig, composite, nest

V_ = "vision_config."
SIGLIP = "siglip_vision_model"


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: dict[str, bool]) -> None:
    """The tower's positions ``P_v = (R_v // p_v)²`` and its heads; ``tie_word_embeddings: null`` unties the head.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    Gemma3Config declares ``tie_word_embeddings: bool | None``: null is accepted and ties nothing (transformers
    reads it as false). SigLIP's attention (and its pooling head's ``nn.MultiheadAttention``) refuses heads that do
    not divide H_v: refused in one line naming ``vision_config.num_attention_heads``, where a layer or the head is built.
    """
    if "tie_word_embeddings" in raw and raw["tie_word_embeddings"] is None:
        flags["tie_word_embeddings"] = False
    sizes["P_v"] = (sizes["R_v"] // sizes["p_v"]) ** 2
    if (sizes["L_v"] or flags[V_ + "vision_use_head"]) and sizes["H_v"] % sizes["A_v"]:
        raise ConfigError(V_ + "num_attention_heads", f"the heads split the tower's width: {V_}hidden_size = "
                                                     f"{sizes['H_v']} is not divisible by {V_}num_attention_heads = "
                                                     f"{sizes['A_v']}")


def _linear(name: str, out: str, width: str, c: ModelConfig) -> tuple[Param, Param]:
    """An ``nn.Linear(width, out)`` of the tower with its bias (no text token runs through it)."""
    o, w = c[out], c[width]
    formula = f"{out}**2" if out == width else f"{out}*{width}"
    return (Param(f"{name}.weight", (o, w), VISION, formula, MATRIX), Param(f"{name}.bias", (o,), VISION, out, BIAS))


def _layer_norm(name: str, c: ModelConfig) -> tuple[Param, Param]:
    """A LayerNorm of the tower: a gain and a shift of H_v."""
    H_v = c["H_v"]
    return (Param(f"{name}.weight", (H_v,), VISION, "H_v", NORM), Param(f"{name}.bias", (H_v,), VISION, "H_v", NORM))


def siglip_layout(c: ModelConfig, prefix: str) -> tuple[Block, ...]:
    """SigLIP's vision encoder (``SiglipVisionModel``) under ``prefix``, as ``named_parameters()`` lists it.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H_v = c["H_v"]
    embeddings = Block.once(
        Param(f"{prefix}embeddings.patch_embedding.weight", (H_v, c["C_v"], c["p_v"], c["p_v"]), VISION,
              "H_v*C_v*p_v**2", MATRIX),
        Param(f"{prefix}embeddings.patch_embedding.bias", (H_v,), VISION, "H_v", BIAS),
        Param.table(f"{prefix}embeddings.position_embedding.weight", (c["P_v"], H_v), VISION, "P_v*H_v"))
    layer = (*_layer_norm("layer_norm1", c),
             *(p for proj in ("k_proj", "v_proj", "q_proj", "out_proj") for p in _linear(f"self_attn.{proj}", "H_v", "H_v", c)),
             *_layer_norm("layer_norm2", c), *_linear("mlp.fc1", "I_v", "H_v", c), *_linear("mlp.fc2", "H_v", "I_v", c))
    blocks = [embeddings, Block.stack(f"{prefix}encoder.layers.{{i}}.", layer, c["L_v"]),
              Block.once(*_layer_norm(f"{prefix}post_layernorm", c))]
    if c.flags[V_ + "vision_use_head"]:  # attention pooling: a probe token attends over the patches
        head = f"{prefix}head."
        blocks.append(Block.once(
            Param(f"{head}probe", (1, 1, H_v), VISION, "H_v", TABLE),  # one learned token, the pooling's query
            Param(f"{head}attention.in_proj_weight", (3 * H_v, H_v), VISION, "3*H_v**2", MATRIX),
            Param(f"{head}attention.in_proj_bias", (3 * H_v,), VISION, "3*H_v", BIAS),
            *_linear(f"{head}attention.out_proj", "H_v", "H_v", c), *_layer_norm(f"{head}layernorm", c),
            *_linear(f"{head}mlp.fc1", "I_v", "H_v", c), *_linear(f"{head}mlp.fc2", "H_v", "I_v", c)))
    return tuple(blocks)


SIGLIP_FORMULA = "H_v*C_v*p_v**2 + H_v + P_v*H_v + L_v*(4*H_v**2 + 2*H_v*I_v + I_v + 9*H_v) + 2*H_v"
SIGLIP_HEAD = "4*H_v**2 + 2*H_v*I_v + I_v + 8*H_v"  # probe, in/out projections, LayerNorm, MLP


def layout(c: ModelConfig) -> Layout:
    """The tower, the projector, then Gemma 3's text model under ``model.language_model.`` and the head.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H_v = c["H_v"]
    projector = Block.once(
        Param("model.multi_modal_projector.mm_input_projection_weight", (H_v, c["H"]), VISION, "H_v*H", MATRIX),
        Param("model.multi_modal_projector.mm_soft_emb_norm.weight", (H_v,), VISION, "H_v", NORM))
    tower = siglip_layout(c, "model.vision_tower.")
    return nest(gemma3_text.layout(c), {"model.": "model.language_model."}, before=(*tower, projector))


def formulas(c: ModelConfig) -> dict[str, str]:
    """Gemma 3's text formulas and the ``vision`` component: the SigLIP tower (its head where built) and the projector.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    head = f" + {SIGLIP_HEAD}" if c.flags[V_ + "vision_use_head"] else ""
    return {**gemma3_text.formulas(c), VISION: f"{SIGLIP_FORMULA}{head} + H_v*H + H_v"}


# Forward FLOPs of one image through the tower and the projector, as FlopCounterMode counts them with eager attention:
# the patch convolution on P_v patches, per layer the four projections, the P_v × P_v scores and values and the
# MLP, the pooling head's probe (one query) where it is built, then the T_i pooled tokens through the projection.
VISION_FLOPS = ("2*P_v*H_v*C_v*p_v**2 + L_v*(8*P_v*H_v**2 + 4*P_v**2*H_v + 4*P_v*H_v*I_v) + 2*T_i*H_v*H")
VISION_HEAD_FLOPS = "2*H_v**2 + 4*P_v*H_v**2 + 4*P_v*H_v + 2*H_v**2 + 4*H_v*I_v"


def vision_flops(c: ModelConfig) -> str:
    """The forward FLOPs of one image (``R_v × R_v``) through the tower and the projector, as a formula.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return VISION_FLOPS + (f" + {VISION_HEAD_FLOPS}" if c.flags[V_ + "vision_use_head"] else "")


def notes(c: ModelConfig) -> list[str]:
    """What ``flops`` counts (the text tokens) and what one image adds, computed for this config.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    image = evaluate(vision_flops(c), c)
    return [f"text tokens only (input_ids through the language model); one {c['R_v']}×{c['R_v']} image through the "
            f"vision tower and projector adds {render(vision_flops(c))} = {image:,} FLOPs (eager attention)"]


GEMMA3 = composite(
    gemma3_text.GEMMA3_TEXT,
    model_type="gemma3",
    architecture="Gemma3ForConditionalGeneration",
    # Gemma3Config fills a missing text_config with Gemma3TextConfig's defaults; Gemma3Model builds the attention
    # masks of the layer types the text model has (a null window runs where no layer is local)
    text=TextConfig("gemma3_text", runs=gemma3_text.runs_in_composite),
    sub_configs=("vision_config",),
    sizes=(
        Size(V_ + "hidden_size", "H_v", 768),  # SiglipVisionConfig's defaults (a missing vision_config)
        Size(V_ + "intermediate_size", "I_v", 3072),
        Size(V_ + "num_hidden_layers", "L_v", 12, minimum=0),
        Size(V_ + "num_attention_heads", "A_v", 12),
        Size(V_ + "num_channels", "C_v", 3),
        Size(V_ + "image_size", "R_v", 224),
        Size(V_ + "patch_size", "p_v", 16),
        Size("mm_tokens_per_image", "T_i", 256),  # 0: the projector divides by √0 when it is built
    ),
    flags=(Flag("tie_word_embeddings", True, nullable=True), Flag(V_ + "vision_use_head", True)),
    refused={V_ + "model_type": (SIGLIP, "Gemma 3's tower is SigLIP's; another vision model is not modelled here")},
    read=read,
    layout=layout,
    formulas=formulas,
    notes=notes,
    torch_ref="Gemma3ForConditionalGeneration",
)
