"""Gemma 3 with its vision tower as plain torch modules: a SigLIP encoder, the multimodal projector, and Gemma 3's
text model (:mod:`.gemma3_text`) under ``model.language_model.``."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..config import ModelConfig
from .blocks import RMSNorm, _lm_head, _self_attention
from .gemma3_text import Gemma3TextModel

__all__ = ["SiglipVisionTower", "Gemma3MultiModalProjector", "Gemma3Model", "ConditionalGeneration",
           "Gemma3ForConditionalGeneration"]


class SiglipMLP(nn.Module):
    """fc2(gelu(fc1(x))): H_v → I_v → H_v, with biases.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.fc1 = nn.Linear(c["H_v"], c["I_v"])
        self.fc2 = nn.Linear(c["I_v"], c["H_v"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class SiglipAttention(nn.Module):
    """Bidirectional multi-head attention of A_v heads over the patches: k, v, q and out projections with biases.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.heads = c["A_v"]
        for name in ("k_proj", "v_proj", "q_proj", "out_proj"):
            setattr(self, name, nn.Linear(c["H_v"], c["H_v"]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_proj(_self_attention(x, self.heads, (self.q_proj, self.k_proj, self.v_proj), causal=False))


class SiglipEncoderLayer(nn.Module):
    """A pre-LayerNorm ViT layer: x + attention(LN(x)), then x + MLP(LN(x)).
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(c["H_v"])
        self.self_attn = SiglipAttention(c)
        self.layer_norm2 = nn.LayerNorm(c["H_v"])
        self.mlp = SiglipMLP(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.layer_norm1(x))
        return x + self.mlp(self.layer_norm2(x))


class SiglipEmbeddings(nn.Module):
    """A p_v × p_v patch convolution of C_v channels into H_v (with a bias), and a table of P_v positions.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.patch_embedding = nn.Conv2d(c["C_v"], c["H_v"], kernel_size=c["p_v"], stride=c["p_v"])
        self.position_embedding = nn.Embedding(c["P_v"], c["H_v"])

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        patches = self.patch_embedding(pixels).flatten(2).transpose(1, 2)  # [images, P_v, H_v]
        return patches + self.position_embedding.weight[None]


class SiglipPoolingHead(nn.Module):
    """SigLIP's attention pooling (``vision_use_head``): a learned probe token attends over the patches, then an MLP.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.probe = nn.Parameter(torch.randn(1, 1, c["H_v"]))
        self.attention = nn.MultiheadAttention(c["H_v"], c["A_v"], batch_first=True)
        self.layernorm = nn.LayerNorm(c["H_v"])
        self.mlp = SiglipMLP(c)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pooled = self.attention(self.probe.repeat(x.shape[0], 1, 1), x, x)[0]  # with its weights, as transformers
        return (pooled + self.mlp(self.layernorm(pooled)))[:, 0]


class SiglipEncoder(nn.Module):
    """``encoder.layers``: L_v encoder layers.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(SiglipEncoderLayer(c) for _ in range(c["L_v"]))


class SiglipVisionTower(nn.Module):
    """``model.vision_tower.`` (SigLIP's ``SiglipVisionModel``): patch and position embeddings, L_v layers, a final
    LayerNorm, and the pooling head where ``vision_use_head``.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embeddings = SiglipEmbeddings(c)
        self.encoder = SiglipEncoder(c)
        self.post_layernorm = nn.LayerNorm(c["H_v"])
        if c.flags["vision_config.vision_use_head"]:
            self.head = SiglipPoolingHead(c)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(pixels)
        for layer in self.encoder.layers:
            x = layer(x)
        x = self.post_layernorm(x)
        if hasattr(self, "head"):
            self.head(x)  # computed, as transformers computes it, and not passed on
        return x


class Gemma3MultiModalProjector(nn.Module):
    """The patches average-pooled to T_i soft tokens, an RMSNorm of H_v, one H_v × H matrix into the text width.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.mm_input_projection_weight = nn.Parameter(torch.zeros(c["H_v"], c["H"]))
        self.mm_soft_emb_norm = RMSNorm(c["H_v"])
        self.side, self.tokens_side = c["R_v"] // c["p_v"], int(c["T_i"] ** 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        grid = x.transpose(1, 2).reshape(x.shape[0], x.shape[2], self.side, self.side)
        kernel = self.side // self.tokens_side
        pooled = F.avg_pool2d(grid, kernel_size=kernel, stride=kernel).flatten(2).transpose(1, 2)
        return torch.matmul(self.mm_soft_emb_norm(pooled), self.mm_input_projection_weight)


class Gemma3Model(nn.Module):
    """``model.``: the vision tower, the projector, then Gemma 3's text model as ``language_model``.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.vision_tower = SiglipVisionTower(c)
        self.multi_modal_projector = Gemma3MultiModalProjector(c)
        self.language_model = Gemma3TextModel(c)


class ConditionalGeneration(nn.Module):
    """A vision-language model: ``model_class`` under ``model.`` (a tower, then ``language_model``) and ``lm_head``
    (tied to the language model's token table where the config says so); the forward pass runs text tokens.
    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class: type[nn.Module]

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.model = self.model_class(c)
        self.lm_head = _lm_head(c, self.model.language_model.embed_tokens)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.model.language_model(input_ids))


class Gemma3ForConditionalGeneration(ConditionalGeneration):
    """``Gemma3ForConditionalGeneration``: text tokens through the language model and its head (tied by default);
    :meth:`image_features` runs images through the tower and the projector.

    No notebook calls it; it works behind the helpers of ``11_todays_models``."""

    model_class = Gemma3Model

    def image_features(self, pixels: torch.Tensor) -> torch.Tensor:
        """[images, C_v, R_v, R_v] → [images, T_i, H]: the soft tokens that take the images' places in the text."""
        return self.model.multi_modal_projector(self.model.vision_tower(pixels))
