"""Llama 4 with its vision encoder as plain torch modules: the encoder (a patch matrix, a class token, a position table,
pre-norm layers of biased attention and a GELU MLP), the pixel-shuffle adapter, the projector, and Llama 4's language
model (:mod:`.llama4_text`) under ``language_model.``."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import _attend, _heads, _merge
from .llama4_text import Llama4ForCausalLM

__all__ = ["Llama4VisionLayer", "Llama4VisionModel", "Llama4ForConditionalGeneration"]


class Llama4VisionLayer(nn.Module):
    """A pre-LayerNorm encoder layer: attention of A_v heads of H_v // A_v over every patch (no mask), q/k/v/o with
    biases, then an fc1/fc2 GELU MLP of I_v with biases. (transformers turns queries and keys by 2-D rotary angles of
    each patch's row and column: elementwise, no parameter and no matmul; left out here.)
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H_v, A_v = c["H_v"], c["A_v"]
        self.heads, width = A_v, A_v * (H_v // A_v)
        self.self_attn = nn.Module()
        for name, shape in (("q_proj", (H_v, width)), ("k_proj", (H_v, width)), ("v_proj", (H_v, width)),
                            ("o_proj", (width, H_v))):
            self.self_attn.add_module(name, nn.Linear(*shape))
        self.mlp = nn.Module()
        self.mlp.fc1, self.mlp.fc2 = nn.Linear(H_v, c["I_v"]), nn.Linear(c["I_v"], H_v)
        self.input_layernorm, self.post_attention_layernorm = nn.LayerNorm(H_v), nn.LayerNorm(H_v)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attn, h = self.self_attn, self.input_layernorm(x)
        q, k, v = (_heads(proj(h), self.heads) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
        x = x + attn.o_proj(_merge(_attend(q, k, v, causal=False)))
        return x + self.mlp.fc2(F.gelu(self.mlp.fc1(self.post_attention_layernorm(x))))


class Llama4VisionModel(nn.Module):
    """``vision_model.``: the class token and the position table (its own vectors, registered first), the patch matrix
    (``patch_embedding.linear``, H_v × C_v·p_v², no bias), LayerNorms before and after L_v layers, and the adapter
    (``vision_adapter.mlp``: fc1 M_in × I_v, fc2 M_out × M_out, no biases) after the pixel shuffle.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        H_v, p_v = c["H_v"], c["p_v"]
        self.patch, self.ratio = p_v, (c["T_v"] / c["P_v"]) ** 0.5 if "T_v" in c.sizes else 0.5
        self.class_embedding = nn.Parameter(torch.zeros(H_v))
        self.positional_embedding_vlm = nn.Parameter(torch.zeros(c["P_v"] + 1, H_v))
        self.patch_embedding = nn.Module()
        self.patch_embedding.linear = nn.Linear(c["C_v"] * p_v * p_v, H_v, bias=False)
        self.layernorm_pre, self.layernorm_post = nn.LayerNorm(H_v), nn.LayerNorm(H_v)
        self.model = nn.Module()
        self.model.layers = nn.ModuleList(Llama4VisionLayer(c) for _ in range(c["L_v"]))
        self.vision_adapter = nn.Module()
        self.vision_adapter.mlp = nn.Module()
        self.vision_adapter.mlp.fc1 = nn.Linear(c["I_v"], c["M_in"], bias=False)
        self.vision_adapter.mlp.fc2 = nn.Linear(c["M_out"], c["M_out"], bias=False)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """[images, C_v, R_v, R_v] -> [images, T_v, M_out]: patches, the class token last, the layers, the class token
        dropped, each block of 1/ratio × 1/ratio patches folded into one token, the adapter (GELU after each matrix)."""
        x = self.patch_embedding.linear(F.unfold(pixels, self.patch, stride=self.patch).transpose(1, 2))
        x = torch.cat((x, self.class_embedding.expand(x.shape[0], 1, -1)), dim=1) + self.positional_embedding_vlm
        x = self.layernorm_pre(x)
        for layer in self.model.layers:
            x = layer(x)
        x = self.layernorm_post(x)[:, :-1]
        images, patches, width = x.shape
        side, fold = int(patches ** 0.5), round(1 / self.ratio)
        x = x.reshape(images, side // fold, fold, side // fold, fold, width).permute(0, 1, 3, 4, 2, 5)
        x = x.reshape(images, (side // fold) ** 2, fold * fold * width)
        return F.gelu(self.vision_adapter.mlp.fc2(F.gelu(self.vision_adapter.mlp.fc1(x))))


class Llama4ForConditionalGeneration(nn.Module):
    """``Llama4ForConditionalGeneration``: the encoder (``vision_model``), the projector
    (``multi_modal_projector.linear_1``, H × O_v, no bias) and the language model (``language_model``, a whole
    :class:`~helpers.torch_ref.Llama4ForCausalLM`). ``forward`` reads text tokens; :meth:`image_features` an image.

    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.vision_model = Llama4VisionModel(c)
        self.multi_modal_projector = nn.Module()
        self.multi_modal_projector.linear_1 = nn.Linear(c["O_v"], c["H"], bias=False)
        self.language_model = Llama4ForCausalLM(c)

    def image_features(self, pixels: torch.Tensor) -> torch.Tensor:
        """Images through the encoder, the adapter and the projector: T_v tokens of width H each."""
        return self.multi_modal_projector.linear_1(self.vision_model(pixels))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.language_model(input_ids)
