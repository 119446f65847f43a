"""Llama 4 with its vision encoder as transformers builds it (``Llama4ForConditionalGeneration``, ``model_type`` ``llama4``).

Works behind the helpers of ``11_todays_models``. A composite config (:class:`~helpers.families.base.TextConfig`):
``text_config`` is Llama 4's language model (:mod:`helpers.families.llama4_text`, read by that family under the same
symbols; a whole ``Llama4ForCausalLM`` under ``language_model.``, so its own ``tie_word_embeddings`` ties its head),
``vision_config`` the vision encoder (``vision_model.``), and ``multi_modal_projector`` the bridge between them.

The encoder (Meta AI 2025, "The Llama 4 herd": a MetaCLIP-based encoder) cuts an ``R_v × R_v`` image into
``P_v = (R_v // p_v)²`` patches of ``p_v × p_v`` pixels in ``C_v`` channels, embeds each with one matrix (an unfold
and a linear layer, H_v × C_v·p_v², no bias), appends a learned class token (H_v) and adds a learned position table
of ``P_v + 1`` rows; then a LayerNorm, L_v pre-norm layers (LayerNorms with a shift, q/k/v/o projections with biases
and 2-D rotary positions, a GELU MLP of I_v with biases), a final LayerNorm. The class token is dropped, a pixel
shuffle folds each 2 × 2 block of patches into one token (``pixel_shuffle_ratio`` 0.5: 4 × H_v wide, which the
adapter's first matrix reads as I_v wide), and the adapter (``vision_adapter.mlp``: ``fc1`` M_in × I_v, ``fc2``
M_out × M_out, no biases) and the projector (``linear_1``: H × O_v, no bias) carry those tokens to the text width.
Every one of these tensors is in the ``vision`` component: no text token runs through them, so ``flops`` counts the
text tokens through the language model (the text family's FLOPs, with its note on the experts) and the KV cache is
the language model's.

Llama 4 Scout as published: 108.6B parameters, of which the language model holds 107.8B and the encoder, adapter and
projector 0.87B; the card's "17B active" is the language model's (17.17B with both tables), the whole model's
18.04B with the vision tower.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec import ConfigError, ModelConfig, Size
from ..spec import BIAS, MATRIX, NORM, VISION, Block, Layout, Param, evaluate, render
from . import llama4_text
from .base import Family, TextConfig, nest

V_ = "vision_config."


def read(raw: Mapping[str, Any], sizes: dict[str, int], flags: Mapping[str, bool]) -> None:
    """The patches ``P_v = (R_v // p_v)²``; heads of at least one dimension where a layer is built (its attention
    scales by ``(H_v // A_v) ** -0.5``); a pixel shuffle ratio other than 0 (the adapter divides by its square).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    sizes["P_v"] = (sizes["R_v"] // sizes["p_v"]) ** 2
    if sizes["L_v"] and sizes["H_v"] // sizes["A_v"] == 0:
        raise ConfigError(V_ + "num_attention_heads", f"{sizes['A_v']} heads leave {V_}hidden_size // "
                                                      f"num_attention_heads = 0 dimensions per head (transformers' "
                                                      "vision attention fails to build)")
    ratio = raw.get(V_ + "pixel_shuffle_ratio", 0.5)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)):
        raise ConfigError(V_ + "pixel_shuffle_ratio", f"must be a number, got {json.dumps(ratio)}")
    if ratio == 0:
        raise ConfigError(V_ + "pixel_shuffle_ratio", "0: the vision adapter divides projector_input_dim by its square")
    tokens = image_tokens(sizes, ratio)
    if tokens is not None:
        sizes["T_v"] = tokens  # an image's tokens after the pixel shuffle: what the language model reads


def image_tokens(sizes: Mapping[str, int], ratio: float) -> int | None:
    """The tokens one image becomes (the pixel shuffle folds ``1/ratio × 1/ratio`` patches into one), where an image
    runs through the encoder, the adapter and the projector; None where transformers' shapes do not chain: the
    shuffle's views (``int(side·ratio)``, ``int(H_v/ratio)``, ``int(H_v/ratio²)`` must hold every value), the
    adapter reading ``I_v = H_v/ratio²`` wide and ``fc2``, the projector reading what ``fc1`` and ``fc2`` give
    (``M_in = M_out = O_v``), and heads a multiple of 4 wide where a layer rotates (2-D rotary: x and y pairs).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H_v, A_v, side = sizes["H_v"], sizes["A_v"], sizes["R_v"] // sizes["p_v"]
    folded, wide, widest = int(side * ratio), int(H_v / ratio), int(H_v / ratio ** 2)
    shuffles = side * H_v == folded * wide and side * side * H_v == folded * folded * widest
    chained = sizes["I_v"] == widest and sizes["M_in"] == sizes["M_out"] == sizes["O_v"]
    rotates = not sizes["L_v"] or (H_v // A_v) % 4 == 0
    return folded * folded if side and shuffles and chained and rotates else None


def _linear(name: str, out: str, width: str, c: ModelConfig, bias: bool) -> list[Param]:
    """An ``nn.Linear(width, out)`` of the tower (with its bias where ``bias``); no text token runs through it."""
    formula = f"{out}**2" if out == width else f"{out}*{width}"
    weight = Param(f"{name}.weight", (c[out], c[width]), VISION, formula, MATRIX)
    return [weight, Param(f"{name}.bias", (c[out],), VISION, out, BIAS)] if bias else [weight]


def _layer_norm(name: str, c: ModelConfig) -> list[Param]:
    """An ``nn.LayerNorm(H_v)``: a gain and a shift."""
    return [Param(f"{name}.{part}", (c["H_v"],), VISION, "H_v", NORM) for part in ("weight", "bias")]


def _attention(c: ModelConfig) -> tuple[list[Param], str]:
    """The four projections with biases, A_v heads of H_v // A_v each (narrower than H_v where A_v does not divide it),
    and the formula of a whole layer (attention, MLP of I_v, two LayerNorms)."""
    H_v, A_v = c["H_v"], c["A_v"]
    width = A_v * (H_v // A_v)
    if width == H_v:
        params = [p for proj in ("q_proj", "k_proj", "v_proj", "o_proj")
                  for p in _linear(f"self_attn.{proj}", "H_v", "H_v", c, bias=True)]
        return params, "4*H_v**2 + 2*H_v*I_v + I_v + 9*H_v"
    params = []
    for proj, shape in (("q_proj", (width, H_v)), ("k_proj", (width, H_v)), ("v_proj", (width, H_v)),
                        ("o_proj", (H_v, width))):
        params.append(Param(f"self_attn.{proj}.weight", shape, VISION, "A_v*(H_v//A_v)*H_v", MATRIX))
        params.append(Param(f"self_attn.{proj}.bias", (shape[0],), VISION, "A_v*(H_v//A_v)" if shape[0] == width
                            else "H_v", BIAS))
    return params, "4*A_v*(H_v//A_v)*H_v + 3*A_v*(H_v//A_v) + 2*H_v*I_v + I_v + 6*H_v"


def vision_layout(c: ModelConfig) -> tuple[Block, ...]:
    """``Llama4VisionModel`` under ``vision_model.`` and the projector, as ``named_parameters()`` lists them (the
    model's own vectors first, then its modules).

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    H_v, P_v = c["H_v"], c["P_v"]
    attention, _ = _attention(c)
    layer = [*attention, *_linear("mlp.fc1", "I_v", "H_v", c, bias=True), *_linear("mlp.fc2", "H_v", "I_v", c, bias=True),
             *_layer_norm("input_layernorm", c), *_layer_norm("post_attention_layernorm", c)]
    patch = c["C_v"] * c["p_v"] ** 2
    return (
        Block.once(Param("vision_model.class_embedding", (H_v,), VISION, "H_v", BIAS),  # a learned token, no matmul
                   Param.table("vision_model.positional_embedding_vlm", (P_v + 1, H_v), VISION, "(P_v + 1)*H_v"),
                   Param("vision_model.patch_embedding.linear.weight", (H_v, patch), VISION, "H_v*C_v*p_v**2", MATRIX),
                   *_layer_norm("vision_model.layernorm_pre", c), *_layer_norm("vision_model.layernorm_post", c)),
        Block.stack("vision_model.model.layers.{i}.", layer, c["L_v"]),
        Block.once(*_linear("vision_model.vision_adapter.mlp.fc1", "M_in", "I_v", c, bias=False),
                   *_linear("vision_model.vision_adapter.mlp.fc2", "M_out", "M_out", c, bias=False),
                   *_linear("multi_modal_projector.linear_1", "H", "O_v", c, bias=False)),
    )


def layout(c: ModelConfig) -> Layout:
    """The vision encoder, its adapter and the projector, then Llama 4's language model under ``language_model.``.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    return nest(llama4_text.layout(c), {"model.": "language_model.model.", "lm_head.": "language_model.lm_head."},
                before=vision_layout(c))


def formulas(c: ModelConfig) -> dict[str, str]:
    """The language model's formulas and the ``vision`` component: the encoder, the adapter and the projector.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    _, layer = _attention(c)
    vision = f"(P_v + 2)*H_v + H_v*C_v*p_v**2 + 4*H_v + L_v*({layer}) + M_in*I_v + M_out**2 + H*O_v"
    return {**llama4_text.formulas(c), VISION: vision}


def vision_flops(c: ModelConfig) -> str:
    """The forward FLOPs of one ``R_v × R_v`` image, as FlopCounterMode counts them with eager attention: the patch
    matrix on P_v patches, per layer the four projections, the (P_v + 1)² scores and values and the MLP on the patches
    and the class token, then the adapter's two matrices and the projector on the T_v shuffled tokens.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    heads = "H_v" if c["H_v"] % c["A_v"] == 0 else "A_v*(H_v//A_v)"  # the projections' width
    return (f"2*P_v*C_v*p_v**2*H_v + L_v*(8*(P_v + 1)*H_v*{heads} + 4*(P_v + 1)**2*{heads} + 4*(P_v + 1)*H_v*I_v)"
            " + 2*T_v*(I_v*M_in + M_out**2 + O_v*H)").replace("H_v*H_v", "H_v**2")


def notes(c: ModelConfig) -> list[str]:
    """What ``flops`` counts: the text tokens (with the language model's note on the experts), and what an image adds.

    No notebook calls it; it works behind the helpers of ``00_overview``.
    """
    text = llama4_text.notes(c)
    if "T_v" not in c.sizes:
        return [*text, "text tokens only (input_ids through the language model); no image runs through this encoder "
                       "(its pixel shuffle, adapter and projector widths do not chain, or its heads are not a multiple "
                       "of 4 wide)"]
    image = evaluate(vision_flops(c), c)
    return [*text, f"text tokens only (input_ids through the language model); one {c['R_v']}×{c['R_v']} image (T_v = "
                   f"{c['T_v']} tokens for the language model) through the encoder, adapter and projector adds "
                   f"{render(vision_flops(c))} = {image:,} FLOPs (eager attention)"]


LLAMA4 = Family(
    model_type="llama4",
    architecture="Llama4ForConditionalGeneration",
    text=TextConfig("llama4_text"),  # Llama4Config fills a missing text_config with Llama4TextConfig's defaults
    sub_configs=("vision_config",),
    sizes=(
        Size(V_ + "hidden_size", "H_v", 768),  # Llama4VisionConfig's defaults (a missing vision_config)
        Size(V_ + "intermediate_size", "I_v", 5632),
        Size(V_ + "num_hidden_layers", "L_v", 34, minimum=0),
        Size(V_ + "num_attention_heads", "A_v", 16),
        Size(V_ + "num_channels", "C_v", 3),
        Size(V_ + "image_size", "R_v", 448),
        Size(V_ + "patch_size", "p_v", 14),
        Size(V_ + "vision_output_dim", "O_v", 7680),  # the projector's input
        Size(V_ + "projector_input_dim", "M_in", 4096),  # the adapter's widths
        Size(V_ + "projector_output_dim", "M_out", 4096),
    ),  # vision_config's model_type is not read: Llama4Config builds a Llama4VisionConfig from the keys whatever it says
    read=read,
    heads_divide_hidden="never",  # the text family checked its heads; read() the encoder's
    layout=layout,
    formulas=formulas,
    flops=llama4_text.LLAMA4_TEXT.flops,  # text tokens through the language model
    surplus_flops=llama4_text.LLAMA4_TEXT.surplus_flops,
    notes=notes,
    kv_cache=llama4_text.LLAMA4_TEXT.kv_cache,
    positions=lambda c: None,
    torch_ref="Llama4ForConditionalGeneration",
)
